package adapterkit

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostfault"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

func TestV1StartInvokeStop(t *testing.T) {
	a := &testAdapter{}
	c := startV1(t, a)
	c.sendOp("start", startParams("runtime-1"))
	if got, want := c.recv(), `{"operation":"start","outcome":{"status":"succeeded","output":null}}`; got != want {
		t.Errorf("start response\n got %s\nwant %s", got, want)
	}
	c.sendOp("invoke", invokeParams("runtime-1", "invocation-1", "hi"))
	if got, want := c.recv(), `{"operation":"invoke","outcome":{"status":"succeeded","output":{"status":"succeeded","output":"hi"}}}`; got != want {
		t.Errorf("invoke response\n got %s\nwant %s", got, want)
	}
	c.sendOp("stop", hostproto.StopParams{RuntimeID: "runtime-1"})
	if got, want := c.recv(), `{"operation":"stop","outcome":{"status":"succeeded","output":null}}`; got != want {
		t.Errorf("stop response\n got %s\nwant %s", got, want)
	}
	c.recvEOF()
	if err := c.waitServed(); err != nil {
		t.Fatal(err)
	}
	if a.stops.Load() != 1 {
		t.Errorf("Stop called %d times", a.stops.Load())
	}
}

func TestV1NotStartedThenStart(t *testing.T) {
	c := startV1(t, &testAdapter{})
	c.sendOp("invoke", invokeParams("runtime-1", "i1", "x"))
	c.expectFailure("invoke", CodeNotStarted)
	// Not fatal: the host still starts.
	c.sendOp("start", startParams("runtime-1"))
	c.expectSuccess("start")
	c.sendOp("invoke", invokeParams("runtime-1", "i1", "x"))
	c.expectSuccess("invoke")
}

func TestV1RuntimeMismatch(t *testing.T) {
	c := startV1(t, &testAdapter{})
	c.sendOp("start", startParams("runtime-1"))
	c.expectSuccess("start")
	c.sendOp("invoke", invokeParams("runtime-2", "i1", "x"))
	c.expectFailure("invoke", CodeRuntimeMismatch)
	c.sendOp("invoke", invokeParams("runtime-1", "i1", "x"))
	c.expectSuccess("invoke")
	c.sendOp("stop", hostproto.StopParams{RuntimeID: "runtime-2"})
	c.expectFailure("stop", CodeRuntimeMismatch)
	c.recvEOF() // any stop ends the host
}

func TestV1FailedAfterPanic(t *testing.T) {
	var calls atomic.Int32
	a := &testAdapter{invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
		calls.Add(1)
		panic("adapter bug")
	}}
	c := startV1(t, a)
	c.sendOp("start", startParams("runtime-1"))
	c.expectSuccess("start")
	c.sendOp("invoke", invokeParams("runtime-1", "i1", "x"))
	r := c.expectFailure("invoke", CodeAdapterInvokeFailed)
	if r.Outcome.Error.Message != "Adapter failed during lifecycle invoke" || r.Outcome.Error.Retryable {
		t.Errorf("error %+v", r.Outcome.Error)
	}
	c.sendOp("invoke", invokeParams("runtime-1", "i2", "x"))
	c.expectFailure("invoke", CodeRuntimeFailed)
	if calls.Load() != 1 {
		t.Errorf("adapter invoked %d times", calls.Load())
	}
	c.sendOp("stop", hostproto.StopParams{RuntimeID: "runtime-1"})
	c.expectSuccess("stop")
	c.recvEOF()
	if a.stops.Load() != 1 {
		t.Error("session not stopped")
	}
}

func TestV1AdapterErrorFailsRuntime(t *testing.T) {
	a := &testAdapter{invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
		return contract.AgentRunResult{}, &Error{Code: "harness_gone", Message: "the harness exited", Retryable: true}
	}}
	c := startV1(t, a)
	c.sendOp("start", startParams("runtime-1"))
	c.expectSuccess("start")
	c.sendOp("invoke", invokeParams("runtime-1", "i1", "x"))
	r := c.expectFailure("invoke", "harness_gone")
	if !r.Outcome.Error.Retryable || r.Outcome.Error.Message != "the harness exited" {
		t.Errorf("error %+v", r.Outcome.Error)
	}
	c.sendOp("invoke", invokeParams("runtime-1", "i2", "x"))
	c.expectFailure("invoke", CodeRuntimeFailed)
}

func TestV1UnencodableErrorMetadata(t *testing.T) {
	a := &testAdapter{invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
		return contract.AgentRunResult{}, &Error{Code: "c", Message: "m", Metadata: map[string]any{"f": func() {}}}
	}}
	c := startV1(t, a)
	c.sendOp("start", startParams("runtime-1"))
	c.expectSuccess("start")
	c.sendOp("invoke", invokeParams("runtime-1", "i1", "x"))
	c.expectFailure("invoke", CodeInvalidResponse)
	c.sendOp("invoke", invokeParams("runtime-1", "i1", "x"))
	c.expectFailure("invoke", CodeRuntimeFailed)
}

// TestV1Requests checks the answers to malformed and out-of-order requests
// against upstream's TypeScript host (lifecycle.js): the operation and
// stage reported, the code, and whether the host ends.
func TestV1Requests(t *testing.T) {
	start := func() string {
		b, _ := json.Marshal(map[string]any{"operation": "start", "payload": startParams("runtime-1")})
		return string(b)
	}()
	for _, tc := range []struct {
		name     string
		started  bool
		line     string
		op, code string
		ends     bool
	}{
		{"not json", false, `{"operation":`, "start", CodeInvalidRequest, true},
		{"array", false, `[1,2]`, "start", CodeInvalidRequest, true},
		{"null", false, `null`, "start", CodeInvalidRequest, true},
		{"string", true, `"start"`, "start", CodeInvalidRequest, true},
		{"unknown op", true, `{"operation":"explode","payload":{}}`, "explode", CodeInvalidOperation, false},
		{"numeric op", true, `{"operation":5,"payload":{}}`, "start", CodeInvalidOperation, true},
		{"missing op", true, `{"payload":{}}`, "start", CodeInvalidOperation, true},
		{"payload array", true, `{"operation":"invoke","payload":[]}`, "invoke", CodeInvalidPayload, false},
		{"payload missing", true, `{"operation":"stop"}`, "stop", CodeInvalidPayload, true},
		{"no runtime id", true, `{"operation":"invoke","payload":{"request":{"input":1}}}`, "invoke", CodeInvalidRuntime, false},
		{"runtime id not a string", true, `{"operation":"invoke","payload":{"runtime_context":{"runtime_id":7},"request":{"input":1}}}`, "invoke", CodeInvalidRuntime, false},
		{"stop without id", true, `{"operation":"stop","payload":{}}`, "stop", CodeInvalidRuntime, true},
		{"second start", true, start, "start", CodeAlreadyStarted, true},
		{"stop before start", false, `{"operation":"stop","payload":{"runtime_id":"runtime-1"}}`, "stop", CodeNotStarted, true},
		{"invoke bad request", true, `{"operation":"invoke","payload":{"runtime_context":{"runtime_id":"runtime-1"},"request":"x"}}`, "invoke", CodeInvalidRequest, false},
		{"invoke no request", true, `{"operation":"invoke","payload":{"runtime_context":{"runtime_id":"runtime-1"}}}`, "invoke", CodeInvalidRequest, false},
		{"invoke bad context", true, `{"operation":"invoke","payload":{"runtime_context":{"runtime_id":"runtime-1","environment":[]},"request":{"input":1}}}`, "invoke", CodeInvalidContext, false},
		{"start no agent", false, `{"operation":"start","payload":{"base_dir":"/b","config":{},"runtime_context":{"runtime_id":"r"}}}`, "start", CodeInvalidStart, true},
		{"start no base dir", false, `{"operation":"start","payload":{"agent_name":"a","config":{},"runtime_context":{"runtime_id":"r"}}}`, "start", CodeInvalidStart, true},
		{"start bad config", false, `{"operation":"start","payload":{"agent_name":"a","base_dir":"/b","config":{"harness":7},"runtime_context":{"runtime_id":"r"}}}`, "start", CodeInvalidConfig, true},
		{"start no config", false, `{"operation":"start","payload":{"agent_name":"a","base_dir":"/b","runtime_context":{"runtime_id":"r"}}}`, "start", CodeInvalidConfig, true},
		{"start bad plan", false, `{"operation":"start","payload":{"agent_name":"a","base_dir":"/b","config":{},"runtime_context":{"runtime_id":"r"},"capability_plan":[]}}`, "start", CodeInvalidStart, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &testAdapter{}
			c := startV1(t, a)
			if tc.started {
				c.send(start)
				c.expectSuccess("start")
			}
			c.send(tc.line)
			c.expectFailure(tc.op, tc.code)
			if tc.ends {
				c.recvEOF()
				if err := c.waitServed(); err != nil {
					t.Fatal(err)
				}
				if tc.started && a.stops.Load() != 1 {
					t.Error("session not stopped")
				}
				return
			}
			// The host is still serving.
			c.sendOp("stop", hostproto.StopParams{RuntimeID: "runtime-1"})
			c.recvResp()
			c.recvEOF()
		})
	}
}

func TestV1StartFailureEndsHost(t *testing.T) {
	a := &testAdapter{start: func(context.Context, StartInput) error {
		return &Error{Code: "no_binary", Message: "harness binary missing", Metadata: map[string]any{"path": "/x"}}
	}}
	c := startV1(t, a)
	c.sendOp("start", startParams("runtime-1"))
	if got, want := c.recv(), `{"operation":"start","outcome":{"status":"failed","error":{"stage":"start","code":"no_binary","message":"harness binary missing","retryable":false,"metadata":{"path":"/x"}}}}`; got != want {
		t.Errorf("start failure\n got %s\nwant %s", got, want)
	}
	c.recvEOF()
}

func TestV1BlankLinesSkipped(t *testing.T) {
	c := startV1(t, &testAdapter{})
	c.send("")
	c.send("  \r")
	c.sendOp("start", startParams("runtime-1"))
	c.expectSuccess("start")
}

func TestV1EOFStopsSession(t *testing.T) {
	a := &testAdapter{}
	c := startV1(t, a)
	c.sendOp("start", startParams("runtime-1"))
	c.expectSuccess("start")
	c.in.Close()
	c.recvEOF()
	if err := c.waitServed(); err != nil {
		t.Fatal(err)
	}
	if a.stops.Load() != 1 {
		t.Error("session not stopped at EOF")
	}
}

// Upstream finishes the request in progress before acting on EOF. In a
// synctest bubble, Wait returns only when the host has done all it will do
// with the EOF while the invoke runs (a host that cancelled on EOF would
// have done so by then).
func TestV1EOFAfterInvokeStillAnswers(t *testing.T) {
	synctest.Test(t, testV1EOFAfterInvokeStillAnswers)
}

func testV1EOFAfterInvokeStillAnswers(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	a := &testAdapter{invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
		entered <- struct{}{}
		<-release
		return contract.AgentRunResult{Status: contract.StatusSucceeded, Output: ctx.Err() == nil}, nil
	}}
	c := startV1(t, a)
	c.sendOp("start", startParams("runtime-1"))
	c.expectSuccess("start")
	c.sendOp("invoke", invokeParams("runtime-1", "i1", "x"))
	<-entered
	c.in.Close()
	synctest.Wait()
	close(release)
	r := c.expectSuccess("invoke")
	if !strings.Contains(string(r.Outcome.Output), `"output":true`) {
		t.Errorf("invoke was cancelled by EOF: %s", r.Outcome.Output)
	}
	c.recvEOF()
}

func TestV1ContextCancelDuringInvoke(t *testing.T) {
	entered := make(chan struct{}, 1)
	var cause atomic.Value
	a := &testAdapter{invoke: hangUntilCancelled(entered, &cause)}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, a, serveOpts(WithProtocol(contract.HostProtocolV1), WithStreams(inR, outW))...)
	}()
	lines := make(chan string, 4)
	go func() {
		defer close(lines)
		b, _ := io.ReadAll(outR)
		for l := range strings.Lines(string(b)) {
			lines <- l
		}
	}()
	start, _ := json.Marshal(map[string]any{"operation": "start", "payload": startParams("runtime-1")})
	invoke, _ := json.Marshal(map[string]any{"operation": "invoke", "payload": invokeParams("runtime-1", "i1", "x")})
	go func() {
		inW.Write(append(start, '\n'))
		inW.Write(append(invoke, '\n'))
	}()
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
	var got []string
	for l := range lines {
		got = append(got, l)
	}
	if len(got) != 1 || !strings.Contains(got[0], `"operation":"start"`) {
		t.Errorf("output %q: want only the start answer", got)
	}
	if a.stops.Load() != 1 {
		t.Error("session not stopped")
	}
	if c := cause.Load(); !errors.Is(c.(error), context.Canceled) && c != ErrHostStopping {
		t.Errorf("cause %v", c)
	}
	inW.Close()
}

func TestV1EventsDroppedAndRawWriter(t *testing.T) {
	a := &testAdapter{invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
		inv.Events.Emit(Event{Kind: "progress"})
		if w := hostfault.Writer(ctx); w != nil {
			w.Write([]byte("raw line\n"))
		}
		return contract.AgentRunResult{Status: contract.StatusSucceeded, Output: "ok"}, nil
	}}
	c := startV1(t, a)
	c.sendOp("start", startParams("runtime-1"))
	c.expectSuccess("start")
	c.sendOp("invoke", invokeParams("runtime-1", "i1", "x"))
	if line := c.recv(); line != "raw line" {
		t.Errorf("raw writer wrote %q", line)
	}
	c.expectSuccess("invoke")
}
