package adapterkit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostfault"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/wire"
)

func TestV2StartInvokeStop(t *testing.T) {
	a := &testAdapter{}
	c := startV2(t, a)
	var sr json.RawMessage
	c.mustCall(hostproto.OpStart, startParams("runtime-1"), &sr)
	if string(sr) != "{}" {
		t.Errorf("start result %s, want {}", sr)
	}
	a.mu.Lock()
	in := a.startInput
	a.mu.Unlock()
	if in.AgentName != "agent" || in.BaseDir != "/tmp/base" || in.RuntimeContext.RuntimeID != "runtime-1" || in.Config.Harness.Settings["k"] != "v" {
		t.Errorf("start input %+v", in)
	}
	var res contract.AgentRunResult
	c.mustCall(hostproto.OpInvoke, invokeParams("runtime-1", "invocation-1", "hello"), &res)
	if res.Status != contract.StatusSucceeded || res.Output != "hello" {
		t.Errorf("invoke result %+v", res)
	}
	var stop json.RawMessage
	c.mustCall(hostproto.OpStop, hostproto.StopParams{RuntimeID: "runtime-1"}, &stop)
	if string(stop) != "null" {
		t.Errorf("stop result %s", stop)
	}
	if err := c.waitServed(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if n := a.stops.Load(); n != 1 {
		t.Errorf("Stop called %d times", n)
	}
	if n := a.starts.Load(); n != 1 {
		t.Errorf("Start called %d times", n)
	}
}

func TestV2Errors(t *testing.T) {
	a := &testAdapter{invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
		if inv.Request.Input == "lifecycle" {
			return contract.AgentRunResult{}, &Error{Code: "my_code", Message: "mine", Retryable: true, Metadata: map[string]any{"x": 1.0}}
		}
		return contract.AgentRunResult{Status: contract.StatusSucceeded, Output: "ok"}, nil
	}}
	c := startV2(t, a)

	d := lifecycleCode(t, c.call(hostproto.OpInvoke, invokeParams("runtime-1", "i1", "x"), nil))
	if d.Code != CodeNotStarted || d.Stage != "invoke" {
		t.Errorf("invoke before start: %+v", d)
	}
	d = lifecycleCode(t, c.call(hostproto.MethodHealth, hostproto.HealthParams{Level: "live"}, nil))
	if d.Code != CodeNotStarted {
		t.Errorf("health before start: %+v", d)
	}
	d = lifecycleCode(t, c.call(hostproto.OpStart, []int{1}, nil))
	if d.Code != CodeInvalidRequest {
		t.Errorf("start with array params: %+v", d)
	}
	d = lifecycleCode(t, c.call(hostproto.OpStart, map[string]any{"agent_name": "a", "base_dir": "b", "config": map[string]any{}, "runtime_context": map[string]any{"runtime_id": "runtime-1", "artifacts": 5}}, nil))
	if d.Code != CodeInvalidContext {
		t.Errorf("start with a bad runtime context: %+v", d)
	}
	p := startParams("")
	d = lifecycleCode(t, c.call(hostproto.OpStart, p, nil))
	if d.Code != CodeInvalidRuntime {
		t.Errorf("start without runtime id: %+v", d)
	}
	c.start("runtime-1")
	d = lifecycleCode(t, c.call(hostproto.OpStart, startParams("runtime-1"), nil))
	if d.Code != CodeAlreadyStarted {
		t.Errorf("second start: %+v", d)
	}
	d = lifecycleCode(t, c.call(hostproto.OpInvoke, invokeParams("runtime-2", "i1", "x"), nil))
	if d.Code != CodeRuntimeMismatch {
		t.Errorf("other runtime: %+v", d)
	}
	d = lifecycleCode(t, c.call(hostproto.OpInvoke, map[string]any{"runtime_context": runtimeContext("runtime-1", "i1"), "request": "nope"}, nil))
	if d.Code != CodeInvalidRequest {
		t.Errorf("bad request: %+v", d)
	}
	d = lifecycleCode(t, c.call(hostproto.MethodCancel, map[string]any{}, nil))
	if d.Code != CodeInvalidRequest {
		t.Errorf("cancel without id: %+v", d)
	}
	var cr hostproto.CancelResult
	c.mustCall(hostproto.MethodCancel, hostproto.CancelParams{InvocationID: "nothing"}, &cr)
	if cr.Cancelled {
		t.Error("cancel of nothing reported cancelled")
	}
	err := c.call("frobnicate", nil, nil)
	if e, ok := errors.AsType[*wire.Error](err); !ok || e.Code != wire.CodeMethodNotFound {
		t.Errorf("unknown method: %v", err)
	}
	// A normal invoke still works after all those.
	var res contract.AgentRunResult
	c.mustCall(hostproto.OpInvoke, invokeParams("runtime-1", "i2", "x"), &res)
	if res.Output != "ok" {
		t.Errorf("invoke: %+v", res)
	}
	// An adapter *Error passes through and fails the runtime.
	d = lifecycleCode(t, c.call(hostproto.OpInvoke, invokeParams("runtime-1", "i3", "lifecycle"), nil))
	if d.Code != "my_code" || d.Message != "mine" || !d.Retryable || d.Metadata["x"] != 1.0 || d.Stage != "invoke" {
		t.Errorf("adapter error: %+v", d)
	}
	d = lifecycleCode(t, c.call(hostproto.OpInvoke, invokeParams("runtime-1", "i4", "x"), nil))
	if d.Code != CodeRuntimeFailed {
		t.Errorf("invoke after failure: %+v", d)
	}
	d = lifecycleCode(t, c.call(hostproto.OpStop, hostproto.StopParams{RuntimeID: "runtime-2"}, nil))
	if d.Code != CodeRuntimeMismatch {
		t.Errorf("stop of another runtime: %+v", d)
	}
	// Every stop ends the host, and the session is stopped on the way out.
	if err := c.waitServed(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if a.stops.Load() != 1 {
		t.Errorf("Stop called %d times", a.stops.Load())
	}
}

func TestV2BusyAndCancel(t *testing.T) {
	entered := make(chan struct{}, 1)
	var cause atomic.Value
	a := &testAdapter{invoke: hangUntilCancelled(entered, &cause)}
	c := startV2(t, a)
	c.start("runtime-1")

	first := make(chan error, 1)
	var res contract.AgentRunResult
	go func() { first <- c.call(hostproto.OpInvoke, invokeParams("runtime-1", "invocation-1", "x"), &res) }()
	<-entered

	d := lifecycleCode(t, c.call(hostproto.OpInvoke, invokeParams("runtime-1", "invocation-2", "x"), nil))
	if d.Code != CodeRuntimeBusy || !d.Retryable {
		t.Errorf("second invoke: %+v", d)
	}
	var cr hostproto.CancelResult
	c.mustCall(hostproto.MethodCancel, hostproto.CancelParams{InvocationID: "invocation-2"}, &cr)
	if cr.Cancelled {
		t.Error("cancel of the wrong invocation reported cancelled")
	}
	c.mustCall(hostproto.MethodCancel, hostproto.CancelParams{InvocationID: "invocation-1"}, &cr)
	if !cr.Cancelled {
		t.Error("cancel of the running invocation not reported")
	}
	if err := <-first; err != nil {
		t.Fatalf("first invoke: %v", err)
	}
	if res.Status != contract.StatusCancelled {
		t.Errorf("cancelled invoke: %+v", res)
	}
	if got := cause.Load(); got != ErrInvocationCancelled {
		t.Errorf("cause %v, want ErrInvocationCancelled", got)
	}
	// The runtime takes the next turn.
	a.invoke = nil
	c.mustCall(hostproto.OpInvoke, invokeParams("runtime-1", "invocation-3", "again"), &res)
	if res.Output != "again" {
		t.Errorf("invoke after cancel: %+v", res)
	}
}

// TestV2CancelBeforeItsInvoke: requests are handled concurrently, so a
// cancel the core sends right after an invoke can be handled before that
// invoke is. The invoke still ends cancelled, and its adapter sees a
// cancelled context; a cancel of a finished invocation changes nothing.
func TestV2CancelBeforeItsInvoke(t *testing.T) {
	var cause atomic.Value
	a := &testAdapter{invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
		<-ctx.Done()
		cause.Store(context.Cause(ctx))
		return contract.AgentRunResult{}, ctx.Err()
	}}
	c := startV2(t, a)
	c.start("runtime-1")
	var cr hostproto.CancelResult
	c.mustCall(hostproto.MethodCancel, hostproto.CancelParams{InvocationID: "i1"}, &cr)
	if cr.Cancelled {
		t.Error("cancel of an invocation not yet running reported cancelled")
	}
	var res contract.AgentRunResult
	c.mustCall(hostproto.OpInvoke, invokeParams("runtime-1", "i1", "x"), &res)
	if res.Status != contract.StatusCancelled {
		t.Errorf("invoke cancelled before it arrived: %+v", res)
	}
	if got := cause.Load(); got != ErrInvocationCancelled {
		t.Errorf("cause %v, want ErrInvocationCancelled", got)
	}
	// A cancel of the finished invocation does not reach the next one.
	c.mustCall(hostproto.MethodCancel, hostproto.CancelParams{InvocationID: "i1"}, &cr)
	a.invoke = nil
	c.mustCall(hostproto.OpInvoke, invokeParams("runtime-1", "i2", "again"), &res)
	if res.Status != contract.StatusSucceeded || res.Output != "again" {
		t.Errorf("invoke after a late cancel: %+v", res)
	}
}

func TestV2CtxErrIsCancelled(t *testing.T) {
	entered := make(chan struct{}, 1)
	a := &testAdapter{invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
		entered <- struct{}{}
		<-ctx.Done()
		return contract.AgentRunResult{}, fmt.Errorf("turn: %w", ctx.Err())
	}}
	c := startV2(t, a)
	c.start("runtime-1")
	done := make(chan error, 1)
	var res contract.AgentRunResult
	go func() { done <- c.call(hostproto.OpInvoke, invokeParams("runtime-1", "i1", "x"), &res) }()
	<-entered
	c.mustCall(hostproto.MethodCancel, hostproto.CancelParams{InvocationID: "i1"}, nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res.Status != contract.StatusCancelled {
		t.Errorf("result %+v", res)
	}
	// Not a failure: the runtime still works.
	a.invoke = nil
	c.mustCall(hostproto.OpInvoke, invokeParams("runtime-1", "i2", "x"), &res)
}

func TestV2HealthDuringInvoke(t *testing.T) {
	entered := make(chan struct{}, 1)
	a := &testAdapter{invoke: hangUntilCancelled(entered, nil)}
	a.health = func(ctx context.Context, level string) (Health, error) {
		return Health{Outcome: contract.OutcomePassed, Metadata: map[string]any{"level": level}}, nil
	}
	c := startV2(t, a)
	c.start("runtime-1")

	var h Health
	c.mustCall(hostproto.MethodHealth, hostproto.HealthParams{Level: "ready", TimeoutMillis: 1000}, &h)
	if h.Outcome != "passed" || h.Activity != "idle" || h.Source != "adapter" || h.ObservedAtMillis == 0 || h.Metadata["level"] != "ready" {
		t.Errorf("idle health: %+v", h)
	}
	done := make(chan error, 1)
	go func() { done <- c.call(hostproto.OpInvoke, invokeParams("runtime-1", "i1", "x"), nil) }()
	<-entered
	for _, level := range []string{"live", "active", "ready", ""} {
		c.mustCall(hostproto.MethodHealth, hostproto.HealthParams{Level: level}, &h)
		if h.Outcome != "passed" || h.Activity != "busy" {
			t.Errorf("health %q during invoke: %+v", level, h)
		}
	}
	c.mustCall(hostproto.MethodHealth, hostproto.HealthParams{Level: "bogus"}, &h)
	if h.Outcome != "unsupported" || h.ReasonCode != contract.ReasonUnsupportedLevel {
		t.Errorf("unknown level: %+v", h)
	}
	c.mustCall(hostproto.MethodCancel, hostproto.CancelParams{InvocationID: "i1"}, nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestV2HealthTimeoutAndErrors(t *testing.T) {
	a := &testAdapter{}
	a.health = func(ctx context.Context, level string) (Health, error) {
		switch level {
		case "live":
			<-ctx.Done()
			return Health{}, ctx.Err()
		case "active":
			return Health{}, errors.ErrUnsupported
		}
		panic("health panic")
	}
	c := startV2(t, a)
	c.start("runtime-1")
	var h Health
	c.mustCall(hostproto.MethodHealth, hostproto.HealthParams{Level: "live", TimeoutMillis: 100}, &h)
	if h.Outcome != "unknown" || h.ReasonCode != contract.ReasonProbeTimeout {
		t.Errorf("timed out health: %+v", h)
	}
	c.mustCall(hostproto.MethodHealth, hostproto.HealthParams{Level: "active"}, &h)
	if h.Outcome != "unsupported" {
		t.Errorf("unsupported health: %+v", h)
	}
	c.mustCall(hostproto.MethodHealth, hostproto.HealthParams{Level: "ready"}, &h)
	if h.Outcome != "unknown" || h.ReasonCode != contract.ReasonProbeError {
		t.Errorf("panicking health: %+v", h)
	}
}

func TestV2EventsBeforeResult(t *testing.T) {
	const n = 500
	var late Emitter
	a := &testAdapter{invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
		for i := range n {
			inv.Events.Emit(Event{Kind: "output_delta", Message: fmt.Sprint(i), Metadata: map[string]any{"index": i}})
		}
		late = inv.Events
		return contract.AgentRunResult{Status: contract.StatusSucceeded, Output: "done"}, nil
	}}
	c := startV2(t, a)
	c.start("runtime-1")
	var res contract.AgentRunResult
	c.mustCall(hostproto.OpInvoke, invokeParams("runtime-1", "invocation-7", "x"), &res)
	// wire delivers the notifications received before a response before
	// Call returns.
	evs := c.eventsSnapshot()
	if len(evs) != n {
		t.Fatalf("%d events before the result, want %d", len(evs), n)
	}
	for i, ev := range evs {
		if ev.InvocationID != "invocation-7" || ev.Event.Kind != "output_delta" || ev.Event.Message != fmt.Sprint(i) || ev.Event.TimestampMillis == 0 {
			t.Fatalf("event %d: %+v", i, ev)
		}
	}
	// A tight loop of 500 emits is sent in batches, not one frame each.
	c.mu.Lock()
	batches := c.batches
	c.mu.Unlock()
	if batches == 0 {
		t.Error("500 events emitted in a loop were sent without batching")
	}
	late.Emit(Event{Kind: "late"})
	c.mustCall(hostproto.MethodHealth, hostproto.HealthParams{}, nil)
	if got := len(c.eventsSnapshot()); got != n {
		t.Errorf("an event emitted after Invoke returned was sent (%d events)", got)
	}
}

func TestV2PanicFailsRuntime(t *testing.T) {
	a := &testAdapter{invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
		panic("adapter bug")
	}}
	c := startV2(t, a)
	c.start("runtime-1")
	d := lifecycleCode(t, c.call(hostproto.OpInvoke, invokeParams("runtime-1", "i1", "x"), nil))
	if d.Code != CodeAdapterInvokeFailed || d.Stage != "invoke" {
		t.Errorf("panic: %+v", d)
	}
	d = lifecycleCode(t, c.call(hostproto.OpInvoke, invokeParams("runtime-1", "i2", "x"), nil))
	if d.Code != CodeRuntimeFailed {
		t.Errorf("after panic: %+v", d)
	}
	var h Health
	c.mustCall(hostproto.MethodHealth, hostproto.HealthParams{Level: "ready"}, &h)
	if h.Outcome != "failed" {
		t.Errorf("health after panic: %+v", h)
	}
	c.mustCall(hostproto.OpStop, hostproto.StopParams{RuntimeID: "runtime-1"}, nil)
	if err := c.waitServed(); err != nil {
		t.Fatal(err)
	}
	if a.stops.Load() != 1 {
		t.Error("session not stopped")
	}
}

func TestV2InvalidResultFailsRuntime(t *testing.T) {
	for name, res := range map[string]contract.AgentRunResult{
		"status":      {Status: "done"},
		"no error":    {Status: contract.StatusFailed},
		"error":       {Status: contract.StatusSucceeded, Error: &contract.AgentRunError{Code: "c", Message: "m"}},
		"blank code":  {Status: contract.StatusFailed, Error: &contract.AgentRunError{Code: " ", Message: "m"}},
		"artifact":    {Status: contract.StatusSucceeded, Artifacts: []contract.AgentArtifact{{Name: "a", Kind: "log", Path: "../x"}}},
		"abs path":    {Status: contract.StatusSucceeded, Artifacts: []contract.AgentArtifact{{Name: "a", Kind: "log", Path: "/x"}}},
		"unencodable": {Status: contract.StatusSucceeded, Output: func() {}},
	} {
		t.Run(name, func(t *testing.T) {
			a := &testAdapter{invoke: func(context.Context, Invocation) (contract.AgentRunResult, error) { return res, nil }}
			c := startV2(t, a)
			c.start("runtime-1")
			d := lifecycleCode(t, c.call(hostproto.OpInvoke, invokeParams("runtime-1", "i1", "x"), nil))
			if d.Code != CodeInvalidResponse {
				t.Errorf("invalid result: %+v", d)
			}
			d = lifecycleCode(t, c.call(hostproto.OpInvoke, invokeParams("runtime-1", "i2", "x"), nil))
			if d.Code != CodeRuntimeFailed {
				t.Errorf("after invalid result: %+v", d)
			}
		})
	}
}

func TestV2FailedResultKeepsRuntime(t *testing.T) {
	a := &testAdapter{invoke: func(context.Context, Invocation) (contract.AgentRunResult, error) {
		return contract.AgentRunResult{Status: contract.StatusFailed, Error: &contract.AgentRunError{Code: "model_error", Message: "m"}}, nil
	}}
	c := startV2(t, a)
	c.start("runtime-1")
	for i := range 2 {
		var res contract.AgentRunResult
		c.mustCall(hostproto.OpInvoke, invokeParams("runtime-1", fmt.Sprint(i), "x"), &res)
		if res.Status != "failed" || res.Error.Code != "model_error" {
			t.Errorf("turn %d: %+v", i, res)
		}
	}
}

func TestV2StopDuringInvoke(t *testing.T) {
	entered := make(chan struct{}, 1)
	var cause atomic.Value
	a := &testAdapter{invoke: hangUntilCancelled(entered, &cause)}
	c := startV2(t, a)
	c.start("runtime-1")
	invDone := make(chan error, 1)
	var res contract.AgentRunResult
	go func() { invDone <- c.call(hostproto.OpInvoke, invokeParams("runtime-1", "i1", "x"), &res) }()
	<-entered
	c.mustCall(hostproto.OpStop, hostproto.StopParams{RuntimeID: "runtime-1"}, nil)
	// The cancelled invoke is answered too, before the host ends.
	select {
	case err := <-invDone:
		if err != nil || res.Status != contract.StatusCancelled {
			t.Errorf("invoke: %v %+v", err, res)
		}
	case <-time.After(testTimeout):
		t.Error("the cancelled invoke was never answered")
	}
	if got := cause.Load(); got != ErrHostStopping {
		t.Errorf("cause %v, want ErrHostStopping", got)
	}
	if err := c.waitServed(); err != nil {
		t.Fatal(err)
	}
	if a.stops.Load() != 1 {
		t.Error("session not stopped")
	}
}

func TestV2EOFStopsSession(t *testing.T) {
	entered := make(chan struct{}, 1)
	a := &testAdapter{invoke: hangUntilCancelled(entered, nil)}
	c := startV2(t, a)
	c.start("runtime-1")
	go c.call(hostproto.OpInvoke, invokeParams("runtime-1", "i1", "x"), nil)
	<-entered
	c.conn.Close()
	if err := c.waitServed(); err != nil {
		t.Fatalf("Serve after EOF: %v", err)
	}
	if a.stops.Load() != 1 {
		t.Error("session not stopped after EOF")
	}
}

func TestV2StartFailureEndsHost(t *testing.T) {
	for name, startErr := range map[string]error{
		"lifecycle": &Error{Code: "no_binary", Message: "harness binary missing"},
		"plain":     errors.New("boom"),
	} {
		t.Run(name, func(t *testing.T) {
			a := &testAdapter{start: func(context.Context, StartInput) error { return startErr }}
			c := startV2(t, a)
			d := lifecycleCode(t, c.call(hostproto.OpStart, startParams("runtime-1"), nil))
			want := "no_binary"
			if name == "plain" {
				want = CodeAdapterStartFailed
			}
			if d.Code != want || d.Stage != "start" {
				t.Errorf("start failure: %+v", d)
			}
			if err := c.waitServed(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestV2StopBeforeStart(t *testing.T) {
	c := startV2(t, &testAdapter{})
	c.mustCall(hostproto.OpStop, hostproto.StopParams{RuntimeID: "runtime-1"}, nil)
	if err := c.waitServed(); err != nil {
		t.Fatal(err)
	}
}

func TestV2GarbageFromCore(t *testing.T) {
	a := &testAdapter{}
	hostSide, coreSide := net.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), a, serveOpts(WithProtocol(contract.HostProtocolV2), WithStreams(hostSide, hostSide))...)
	}()
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(coreSide)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	start, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "start", "params": startParams("runtime-1")})
	if _, err := coreSide.Write(append(start, '\n')); err != nil {
		t.Fatal(err)
	}
	if line := <-lines; !strings.Contains(line, `"result":{}`) {
		t.Fatalf("start answer %s", line)
	}
	if _, err := coreSide.Write([]byte("garbage\n")); err != nil {
		t.Fatal(err)
	}
	if line := <-lines; !strings.Contains(line, `"code":-32700`) {
		t.Errorf("answer to garbage: %s", line)
	}
	select {
	case err := <-served:
		if !errors.Is(err, wire.ErrProtocol) {
			t.Errorf("Serve: %v, want a protocol error", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Serve did not return")
	}
	if a.stops.Load() != 1 {
		t.Error("session not stopped")
	}
	coreSide.Close()
	for range lines {
	}
}

func TestV2ContextCancel(t *testing.T) {
	entered := make(chan struct{}, 1)
	a := &testAdapter{invoke: hangUntilCancelled(entered, nil)}
	hostSide, coreSide := net.Pipe()
	core := wire.NewConn(coreSide, coreSide, wire.Options{})
	runEnd := make(chan error, 1)
	go func() { runEnd <- core.Run(context.Background()) }()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, a, serveOpts(WithProtocol(contract.HostProtocolV2), WithStreams(hostSide, hostSide))...)
	}()
	call := func(method string, params any) error {
		cctx, ccancel := context.WithTimeout(context.Background(), testTimeout)
		defer ccancel()
		return core.Call(cctx, method, params, nil)
	}
	if err := call(hostproto.OpStart, startParams("runtime-1")); err != nil {
		t.Fatal(err)
	}
	go call(hostproto.OpInvoke, invokeParams("runtime-1", "i1", "x"))
	<-entered
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Serve did not return")
	}
	if a.stops.Load() != 1 {
		t.Error("session not stopped")
	}
	core.Close()
	<-runEnd
}

func TestHostfaultWriter(t *testing.T) {
	if hostfault.Writer(context.Background()) != nil {
		t.Error("writer for a foreign context")
	}
	got := make(chan bool, 1)
	a := &testAdapter{invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
		got <- hostfault.Writer(ctx) != nil
		return contract.AgentRunResult{Status: contract.StatusSucceeded}, nil
	}}
	c := startV2(t, a)
	c.start("runtime-1")
	c.mustCall(hostproto.OpInvoke, invokeParams("runtime-1", "i1", "x"), nil)
	if !<-got {
		t.Error("no protocol writer in the invoke context")
	}
}

func TestUnknownProtocol(t *testing.T) {
	err := Serve(context.Background(), &testAdapter{}, WithProtocol("fabric.host/v9"), WithStreams(nil, nil))
	if err == nil {
		t.Fatal("Serve accepted an unknown protocol")
	}
	if err := Serve(context.Background(), nil); err == nil {
		t.Fatal("Serve accepted a nil adapter")
	}
}
