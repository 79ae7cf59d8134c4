package scripted_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/scripted"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/wire"
)

const testTimeout = 10 * time.Second

func TestMain(m *testing.M) {
	// The host processes of subprocess_test.go serve the scripted adapter
	// on the real channel.
	adaptertest.Main(m, adaptertest.Serve(scripted.ID, scripted.New()))
}

func startParams(settings map[string]any) hostproto.StartParams {
	return hostproto.StartParams{
		AgentName:      "agent",
		BaseDir:        "/tmp",
		Config:         contract.AgentConfig{Harness: &contract.AgentHarnessConfig{Settings: settings}},
		RuntimeContext: contract.RuntimeContext{RuntimeID: "runtime-1", InvocationID: "invocation-0", RequestID: "request-0"},
	}
}

func invokeParams(invocationID string, input any) hostproto.InvokeParams {
	return hostproto.InvokeParams{
		RuntimeContext: contract.RuntimeContext{RuntimeID: "runtime-1", InvocationID: invocationID, RequestID: "request-" + invocationID},
		Request:        contract.AgentRunRequest{Input: input},
	}
}

// core is the core's side of an in-process v2 scripted host.
type core struct {
	t      *testing.T
	conn   *wire.Conn
	served chan error
	mu     sync.Mutex
	events []hostproto.EventParams
}

func startHost(t *testing.T, settings map[string]any) (*core, error) {
	t.Helper()
	return startHostWith(t, startParams(settings))
}

func startHostWith(t *testing.T, params hostproto.StartParams) (*core, error) {
	t.Helper()
	hostSide, coreSide := net.Pipe()
	c := &core{t: t, served: make(chan error, 1)}
	c.conn = wire.NewConn(coreSide, coreSide, wire.Options{Handler: wire.HandlerFunc(func(ctx context.Context, req *wire.Request) (any, error) {
		if id, evs, ok, err := hostproto.DecodeEventNotification(req.Method, req.Params); ok && err == nil {
			c.mu.Lock()
			for _, ev := range evs {
				c.events = append(c.events, hostproto.EventParams{InvocationID: id, Event: ev})
			}
			c.mu.Unlock()
		}
		return nil, nil
	})})
	runEnd := make(chan error, 1)
	go func() { runEnd <- c.conn.Run(context.Background()) }()
	go func() {
		c.served <- adapterkit.Serve(context.Background(), scripted.New(),
			adapterkit.WithProtocol(contract.HostProtocolV2), adapterkit.WithStreams(hostSide, hostSide),
			adapterkit.WithSignals(false), adapterkit.WithLogger(slog.New(slog.DiscardHandler)),
			adapterkit.WithStopGrace(time.Second))
	}()
	t.Cleanup(func() {
		c.conn.Close()
		select {
		case <-c.served:
		case <-time.After(testTimeout):
			t.Error("Serve did not return")
		}
		<-runEnd
	})
	return c, c.call(hostproto.OpStart, params, nil)
}

func mustStart(t *testing.T, settings map[string]any) *core {
	t.Helper()
	c, err := startHost(t, settings)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	return c
}

func (c *core) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	return c.conn.Call(ctx, method, params, result)
}

func (c *core) invoke(id string, input any) contract.AgentRunResult {
	c.t.Helper()
	var res contract.AgentRunResult
	if err := c.call(hostproto.OpInvoke, invokeParams(id, input), &res); err != nil {
		c.t.Fatalf("invoke %s: %v", id, err)
	}
	return res
}

func (c *core) takeEvents() []hostproto.EventParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	evs := c.events
	c.events = nil
	return evs
}

func errorData(t *testing.T, err error) hostproto.ErrorData {
	t.Helper()
	e, ok := errors.AsType[*wire.Error](err)
	if !ok || e.Code != hostproto.RPCLifecycleError {
		t.Fatalf("not a lifecycle error: %v", err)
	}
	var d hostproto.ErrorData
	if err := json.Unmarshal(e.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func usage(in, out, total uint64) *contract.RunUsage {
	return &contract.RunUsage{InputTokens: &in, OutputTokens: &out, TotalTokens: &total}
}

func TestDefaultResponseAndUsage(t *testing.T) {
	c := mustStart(t, nil)
	res := c.invoke("i1", "hello big world")
	want := contract.AgentRunResult{Status: "succeeded", Output: "scripted: hello big world", Usage: usage(3, 4, 7)}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("got %+v\nwant %+v", res, want)
	}
	res = c.invoke("i2", map[string]any{"q": 1})
	if res.Output != `scripted: {"q":1}` {
		t.Errorf("object input: %v", res.Output)
	}
}

func TestResponses(t *testing.T) {
	c := mustStart(t, map[string]any{
		"responses": []any{"first {input}", "turn {turn}"},
		"usage":     map[string]any{"input_tokens": 10, "output_tokens": 5},
	})
	for i, want := range []string{"first x", "turn 2", "turn 3"} {
		res := c.invoke(fmt.Sprint(i), "x")
		if res.Output != want {
			t.Errorf("turn %d: %v, want %q", i+1, res.Output, want)
		}
		if !reflect.DeepEqual(res.Usage, usage(10, 5, 15)) {
			t.Errorf("usage %+v", res.Usage)
		}
	}
	c2 := mustStart(t, map[string]any{"response": "{input} on turn {turn}"})
	if res := c2.invoke("i1", "{turn}"); res.Output != "{turn} on turn 1" {
		t.Errorf("template: %v", res.Output)
	}
}

func TestEventsAreChunksOfTheAnswer(t *testing.T) {
	for _, n := range []int{1, 3, 7, 40} {
		c := mustStart(t, map[string]any{"response": "héllo wörld, scripted", "events": n})
		res := c.invoke("i1", "x")
		evs := c.takeEvents()
		if len(evs) != n {
			t.Fatalf("%d events, want %d", len(evs), n)
		}
		var joined strings.Builder
		for i, ev := range evs {
			if ev.InvocationID != "i1" || ev.Event.Kind != scripted.EventKind || ev.Event.Metadata["index"] != float64(i) {
				t.Errorf("event %d: %+v", i, ev)
			}
			joined.WriteString(ev.Event.Message)
		}
		if joined.String() != res.Output {
			t.Errorf("events %q do not make the answer %q", joined.String(), res.Output)
		}
	}
}

func TestSlowStream(t *testing.T) {
	c := mustStart(t, map[string]any{"mode": "slow_stream", "event_interval_ms": 1})
	start := time.Now()
	res := c.invoke("i1", "x")
	if got := len(c.takeEvents()); got != scripted.SlowStreamEvents || res.Status != "succeeded" {
		t.Errorf("%d events, result %+v", got, res)
	}
	if time.Since(start) < scripted.SlowStreamEvents*time.Millisecond {
		t.Error("events were not spaced")
	}
	// Cancel in the middle of a slow stream.
	c2 := mustStart(t, map[string]any{"mode": "slow_stream", "events": 1000, "event_interval_ms": 5})
	done := make(chan contract.AgentRunResult, 1)
	go func() { done <- c2.invoke("i1", "x") }()
	time.Sleep(30 * time.Millisecond)
	if err := c2.call(hostproto.MethodCancel, hostproto.CancelParams{InvocationID: "i1"}, nil); err != nil {
		t.Fatal(err)
	}
	res = <-done
	if res.Status != "cancelled" || res.Output != "" || res.Error != nil {
		t.Errorf("cancelled stream: %+v", res)
	}
	if n := len(c2.takeEvents()); n == 0 || n >= 1000 {
		t.Errorf("%d events before cancellation", n)
	}
}

func TestDelayHonoursCancel(t *testing.T) {
	c := mustStart(t, map[string]any{"delay_ms": 3600000})
	done := make(chan contract.AgentRunResult, 1)
	go func() { done <- c.invoke("i1", "x") }()
	var h adapterkit.Health
	for h.Activity != "busy" {
		if err := c.call(hostproto.MethodHealth, hostproto.HealthParams{Level: "live"}, &h); err != nil {
			t.Fatal(err)
		}
	}
	if h.Outcome != "passed" || h.Source != "scripted" {
		t.Errorf("health during delay: %+v", h)
	}
	if err := c.call(hostproto.MethodCancel, hostproto.CancelParams{InvocationID: "i1"}, nil); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.Status != "cancelled" || res.Output != "" {
		t.Errorf("result %+v", res)
	}
	c2 := mustStart(t, map[string]any{"delay_ms": 20})
	start := time.Now()
	if res := c2.invoke("i1", "x"); res.Status != "succeeded" || time.Since(start) < 20*time.Millisecond {
		t.Errorf("delayed result %+v after %v", res, time.Since(start))
	}
}

func TestInvokeFailure(t *testing.T) {
	c := mustStart(t, map[string]any{"mode": "invoke_failure", "fail_on_turn": 2})
	if res := c.invoke("i1", "x"); res.Status != "succeeded" {
		t.Errorf("turn 1: %+v", res)
	}
	var h adapterkit.Health
	c.call(hostproto.MethodHealth, hostproto.HealthParams{Level: "ready"}, &h)
	if h.Outcome != "passed" {
		t.Errorf("ready before failure: %+v", h)
	}
	for _, id := range []string{"i2", "i3"} {
		res := c.invoke(id, "x")
		if res.Status != "failed" || res.Error == nil || res.Error.Code != scripted.CodeInvokeFailure || !res.Error.Retryable {
			t.Errorf("%s: %+v", id, res)
		}
	}
	c.call(hostproto.MethodHealth, hostproto.HealthParams{Level: "ready"}, &h)
	if h.Outcome != "failed" {
		t.Errorf("ready after failure: %+v", h)
	}
}

func TestStartFailure(t *testing.T) {
	_, err := startHost(t, map[string]any{"mode": "start_failure"})
	if d := errorData(t, err); d.Code != scripted.CodeStartFailure || d.Stage != "start" {
		t.Errorf("start failure: %+v", d)
	}
	for _, bad := range []map[string]any{{"mode": "weird"}, {"unknown": 1}, {"events": -1}, {"response": 5}} {
		_, err := startHost(t, bad)
		if d := errorData(t, err); d.Code != scripted.CodeInvalidSettings {
			t.Errorf("settings %v: %+v", bad, d)
		}
	}
}

func TestHangUntilCancelled(t *testing.T) {
	c := mustStart(t, map[string]any{"mode": "hang", "fail_on_turn": 2})
	c.invoke("i1", "x")
	done := make(chan contract.AgentRunResult, 1)
	go func() { done <- c.invoke("i2", "x") }()
	var h adapterkit.Health
	for h.Activity != "busy" {
		if err := c.call(hostproto.MethodHealth, hostproto.HealthParams{Level: "ready"}, &h); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case res := <-done:
		t.Fatalf("hang returned %+v", res)
	case <-time.After(20 * time.Millisecond):
	}
	c.call(hostproto.MethodCancel, hostproto.CancelParams{InvocationID: "i2"}, nil)
	if res := <-done; res.Status != "cancelled" {
		t.Errorf("result %+v", res)
	}
}

func TestHealthLevels(t *testing.T) {
	c := mustStart(t, nil)
	for level, want := range map[string]string{"live": "passed", "active": "passed", "ready": "passed", "deep": "unsupported"} {
		var h adapterkit.Health
		if err := c.call(hostproto.MethodHealth, hostproto.HealthParams{Level: level}, &h); err != nil {
			t.Fatal(err)
		}
		if h.Outcome != want || h.Activity != "idle" {
			t.Errorf("%s: %+v", level, h)
		}
	}
}

// TestMalformedOutput (v1, in-process): the garbage line replaces the
// answer, and the turn then waits for the host to be told to stop.
func TestMalformedOutput(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- adapterkit.Serve(ctx, scripted.New(), adapterkit.WithProtocol(contract.HostProtocolV1),
			adapterkit.WithStreams(inR, outW), adapterkit.WithSignals(false), adapterkit.WithLogger(slog.New(slog.DiscardHandler)))
	}()
	out := bufio.NewReader(outR)
	send := func(op string, payload any) {
		b, _ := json.Marshal(map[string]any{"operation": op, "payload": payload})
		go inW.Write(append(b, '\n'))
	}
	send("start", startParams(map[string]any{"mode": "malformed_output", "fail_on_turn": 2}))
	for i, want := range []string{`"operation":"start"`, `"output":"scripted: x"`, "this is not json"} {
		if i > 0 {
			send("invoke", invokeParams(fmt.Sprint("i", i), "x"))
		}
		line, err := out.ReadString('\n')
		if err != nil || !strings.Contains(line, want) {
			t.Fatalf("line %d: %q %v, want %s", i, line, err, want)
		}
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Serve did not return")
	}
	rest, _ := io.ReadAll(out)
	if len(rest) != 0 {
		t.Errorf("written after the garbage: %q", rest)
	}
	inW.Close()
}

func TestDescriptorsInSync(t *testing.T) {
	var v2, v1 map[string]any
	if err := json.Unmarshal(scripted.Descriptor(), &v2); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(scripted.DescriptorV1(), &v1); err != nil {
		t.Fatal(err)
	}
	if v2["adapter_id"] != scripted.ID || v1["adapter_id"] != scripted.IDv1 {
		t.Errorf("ids %v %v", v2["adapter_id"], v1["adapter_id"])
	}
	for _, d := range []map[string]any{v1, v2} {
		for _, k := range []string{"adapter_id", "runner", "capabilities"} {
			delete(d, k)
		}
	}
	if !reflect.DeepEqual(v1, v2) {
		t.Error("the v1 descriptor differs from the v2 one beyond id, runner and capabilities")
	}
	// Every settings field of the schema is a Settings field and back.
	props := v2["settings_schema"].(map[string]any)["properties"].(map[string]any)
	fields := map[string]bool{}
	st := reflect.TypeFor[scripted.Settings]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		fields[name] = true
	}
	for k := range maps.Keys(props) {
		if !fields[k] {
			t.Errorf("schema property %q is not in Settings", k)
		}
		delete(fields, k)
	}
	for k := range fields {
		t.Errorf("Settings field %q is not in the schema", k)
	}
	modes := props["mode"].(map[string]any)["enum"].([]any)
	want := []any{scripted.ModeOK, scripted.ModeStartFailure, scripted.ModeInvokeFailure, scripted.ModeMalformedOutput, scripted.ModeHang, scripted.ModeCrashMidInvoke, scripted.ModeSlowStream, scripted.ModeExitOnStart, scripted.ModeModel}
	if !reflect.DeepEqual(modes, want) {
		t.Errorf("modes %v, want %v", modes, want)
	}
}
