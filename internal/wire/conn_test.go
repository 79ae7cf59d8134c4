package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

const waitLong = 5 * time.Second

// runConn runs c.Run in a goroutine and returns its result channel. Cleanup
// closes the conn and waits for Run.
func runConn(t *testing.T, c *Conn) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		done <- c.Run(context.Background())
		close(done) // later receives (the cleanup's) see nil at once
	}()
	t.Cleanup(func() {
		c.Close()
		select {
		case <-done:
		case <-time.After(waitLong):
			t.Error("Run did not return after Close")
		}
	})
	return done
}

// connPair returns two running Conns connected by in-memory pipes.
func connPair(t *testing.T, a, b Options) (*Conn, *Conn) {
	t.Helper()
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	ca, cb := NewConn(ar, aw, a), NewConn(br, bw, b)
	runConn(t, ca)
	runConn(t, cb)
	return ca, cb
}

// rawPeer is the other end of a Conn, driven frame by frame.
type rawPeer struct {
	t  *testing.T
	fr *FrameReader
	fw *FrameWriter
	r  *io.PipeReader
	w  *io.PipeWriter
}

func newRawPeer(t *testing.T, opts Options) (*Conn, *rawPeer, <-chan error) {
	t.Helper()
	cr, pw := io.Pipe()
	pr, cw := io.Pipe()
	c := NewConn(cr, cw, opts)
	p := &rawPeer{t: t, fr: NewFrameReader(pr, 0), fw: NewFrameWriter(pw, 1<<30), r: pr, w: pw}
	t.Cleanup(func() { pr.Close(); pw.Close() })
	return c, p, runConn(t, c)
}

func (p *rawPeer) send(frame string) {
	p.t.Helper()
	if err := p.fw.WriteFrame([]byte(frame)); err != nil {
		p.t.Fatalf("raw send: %v", err)
	}
}

// recv reads one frame, failing the test after waitLong.
func (p *rawPeer) recv() string {
	p.t.Helper()
	type res struct {
		f   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		f, err := p.fr.ReadFrame()
		ch <- res{string(f), err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			p.t.Fatalf("raw recv: %v", r.err)
		}
		return r.f
	case <-time.After(waitLong):
		p.r.Close()
		<-ch
		p.t.Fatal("raw recv: timeout")
		return ""
	}
}

func (p *rawPeer) recvJSON() map[string]any {
	p.t.Helper()
	f := p.recv()
	var m map[string]any
	if err := json.Unmarshal([]byte(f), &m); err != nil {
		p.t.Fatalf("raw recv %q: %v", f, err)
	}
	return m
}

// waitFor receives from ch, failing t if nothing comes within waitLong.
func waitFor[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLong):
		t.Fatal("timed out")
		panic("unreachable")
	}
}

type addParams struct{ A, B int }

func mathHandler() Handler {
	return HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		switch req.Method {
		case "add":
			var p addParams
			if err := req.UnmarshalParams(&p); err != nil {
				return nil, err
			}
			return p.A + p.B, nil
		case "echo":
			return req.Params, nil
		case "nothing":
			return nil, nil
		case "fail":
			return nil, fmt.Errorf("wrapped: %w", &Error{Code: 1001, Message: "runtime busy", Data: json.RawMessage(`{"code":"runtime_busy"}`)})
		case "crash":
			return nil, errors.New("plain failure")
		}
		return nil, &Error{Code: CodeMethodNotFound, Message: "no " + req.Method}
	})
}

func TestCallResponse(t *testing.T) {
	a, _ := connPair(t, Options{}, Options{Handler: mathHandler()})
	ctx := context.Background()

	var sum int
	if err := a.Call(ctx, "add", addParams{2, 3}, &sum); err != nil || sum != 5 {
		t.Fatalf("add = %d, %v", sum, err)
	}
	var echo map[string]any
	if err := a.Call(ctx, "echo", map[string]any{"s": "<&>\n", "n": 1.5}, &echo); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"s": "<&>\n", "n": 1.5}, echo); diff != "" {
		t.Errorf("echo (-want +got):\n%s", diff)
	}
	var raw json.RawMessage
	if err := a.Call(ctx, "nothing", nil, &raw); err != nil || string(raw) != "null" {
		t.Fatalf("nothing = %s, %v", raw, err)
	}
	if err := a.Call(ctx, "add", addParams{1, 1}, nil); err != nil {
		t.Fatalf("nil result: %v", err)
	}
	var wrong string
	if err := a.Call(ctx, "add", addParams{1, 1}, &wrong); err == nil {
		t.Fatal("decoding a number into a string succeeded")
	}
}

func TestCallErrors(t *testing.T) {
	a, _ := connPair(t, Options{}, Options{Handler: mathHandler()})
	ctx := context.Background()
	tests := []struct {
		method string
		params any
		want   *Error
	}{
		{"fail", nil, &Error{Code: 1001, Message: "runtime busy", Data: json.RawMessage(`{"code":"runtime_busy"}`)}},
		{"crash", nil, &Error{Code: CodeInternalError, Message: "plain failure"}},
		{"missing", nil, &Error{Code: CodeMethodNotFound, Message: "no missing"}},
		{"add", "not an object", &Error{Code: CodeInvalidParams}},
		{"add", nil, &Error{Code: CodeInvalidParams, Message: "add: missing params"}},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			err := a.Call(ctx, tt.method, tt.params, nil)
			got, ok := errors.AsType[*Error](err)
			if !ok {
				t.Fatalf("err = %v (%T), want *Error", err, err)
			}
			if got.Code != tt.want.Code || (tt.want.Message != "" && got.Message != tt.want.Message) || string(got.Data) != string(tt.want.Data) {
				t.Errorf("err = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestNilHandler(t *testing.T) {
	a, b := connPair(t, Options{}, Options{})
	err := a.Call(context.Background(), "anything", nil, nil)
	if e, ok := errors.AsType[*Error](err); !ok || e.Code != CodeMethodNotFound {
		t.Fatalf("err = %v, want method not found", err)
	}
	// Notifications to a nil handler are dropped without harm.
	if err := a.Notify(context.Background(), "event", map[string]int{"x": 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.Call(context.Background(), "x", nil, nil); err == nil {
		t.Fatal("want error")
	}
}

// TestConcurrentCallsOutOfOrder answers calls in reverse order and checks
// that every caller gets its own result.
func TestConcurrentCallsOutOfOrder(t *testing.T) {
	const n = 32
	gates := make([]chan struct{}, n)
	for i := range gates {
		gates[i] = make(chan struct{})
	}
	started := make(chan int, n)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		var i int
		if err := req.UnmarshalParams(&i); err != nil {
			return nil, err
		}
		started <- i
		select {
		case <-gates[i]:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return i * 10, nil
	})
	a, _ := connPair(t, Options{}, Options{Handler: h})

	returned := make(chan int) // the call that returned
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var got int
			if err := a.Call(context.Background(), "work", i, &got); err != nil {
				t.Error(err)
			} else if got != i*10 {
				t.Errorf("call %d got %d", i, got)
			}
			returned <- i
		})
	}
	for range n {
		waitFor(t, started) // all handlers running at once
	}
	for i := n - 1; i >= 0; i-- {
		close(gates[i])
		// This call, and no other, returns before the next is released.
		if got := waitFor(t, returned); got != i {
			t.Fatalf("call %d returned when call %d was answered", got, i)
		}
	}
	wg.Wait()
}

// TestHealthWhileInvokeBlocked: a long invoke must not block health.
func TestHealthWhileInvokeBlocked(t *testing.T) {
	release := make(chan struct{})
	invoking := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		switch req.Method {
		case "invoke":
			close(invoking)
			select {
			case <-release:
				return "done", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case "health":
			return map[string]string{"activity": "busy"}, nil
		}
		return nil, NewError(CodeMethodNotFound, req.Method)
	})
	core, _ := connPair(t, Options{}, Options{Handler: h})

	invokeDone := make(chan error, 1)
	go func() {
		var s string
		invokeDone <- core.Call(context.Background(), "invoke", map[string]string{"invocation_id": "invocation-1"}, &s)
	}()
	<-invoking
	for range 10 {
		var health map[string]string
		ctx, cancel := context.WithTimeout(context.Background(), waitLong)
		err := core.Call(ctx, "health", nil, &health)
		cancel()
		if err != nil || health["activity"] != "busy" {
			t.Fatalf("health = %v, %v", health, err)
		}
	}
	select {
	case err := <-invokeDone:
		t.Fatalf("invoke finished early: %v", err)
	default:
	}
	close(release)
	if err := waitFor(t, invokeDone); err != nil {
		t.Fatal(err)
	}
}

// recorder is a notification handler that records params in order. If
// full is set, it is closed when want notifications have been recorded.
type recorder struct {
	mu     sync.Mutex
	got    []int
	delay  time.Duration
	active int
	maxAct int
	want   int
	full   chan struct{}
}

func (r *recorder) Handle(ctx context.Context, req *Request) (any, error) {
	r.mu.Lock()
	r.active++
	r.maxAct = max(r.maxAct, r.active)
	r.mu.Unlock()
	if r.delay > 0 {
		time.Sleep(r.delay)
	}
	var p struct{ Seq int }
	err := json.Unmarshal(req.Params, &p)
	r.mu.Lock()
	r.active--
	if err == nil && req.IsNotification() {
		r.got = append(r.got, p.Seq)
		if r.full != nil && len(r.got) == r.want {
			close(r.full)
		}
	}
	r.mu.Unlock()
	return nil, err
}

func (r *recorder) snapshot() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.got...)
}

func TestNotificationsInOrder(t *testing.T) {
	const n = 5000
	rec := &recorder{want: n, full: make(chan struct{})}
	a, b := connPair(t, Options{Handler: rec, InboundQueue: 8}, Options{})
	for i := range n {
		if err := b.Notify(context.Background(), "event", map[string]int{"seq": i}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-rec.full:
	case <-time.After(waitLong):
		t.Fatalf("got %d notifications, want %d", len(rec.snapshot()), n)
	}
	got := rec.snapshot()
	for i, s := range got {
		if s != i {
			t.Fatalf("notification %d has seq %d", i, s)
		}
	}
	if rec.maxAct != 1 {
		t.Errorf("notification handler ran %d at once, want 1", rec.maxAct)
	}
	_ = a
}

// TestEventsBeforeResult: notifications the peer sends before answering a
// call are handled before the call returns, even with a slow handler.
func TestEventsBeforeResult(t *testing.T) {
	rec := &recorder{delay: 200 * time.Microsecond}
	var host *Conn
	hostReady := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		<-hostReady
		var n int
		if err := req.UnmarshalParams(&n); err != nil {
			return nil, err
		}
		for i := range n {
			if err := host.Notify(ctx, "event", map[string]int{"seq": i}); err != nil {
				return nil, err
			}
		}
		return n, nil
	})
	core, hc := connPair(t, Options{Handler: rec}, Options{Handler: h})
	host = hc
	close(hostReady)
	for round, n := range []int{0, 1, 50, 300} {
		var got int
		if err := core.Call(context.Background(), "invoke", n, &got); err != nil {
			t.Fatal(err)
		}
		events := rec.snapshot()
		if len(events) != n {
			t.Fatalf("round %d: call returned after %d of %d events", round, len(events), n)
		}
		for i, s := range events {
			if s != i {
				t.Fatalf("round %d: event %d has seq %d", round, i, s)
			}
		}
		rec.mu.Lock()
		rec.got = nil
		rec.mu.Unlock()
	}
}

// pendingCalls is the number of calls waiting for their response.
func pendingCalls(c *Conn) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// slowQuick answers "slow" with "late" once release is closed (or its
// context ends) and anything else with "quick" at once.
func slowQuick(release <-chan struct{}) Handler {
	return HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "slow" {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return "late", nil
		}
		return "quick", nil
	})
}

// TestCallContextCancel: a call waiting for its response returns when its
// context ends, and the conn goes on working. In a synctest bubble, Wait
// returns once the call is durably blocked waiting, so cancel reaches that
// wait (not Call's early check of ctx).
func TestCallContextCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		a, b := connPair(t, Options{}, Options{Handler: slowQuick(release)})

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Call(ctx, "slow", nil, nil) }()
		synctest.Wait()
		if pendingCalls(a) != 1 || b.active.Load() != 1 {
			t.Fatalf("%d calls pending, %d handlers running: want the slow call waiting", pendingCalls(a), b.active.Load())
		}
		cancel()
		if err := waitFor(t, done); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		close(release) // the late response arrives and is dropped

		var s string
		if err := a.Call(context.Background(), "quick", nil, &s); err != nil || s != "quick" {
			t.Fatalf("after cancel: %q, %v", s, err)
		}
		if n := pendingCalls(a); n != 0 {
			t.Errorf("%d pending calls left", n)
		}
	})
}

func TestCallContextDoneSendsNothing(t *testing.T) {
	c, p, _ := newRawPeer(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Call(ctx, "invoke", nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call err = %v", err)
	}
	if err := c.Notify(ctx, "event", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Notify err = %v", err)
	}
	// The first frame the peer sees is the next call's.
	go c.Call(context.Background(), "probe", nil, nil)
	m := p.recvJSON()
	if m["method"] != "probe" {
		t.Fatalf("first frame %v, want the probe", m)
	}
}

func TestWireFormat(t *testing.T) {
	c, p, _ := newRawPeer(t, Options{})
	go c.Call(context.Background(), "invoke", map[string]string{"invocation_id": "invocation-1"}, nil)
	if got, want := p.recv(), `{"jsonrpc":"2.0","id":1,"method":"invoke","params":{"invocation_id":"invocation-1"}}`; got != want {
		t.Errorf("call frame\n got %s\nwant %s", got, want)
	}
	if err := c.Notify(context.Background(), "event", nil); err != nil {
		t.Fatal(err)
	}
	if got, want := p.recv(), `{"jsonrpc":"2.0","method":"event"}`; got != want {
		t.Errorf("notify frame\n got %s\nwant %s", got, want)
	}
	if err := c.Notify(context.Background(), "event", json.RawMessage(nil)); err != nil {
		t.Fatal(err)
	}
	if got, want := p.recv(), `{"jsonrpc":"2.0","method":"event"}`; got != want {
		t.Errorf("nil raw params frame\n got %s\nwant %s", got, want)
	}
	if err := c.Notify(context.Background(), "log", json.RawMessage("{\n \"level\": \"info\"\n}")); err != nil {
		t.Fatal(err)
	}
	if got, want := p.recv(), `{"jsonrpc":"2.0","method":"log","params":{"level":"info"}}`; got != want {
		t.Errorf("raw params frame\n got %s\nwant %s", got, want)
	}
}

func TestServerWireFormat(t *testing.T) {
	_, p, _ := newRawPeer(t, Options{Handler: mathHandler()})
	tests := []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":7,"method":"add","params":{"A":1,"B":2}}`, `{"jsonrpc":"2.0","id":7,"result":3}`},
		{`{"jsonrpc":"2.0","id":"req-x","method":"nothing"}`, `{"jsonrpc":"2.0","id":"req-x","result":null}`},
		{`{"jsonrpc":"2.0","id":1.5e3,"method":"nothing"}`, `{"jsonrpc":"2.0","id":1.5e3,"result":null}`},
		{`{"jsonrpc":"2.0","id":-3,"method":"fail"}`, `{"jsonrpc":"2.0","id":-3,"error":{"code":1001,"message":"runtime busy","data":{"code":"runtime_busy"}}}`},
		// Invalid messages get -32600 and the conn carries on.
		{`[]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message must be a JSON object, got array"}}`},
		{`"str"`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message must be a JSON object, got string"}}`},
		{`{}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"neither a request, a notification nor a response"}}`},
		{`{"jsonrpc":"2.0","id":4}`, `{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"neither a request, a notification nor a response"}}`},
		{`{"jsonrpc":"1.0","id":5,"method":"add"}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"jsonrpc must be \"2.0\""}}`},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"add"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"id must be a string or a number"}}`},
		{`{"jsonrpc":"2.0","id":null,"method":"add"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"id must be a string or a number"}}`},
		{`{"jsonrpc":"2.0","id":6,"method":""}`, `{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"neither a request, a notification nor a response"}}`},
		{`{"jsonrpc":"2.0","id":8,"method":9}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"method must be a string"}}`},
		{`{"jsonrpc":2,"id":"a","method":"add"}`, `{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"jsonrpc must be a string"}}`},
		// Keys are exact, escapes are decoded, the last duplicate wins.
		{`{"jsonrpc":"2.0","id":10,"METHOD":"add","method":"nothing"}`, `{"jsonrpc":"2.0","id":10,"result":null}`},
		{`{"jsonrpc":"2.0","id":11,"m\u0065thod":"add","params":{"A":1,"B":1}}`, `{"jsonrpc":"2.0","id":11,"result":2}`},
		{`{"jsonrpc":"2.0","id":12,"method":"add","params":{"A":1,"B":1},"params":{"A":5,"B":5}}`, `{"jsonrpc":"2.0","id":12,"result":10}`},
	}
	for _, tt := range tests {
		p.send(tt.in)
		if got := p.recv(); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
	// Responses to ids never sent, error reports without id and notifications
	// without jsonrpc are ignored; the conn still answers afterwards.
	p.send(`{"jsonrpc":"2.0","id":99,"result":1}`)
	p.send(`{"jsonrpc":"2.0","id":"x","result":1}`)
	p.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"you sent junk"}}`)
	p.send(`{"method":"event"}`)
	p.send(`{"jsonrpc":"2.0","id":9,"method":"add","params":{"A":4,"B":4}}`)
	if got, want := p.recv(), `{"jsonrpc":"2.0","id":9,"result":8}`; got != want {
		t.Errorf("after ignored frames\n got %s\nwant %s", got, want)
	}
}

func TestBadResponses(t *testing.T) {
	tests := []struct {
		name, resp string
		check      func(error) bool
	}{
		{"both result and error", `{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}`, func(err error) bool { return errors.Is(err, ErrProtocol) }},
		{"no jsonrpc", `{"id":1,"result":1}`, func(err error) bool { return errors.Is(err, ErrProtocol) }},
		{"error not object", `{"jsonrpc":"2.0","id":1,"error":"boom"}`, func(err error) bool { return errors.Is(err, ErrProtocol) }},
		{"error wrong types", `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":1}}`, func(err error) bool { return errors.Is(err, ErrProtocol) }},
		{"null result is a result", `{"jsonrpc":"2.0","id":1,"result":null}`, func(err error) bool { return err == nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p, _ := newRawPeer(t, Options{})
			done := make(chan error, 1)
			go func() { done <- c.Call(context.Background(), "m", nil, nil) }()
			p.recv()
			p.send(tt.resp)
			if err := waitFor(t, done); !tt.check(err) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestParseErrorIsFatal(t *testing.T) {
	c, p, runDone := newRawPeer(t, Options{})
	callDone := make(chan error, 1)
	go func() { callDone <- c.Call(context.Background(), "m", nil, nil) }()
	p.recv()
	p.send(`{"jsonrpc":"2.0","id":1,"result":`) // cut short: not JSON
	if got, want := p.recv(), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	err := waitFor(t, runDone)
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("Run = %v, want ErrProtocol", err)
	}
	err = waitFor(t, callDone)
	if !errors.Is(err, ErrConnClosed) || !errors.Is(err, ErrProtocol) {
		t.Fatalf("pending call = %v, want ErrConnClosed wrapping ErrProtocol", err)
	}
	if err := c.Call(context.Background(), "m", nil, nil); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("call after end = %v", err)
	}
	if err := c.Notify(context.Background(), "m", nil); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("notify after end = %v", err)
	}
}

func TestOversizedFrameIsFatal(t *testing.T) {
	c, p, runDone := newRawPeer(t, Options{MaxFrame: 1024})
	callDone := make(chan error, 1)
	go func() { callDone <- c.Call(context.Background(), "m", nil, nil) }()
	p.recv()
	// Exactly at the limit is fine.
	atLimit := `{"jsonrpc":"2.0","method":"event","params":"` + strings.Repeat("a", 1024-46) + `"}`
	if len(atLimit) != 1024 {
		t.Fatalf("test frame is %d bytes", len(atLimit))
	}
	p.send(atLimit)
	sent := make(chan struct{})
	go func() { // blocks until the conn closes its end: it stops reading
		defer close(sent)
		_ = p.fw.WriteFrame([]byte(strings.Repeat("x", 4096)))
	}()
	defer func() { <-sent }()
	err := waitFor(t, runDone)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Run = %v, want ErrFrameTooLarge", err)
	}
	err = waitFor(t, callDone)
	if !errors.Is(err, ErrConnClosed) || !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("pending call = %v", err)
	}
}

func TestOutgoingLimit(t *testing.T) {
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		return strings.Repeat("r", 2000), nil
	})
	a, _ := connPair(t, Options{MaxFrame: 1024}, Options{MaxFrame: 1024, Handler: h})
	err := a.Call(context.Background(), "m", strings.Repeat("p", 2000), nil)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("big params: %v", err)
	}
	if err := a.Notify(context.Background(), "m", strings.Repeat("p", 2000)); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("big notify: %v", err)
	}
	err = a.Call(context.Background(), "m", nil, nil)
	if e, ok := errors.AsType[*Error](err); !ok || e.Code != CodeInternalError {
		t.Fatalf("big result: %v, want internal error", err)
	}
	// The conn is still usable.
	if err := a.Call(context.Background(), "m", nil, nil); err == nil {
		t.Fatal("want error again")
	}
}

func TestPeerCloseFailsPendingCalls(t *testing.T) {
	blocked := make(chan struct{}, 8)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		blocked <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	a, b := connPair(t, Options{}, Options{Handler: h})
	const n = 5
	errs := make(chan error, n)
	for range n {
		go func() { errs <- a.Call(context.Background(), "invoke", nil, nil) }()
	}
	for range n {
		<-blocked
	}
	b.Close()
	for range n {
		err := waitFor(t, errs)
		if !errors.Is(err, ErrConnClosed) || !errors.Is(err, io.EOF) {
			t.Fatalf("pending call = %v, want ErrConnClosed wrapping io.EOF", err)
		}
	}
}

func TestCloseFailsPendingCalls(t *testing.T) {
	synctest.Test(t, testCloseFailsPendingCalls)
}

func testCloseFailsPendingCalls(t *testing.T) {
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	a, b := NewConn(ar, aw, Options{}), NewConn(br, bw, Options{Handler: h})
	aDone := runConn(t, a)
	runConn(t, b)

	callDone := make(chan error, 1)
	go func() { callDone <- a.Call(context.Background(), "invoke", nil, nil) }()
	synctest.Wait()
	if pendingCalls(a) != 1 {
		t.Fatal("the call is not waiting")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	if err := waitFor(t, callDone); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("pending call = %v", err)
	}
	if err := waitFor(t, aDone); err != nil {
		t.Fatalf("Run after Close = %v, want nil", err)
	}
	if err := a.Call(context.Background(), "x", nil, nil); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("Call after Close = %v", err)
	}
	if err := a.Notify(context.Background(), "x", nil); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("Notify after Close = %v", err)
	}
}

func TestRunContextCancel(t *testing.T) {
	synctest.Test(t, testRunContextCancel)
}

func testRunContextCancel(t *testing.T) {
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	a, b := NewConn(ar, aw, Options{Handler: h}), NewConn(br, bw, Options{Handler: h})
	runConn(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	aDone := make(chan error, 1)
	go func() { aDone <- a.Run(ctx) }()

	// b calls into a's blocking handler; a's Call to b is pending too.
	bCall := make(chan error, 1)
	go func() { bCall <- b.Call(context.Background(), "invoke", nil, nil) }()
	aCall := make(chan error, 1)
	go func() { aCall <- a.Call(context.Background(), "never", nil, nil) }()
	synctest.Wait()
	if pendingCalls(a) != 1 || pendingCalls(b) != 1 || a.active.Load() != 1 || b.active.Load() != 1 {
		t.Fatal("the calls are not both waiting on their handlers")
	}
	cancel()
	if err := waitFor(t, aDone); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if err := waitFor(t, aCall); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("a's call = %v", err)
	}
	if err := waitFor(t, bCall); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("b's call = %v", err)
	}
}

func TestRunOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _, _ := newRawPeer(t, Options{})
		synctest.Wait() // the first Run is reading
		if err := c.Run(context.Background()); err == nil {
			t.Fatal("second Run succeeded")
		}
	})
}

func TestCloseBeforeRun(t *testing.T) {
	synctest.Test(t, testCloseBeforeRun)
}

func testCloseBeforeRun(t *testing.T) {
	r, w := io.Pipe()
	c := NewConn(r, w, Options{})
	callDone := make(chan error, 1)
	go func() { callDone <- c.Call(context.Background(), "m", nil, nil) }()
	synctest.Wait()
	if pendingCalls(c) != 1 {
		t.Fatal("the call is not waiting")
	}
	c.Close()
	if err := waitFor(t, callDone); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("call = %v", err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatalf("Run after Close = %v", err)
	}
}

func TestCallBeforeRun(t *testing.T) {
	synctest.Test(t, testCallBeforeRun)
}

func testCallBeforeRun(t *testing.T) {
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	a, b := NewConn(ar, aw, Options{}), NewConn(br, bw, Options{Handler: mathHandler()})
	runConn(t, b)
	done := make(chan error, 1)
	var sum int
	go func() { done <- a.Call(context.Background(), "add", addParams{20, 22}, &sum) }()
	synctest.Wait()
	if pendingCalls(a) != 1 {
		t.Fatal("the call is not waiting")
	}
	runConn(t, a)
	if err := waitFor(t, done); err != nil || sum != 42 {
		t.Fatalf("sum = %d, %v", sum, err)
	}
}

// TestBlockedWriter: the peer never reads; calls must still honour their
// context, and Close must unblock Run.
func TestBlockedWriter(t *testing.T) {
	cr, _ := io.Pipe() // nothing is ever written to the conn
	pr, cw := io.Pipe()
	defer pr.Close()
	c := NewConn(cr, cw, Options{OutboundQueue: 1})
	runDone := make(chan error, 1)
	go func() { runDone <- c.Run(context.Background()) }()
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		start := time.Now()
		err := c.Call(ctx, "m", nil, nil)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("call took %v", d)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	if err := c.Notify(ctx, "m", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("notify = %v", err)
	}
	cancel()
	c.Close()
	if err := waitFor(t, runDone); err != nil {
		t.Fatalf("Run = %v", err)
	}
}

func TestOverloaded(t *testing.T) {
	release := make(chan struct{})
	running := make(chan struct{}, 1)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "slow" {
			running <- struct{}{}
			<-release
		}
		return "ok", nil
	})
	a, _ := connPair(t, Options{}, Options{Handler: h, MaxConcurrency: 1})
	slow := make(chan error, 1)
	go func() { slow <- a.Call(context.Background(), "slow", nil, nil) }()
	<-running
	err := a.Call(context.Background(), "fast", nil, nil)
	if e, ok := errors.AsType[*Error](err); !ok || e.Code != CodeOverloaded {
		t.Fatalf("err = %v, want overloaded", err)
	}
	close(release)
	if err := waitFor(t, slow); err != nil {
		t.Fatal(err)
	}
	// A handler's slot is free before its answer goes out.
	if err := a.Call(context.Background(), "fast", nil, nil); err != nil {
		t.Fatalf("after the slow call returned: %v", err)
	}
}

// TestManyConcurrentCallsBothWays drives calls in both directions at once,
// under the race detector.
func TestManyConcurrentCallsBothWays(t *testing.T) {
	a, b := connPair(t, Options{Handler: mathHandler()}, Options{Handler: mathHandler()})
	var wg sync.WaitGroup
	for g := range 8 {
		for _, c := range []*Conn{a, b} {
			wg.Go(func() {
				for i := range 200 {
					var sum int
					if err := c.Call(context.Background(), "add", addParams{g, i}, &sum); err != nil {
						t.Error(err)
						return
					}
					if sum != g+i {
						t.Errorf("sum %d, want %d", sum, g+i)
						return
					}
					if err := c.Notify(context.Background(), "noise", i); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
}

func TestRequestHelpers(t *testing.T) {
	r := &Request{Method: "m"}
	if !r.IsNotification() {
		t.Error("no id should be a notification")
	}
	r.ID = json.RawMessage(`1`)
	if r.IsNotification() {
		t.Error("id should make a request")
	}
	var v struct{ X int }
	r.Params = json.RawMessage(`{"X":[]}`)
	if err := r.UnmarshalParams(&v); err == nil {
		t.Error("want error")
	} else if e, ok := errors.AsType[*Error](err); !ok || e.Code != CodeInvalidParams {
		t.Errorf("err = %v", err)
	}
	if got := NewError(CodeAppMin, "x").Error(); got != "jsonrpc error 1000: x" {
		t.Errorf("Error() = %q", got)
	}
}

func TestCallFromNotificationHandler(t *testing.T) {
	var a *Conn
	got := make(chan error, 1)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.IsNotification() {
			got <- a.Call(ctx, "anything", nil, nil)
		}
		return nil, nil
	})
	ca, b := connPair(t, Options{Handler: h}, Options{Handler: mathHandler()})
	a = ca
	if err := b.Notify(context.Background(), "event", nil); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(t, got); err == nil || !strings.Contains(err.Error(), "deadlock") {
		t.Fatalf("err = %v, want the deadlock guard", err)
	}
}

// TestCallbackFromRequestHandler: a request handler may call the peer back
// while the peer waits for its answer.
func TestCallbackFromRequestHandler(t *testing.T) {
	var b *Conn
	ready := make(chan struct{})
	hb := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		<-ready
		var sum int
		if err := b.Call(ctx, "add", addParams{1, 2}, &sum); err != nil {
			return nil, err
		}
		return sum * 10, nil
	})
	a, cb := connPair(t, Options{Handler: mathHandler()}, Options{Handler: hb})
	b = cb
	close(ready)
	var got int
	if err := a.Call(context.Background(), "outer", nil, &got); err != nil || got != 30 {
		t.Fatalf("got %d, %v", got, err)
	}
}

// TestResponseWritten: the hook sees the id of each answered request once
// its response is out, whether the writer goroutine wrote it (pipes) or the
// handler's goroutine did (sockets take inline writes).
func TestResponseWritten(t *testing.T) {
	for _, tc := range []struct {
		name string
		pair func(*testing.T, Options, Options) (*Conn, *Conn)
	}{
		{"writer goroutine", connPair},
		{"inline", socketConnPair},
	} {
		t.Run(tc.name, func(t *testing.T) {
			written := make(chan string, 8)
			hook := func(id json.RawMessage) { written <- string(id) }
			core, _ := tc.pair(t, Options{}, Options{Handler: mathHandler(), ResponseWritten: hook})
			for i := 1; i <= 3; i++ {
				var sum int
				if err := core.Call(context.Background(), "add", addParams{i, i}, &sum); err != nil {
					t.Fatal(err)
				}
				select {
				case id := <-written:
					if want := fmt.Sprint(i); id != want {
						t.Fatalf("hook saw id %s, want %s", id, want)
					}
				case <-time.After(waitLong):
					t.Fatalf("hook not called for call %d", i)
				}
			}
		})
	}
}

// TestGoHook: Options.Go starts the goroutine of every request (not of
// a notification), and the requests it starts are answered.
func TestGoHook(t *testing.T) {
	var started atomic.Int32
	opts := Options{Handler: mathHandler(), Go: func(serve func()) {
		started.Add(1)
		go serve()
	}}
	a, _ := connPair(t, Options{}, opts)
	ctx := context.Background()
	if err := a.Notify(ctx, "note", nil); err != nil {
		t.Fatal(err)
	}
	var sum int
	if err := a.Call(ctx, "add", addParams{2, 3}, &sum); err != nil || sum != 5 {
		t.Fatalf("add = %d, %v", sum, err)
	}
	var echo map[string]any
	if err := a.Call(ctx, "echo", map[string]any{"s": "x"}, &echo); err != nil || echo["s"] != "x" {
		t.Fatalf("echo = %v, %v", echo, err)
	}
	if n := started.Load(); n != 2 {
		t.Errorf("Go started %d goroutines, want 2 (one per request)", n)
	}
}
