package adapterkit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/wire"
)

const testTimeout = 10 * time.Second

// testAdapter is an Adapter whose behaviour the test chooses. Nil funcs
// echo the input.
type testAdapter struct {
	start  func(ctx context.Context, in StartInput) error
	invoke func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error)
	health func(ctx context.Context, level string) (Health, error)
	stop   func(ctx context.Context) error

	starts, stops atomic.Int32
	startInput    StartInput
	mu            sync.Mutex
}

func (a *testAdapter) Start(ctx context.Context, in StartInput) (Session, error) {
	a.starts.Add(1)
	a.mu.Lock()
	a.startInput = in
	a.mu.Unlock()
	if a.start != nil {
		if err := a.start(ctx, in); err != nil {
			return nil, err
		}
	}
	return (*testSession)(a), nil
}

type testSession testAdapter

func (s *testSession) Invoke(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
	if s.invoke != nil {
		return s.invoke(ctx, inv)
	}
	return contract.AgentRunResult{Status: contract.StatusSucceeded, Output: inv.Request.Input}, nil
}

func (s *testSession) Health(ctx context.Context, level string) (Health, error) {
	if s.health != nil {
		return s.health(ctx, level)
	}
	return Health{Outcome: contract.OutcomePassed, Source: "test"}, nil
}

func (s *testSession) Stop(ctx context.Context) error {
	s.stops.Add(1)
	if s.stop != nil {
		return s.stop(ctx)
	}
	return nil
}

// hangUntilCancelled is an invoke that signals entered and returns a
// cancelled result when its context ends, recording the cause.
func hangUntilCancelled(entered chan<- struct{}, cause *atomic.Value) func(context.Context, Invocation) (contract.AgentRunResult, error) {
	return func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
		entered <- struct{}{}
		<-ctx.Done()
		if cause != nil {
			cause.Store(context.Cause(ctx))
		}
		return contract.AgentRunResult{Status: contract.StatusCancelled, Output: ""}, nil
	}
}

func startParams(runtimeID string) hostproto.StartParams {
	return hostproto.StartParams{
		AgentName: "agent",
		BaseDir:   "/tmp/base",
		Config: contract.AgentConfig{Harness: &contract.AgentHarnessConfig{
			Settings: map[string]any{"k": "v"},
		}},
		RuntimeContext: runtimeContext(runtimeID, "invocation-0"),
	}
}

func runtimeContext(runtimeID, invocationID string) contract.RuntimeContext {
	return contract.RuntimeContext{
		RuntimeID:    runtimeID,
		InvocationID: invocationID,
		RequestID:    "request-" + invocationID,
		Environment:  contract.EnvironmentHandle{EnvironmentID: "env", Provider: "local", ControlLocation: "external_control", Ownership: "fabric_owned"},
	}
}

func invokeParams(runtimeID, invocationID string, input any) hostproto.InvokeParams {
	return hostproto.InvokeParams{
		RuntimeContext: runtimeContext(runtimeID, invocationID),
		Request:        contract.AgentRunRequest{Input: input},
	}
}

func serveOpts(extra ...ServeOption) []ServeOption {
	return append([]ServeOption{
		WithSignals(false),
		WithStopGrace(500 * time.Millisecond),
		WithStopTimeout(2 * time.Second),
		WithLogger(discardLogger()),
	}, extra...)
}

// ---- v2 ----

// v2Core is the core's side of an in-process v2 host.
type v2Core struct {
	t      testing.TB
	conn   *wire.Conn
	served chan error // Serve's result
	runEnd chan error // the core conn's Run result

	mu      sync.Mutex
	events  []hostproto.EventParams
	batches int // "events" notifications received
}

func startV2(t testing.TB, a Adapter, opts ...ServeOption) *v2Core {
	t.Helper()
	hostSide, coreSide := net.Pipe()
	c := &v2Core{t: t, served: make(chan error, 1), runEnd: make(chan error, 1)}
	c.conn = wire.NewConn(coreSide, coreSide, wire.Options{Handler: wire.HandlerFunc(func(ctx context.Context, req *wire.Request) (any, error) {
		if id, evs, ok, err := hostproto.DecodeEventNotification(req.Method, req.Params); ok {
			if err != nil {
				t.Errorf("%s params: %v", req.Method, err)
			}
			c.mu.Lock()
			if req.Method == hostproto.NotifyEvents {
				c.batches++
			}
			for _, ev := range evs {
				c.events = append(c.events, hostproto.EventParams{InvocationID: id, Event: ev})
			}
			c.mu.Unlock()
		}
		return nil, nil
	})})
	ctx := context.Background()
	go func() { c.runEnd <- c.conn.Run(ctx) }()
	go func() {
		c.served <- Serve(ctx, a, serveOpts(append([]ServeOption{WithProtocol(contract.HostProtocolV2), WithStreams(hostSide, hostSide)}, opts...)...)...)
	}()
	t.Cleanup(func() {
		c.conn.Close()
		c.waitServed()
		<-c.runEnd
	})
	return c
}

func (c *v2Core) waitServed() error {
	c.t.Helper()
	return waitServed(c.t, c.served)
}

// waitServed waits for Serve to return on served (once: later waits see
// the channel closed) and returns its error.
func waitServed(t testing.TB, served chan error) error {
	t.Helper()
	select {
	case err, ok := <-served:
		if ok {
			close(served)
		}
		return err
	case <-time.After(testTimeout):
		t.Fatal("Serve did not return")
		return nil
	}
}

func (c *v2Core) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	return c.conn.Call(ctx, method, params, result)
}

func (c *v2Core) mustCall(method string, params, result any) {
	c.t.Helper()
	if err := c.call(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *v2Core) start(runtimeID string) {
	c.t.Helper()
	c.mustCall(hostproto.OpStart, startParams(runtimeID), nil)
}

func (c *v2Core) eventsSnapshot() []hostproto.EventParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]hostproto.EventParams(nil), c.events...)
}

// lifecycleCode returns the lifecycle error code of a v2 call error.
func lifecycleCode(t *testing.T, err error) hostproto.ErrorData {
	t.Helper()
	e, ok := errors.AsType[*wire.Error](err)
	if !ok {
		t.Fatalf("error %v is not a JSON-RPC error", err)
	}
	if e.Code != hostproto.RPCLifecycleError {
		t.Fatalf("JSON-RPC code %d, want %d (%v)", e.Code, hostproto.RPCLifecycleError, e)
	}
	var d hostproto.ErrorData
	if err := json.Unmarshal(e.Data, &d); err != nil {
		t.Fatalf("error data %s: %v", e.Data, err)
	}
	return d
}

// ---- v1 ----

// v1Core is the core's side of an in-process v1 host.
type v1Core struct {
	t      *testing.T
	in     *io.PipeWriter
	out    *bufio.Reader
	outR   *io.PipeReader
	served chan error
}

func startV1(t *testing.T, a Adapter, opts ...ServeOption) *v1Core {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &v1Core{t: t, in: inW, out: bufio.NewReader(outR), outR: outR, served: make(chan error, 1)}
	go func() {
		c.served <- Serve(context.Background(), a, serveOpts(append([]ServeOption{WithProtocol(contract.HostProtocolV1), WithStreams(inR, outW)}, opts...)...)...)
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		c.waitServed()
	})
	return c
}

func (c *v1Core) waitServed() error {
	c.t.Helper()
	return waitServed(c.t, c.served)
}

func (c *v1Core) send(line string) {
	c.t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c.in, line+"\n")
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			c.t.Fatalf("send: %v", err)
		}
	case <-time.After(testTimeout):
		c.t.Fatal("send blocked")
	}
}

func (c *v1Core) sendOp(op string, payload any) {
	c.t.Helper()
	b, err := json.Marshal(map[string]any{"operation": op, "payload": payload})
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(string(b))
}

// recv reads one response line.
func (c *v1Core) recv() string {
	c.t.Helper()
	type res struct {
		line string
		err  error
	}
	done := make(chan res, 1)
	go func() {
		line, err := c.out.ReadString('\n')
		done <- res{line, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			c.t.Fatalf("recv: %v (partial %q)", r.err, r.line)
		}
		return r.line[:len(r.line)-1]
	case <-time.After(testTimeout):
		c.t.Fatal("no response")
		return ""
	}
}

// recvEOF expects the host to close its output.
func (c *v1Core) recvEOF() {
	c.t.Helper()
	done := make(chan error, 1)
	go func() {
		line, err := c.out.ReadString('\n')
		if err == nil {
			err = errors.New("unexpected line " + line)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != io.EOF {
			c.t.Fatalf("want EOF, got %v", err)
		}
	case <-time.After(testTimeout):
		c.t.Fatal("host did not close its output")
	}
}

// v1Resp is a decoded v1 response.
type v1Resp struct {
	Operation string `json:"operation"`
	Outcome   struct {
		Status string               `json:"status"`
		Output json.RawMessage      `json:"output"`
		Error  *hostproto.ErrorData `json:"error"`
	} `json:"outcome"`
}

func (c *v1Core) recvResp() v1Resp {
	c.t.Helper()
	line := c.recv()
	if _, err := wire.DecodeV1Response([]byte(line)); err != nil {
		c.t.Fatalf("response %s: %v", line, err)
	}
	var r v1Resp
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		c.t.Fatalf("response %s: %v", line, err)
	}
	return r
}

func (c *v1Core) expectFailure(op, code string) v1Resp {
	c.t.Helper()
	r := c.recvResp()
	if r.Operation != op || r.Outcome.Status != "failed" || r.Outcome.Error == nil || r.Outcome.Error.Code != code {
		c.t.Fatalf("got %+v (error %+v), want %s failure %s", r, r.Outcome.Error, op, code)
	}
	if r.Outcome.Error.Stage != op {
		c.t.Fatalf("stage %q, want %q", r.Outcome.Error.Stage, op)
	}
	return r
}

func (c *v1Core) expectSuccess(op string) v1Resp {
	c.t.Helper()
	r := c.recvResp()
	if r.Operation != op || r.Outcome.Status != "succeeded" {
		c.t.Fatalf("got %+v (error %+v), want %s success", r, r.Outcome.Error, op)
	}
	return r
}
