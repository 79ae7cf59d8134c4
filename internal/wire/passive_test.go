package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// socketPair returns the two ends of a Unix stream socket pair as net.Conns.
func socketPair(t testing.TB) (net.Conn, net.Conn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conns := make([]net.Conn, 2)
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	return conns[0], conns[1]
}

// socketConnPair runs two Conns on a socket pair: a (options ao) and b.
func socketConnPair(t *testing.T, ao, bo Options) (*Conn, *Conn) {
	t.Helper()
	x, y := socketPair(t)
	a, b := NewConn(x, x, ao), NewConn(y, y, bo)
	runConn(t, a)
	runConn(t, b)
	return a, b
}

func TestPassiveEventsBeforeResult(t *testing.T) {
	var server atomic.Pointer[Conn]
	var got atomic.Int64
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		for i := range 3 {
			if err := server.Load().Notify(ctx, "event", map[string]int{"seq": i}); err != nil {
				return nil, err
			}
		}
		return "done", nil
	})
	core, s := socketConnPair(t, Options{Passive: true, Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		got.Add(1)
		return nil, nil
	})}, Options{Handler: h})
	server.Store(s)
	if !core.passive {
		t.Fatal("not passive")
	}
	for i := range 2000 {
		var res string
		if err := core.Call(context.Background(), "invoke", nil, &res); err != nil || res != "done" {
			t.Fatalf("call %d: %q %v", i, res, err)
		}
		if n := got.Load(); n != int64(3*(i+1)) {
			t.Fatalf("call %d: %d events", i, n)
		}
	}
}

// TestPassiveIdleHoldsNoReadBuffer: between calls a passive conn holds no
// read buffer (a thousand idle runtimes would pin 4 KiB each), and the next
// call reads afresh.
func TestPassiveIdleHoldsNoReadBuffer(t *testing.T) {
	core, _ := socketConnPair(t, Options{Passive: true}, Options{Handler: mathHandler()})
	for i := range 3 {
		var sum int
		if err := core.Call(context.Background(), "add", addParams{i, 1}, &sum); err != nil || sum != i+1 {
			t.Fatalf("add(%d, 1) = %d, %v", i, sum, err)
		}
		<-core.role // no caller reads while the buffer is looked at
		held := core.fr.buf
		core.role <- struct{}{}
		if held != nil {
			t.Fatalf("after call %d the idle conn holds a %d byte read buffer", i, cap(held))
		}
	}
}

// TestPassiveCancelWhileReading: a caller reading for a passive conn
// returns at once when its context ends, and the conn goes on working.
func TestPassiveCancelWhileReading(t *testing.T) {
	release := make(chan struct{})
	core, _ := socketConnPair(t, Options{Passive: true}, Options{Handler: slowQuick(release)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- core.Call(ctx, "slow", nil, nil) }()
	waitReading(t, core)
	start := time.Now()
	cancel()
	if err := waitFor(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Call took %v to return after cancel", d)
	}
	close(release) // the late answer is read, and dropped, by the next call
	for range 3 {
		var s string
		if err := core.Call(context.Background(), "quick", nil, &s); err != nil || s != "quick" {
			t.Fatalf("after cancel: %q, %v", s, err)
		}
	}
	core.mu.Lock()
	n := len(core.pending)
	core.mu.Unlock()
	if n != 0 {
		t.Errorf("%d pending calls left", n)
	}
}

// TestPassiveConcurrentCalls: calls waiting at once take turns reading and
// each gets its own answer, in whatever order they come.
func TestPassiveConcurrentCalls(t *testing.T) {
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		var p addParams
		if err := req.UnmarshalParams(&p); err != nil {
			return nil, err
		}
		if p.A%7 == 0 {
			time.Sleep(2 * time.Millisecond) // answers overtake each other
		}
		return p.A + p.B, nil
	})
	core, _ := socketConnPair(t, Options{Passive: true}, Options{Handler: h})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				a := g*1000 + i
				var sum int
				if err := core.Call(context.Background(), "add", addParams{a, 1}, &sum); err != nil || sum != a+1 {
					t.Errorf("add(%d, 1) = %d, %v", a, sum, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestPassiveCancelWhileDispatchFull: a reading caller blocked on a full
// inbound queue still returns at once when its context ends; the
// notifications keep their order and nothing is lost.
func TestPassiveCancelWhileDispatchFull(t *testing.T) {
	var server atomic.Pointer[Conn]
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		for i := range 5 {
			if err := server.Load().Notify(ctx, "event", map[string]int{"seq": i}); err != nil {
				return nil, err
			}
		}
		return "done", nil
	})
	gate := make(chan struct{})
	var mu sync.Mutex
	var seqs []int
	note := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		<-gate
		var p struct{ Seq int }
		_ = json.Unmarshal(req.Params, &p)
		mu.Lock()
		seqs = append(seqs, p.Seq)
		mu.Unlock()
		return nil, nil
	})
	core, s := socketConnPair(t, Options{Passive: true, InboundQueue: 1, Handler: note}, Options{Handler: h})
	server.Store(s)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := core.Call(ctx, "invoke", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Call took %v to return", d)
	}
	close(gate)
	var res string
	if err := core.Call(context.Background(), "invoke", nil, &res); err != nil || res != "done" {
		t.Fatalf("second call: %q, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []int{0, 1, 2, 3, 4, 0, 1, 2, 3, 4}; !slices.Equal(seqs, want) {
		t.Fatalf("notifications %v, want %v", seqs, want)
	}
}

// TestPassiveCloseWhileReading: Close ends a caller that is reading.
func TestPassiveCloseWhileReading(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return nil, nil
	})
	core, _ := socketConnPair(t, Options{Passive: true}, Options{Handler: h})
	done := make(chan error, 1)
	go func() { done <- core.Call(context.Background(), "hang", nil, nil) }()
	waitReading(t, core)
	core.CloseWithCause(errors.New("host exited"))
	err := waitFor(t, done)
	if !errors.Is(err, ErrConnClosed) || !strings.Contains(err.Error(), "host exited") {
		t.Fatalf("err = %v", err)
	}
	if err := core.Call(context.Background(), "again", nil, nil); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("later call: %v", err)
	}
}

// TestPassiveEndOfStream: the end of the stream, seen by a reading caller,
// ends Run and fails the calls.
func TestPassiveEndOfStream(t *testing.T) {
	x, y := socketPair(t)
	core := NewConn(x, x, Options{Passive: true})
	runDone := runConn(t, core)
	done := make(chan error, 1)
	go func() { done <- core.Call(context.Background(), "m", nil, nil) }()
	fr := NewFrameReader(y, 0)
	if _, err := fr.ReadFrame(); err != nil {
		t.Fatal(err)
	}
	y.Close()
	if err := waitFor(t, done); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("call: %v", err)
	}
	if err := waitFor(t, runDone); err != nil {
		t.Fatalf("Run = %v", err)
	}
}

// TestPassiveServesRequestsWhileCalling: a passive conn serves the peer's
// requests that arrive while one of its calls reads.
func TestPassiveServesRequestsWhileCalling(t *testing.T) {
	var server atomic.Pointer[Conn]
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		var sum int
		if err := server.Load().Call(ctx, "add", addParams{20, 1}, &sum); err != nil {
			return nil, err
		}
		return sum * 2, nil
	})
	core, s := socketConnPair(t, Options{Passive: true, Handler: mathHandler()}, Options{Handler: h})
	server.Store(s)
	for range 20 {
		var got int
		if err := core.Call(context.Background(), "outer", nil, &got); err != nil || got != 42 {
			t.Fatalf("got %d, %v", got, err)
		}
	}
}

// TestPassiveAnswersInvalidFrames: a passive conn answers what it reads
// on behalf of the conn (invalid messages, requests it has no handler
// for) exactly once.
func TestPassiveAnswersInvalidFrames(t *testing.T) {
	x, y := socketPair(t)
	core := NewConn(x, x, Options{Passive: true})
	runConn(t, core)
	peer := NewFrameReader(y, 0)
	pw := NewFrameWriter(y, 0)
	defer y.Close()
	done := make(chan error, 1)
	go func() { done <- core.Call(context.Background(), "m", nil, nil) }()
	if _, err := peer.ReadFrame(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{`[1]`, `{"jsonrpc":"2.0","id":7,"method":"teleport"}`, `{"jsonrpc":"2.0","id":1,"result":"ok"}`} {
		if err := pw.WriteFrame([]byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := waitFor(t, done); err != nil {
		t.Fatal(err)
	}
	var got []string
	y.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	for {
		f, err := peer.ReadFrame()
		if err != nil {
			break
		}
		got = append(got, string(f))
	}
	want := []string{
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message must be a JSON object, got array"}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found: teleport"}}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("answers\n got %q\nwant %q", got, want)
	}
}

// TestInlineWritesKeepFramesWhole: frames written from many goroutines at
// once, inline or queued, some large enough to be written in part, arrive
// whole and in each sender's order.
func TestInlineWritesKeepFramesWhole(t *testing.T) {
	x, y := socketPair(t)
	if err := x.(*net.UnixConn).SetWriteBuffer(4096); err != nil {
		t.Fatal(err)
	}
	sender := NewConn(x, x, Options{})
	if sender.fast == nil {
		t.Fatal("no inline writes on a socket")
	}
	runConn(t, sender)
	const senders, each = 4, 200
	got := make(chan []byte, 16)
	go func() {
		fr := NewFrameReader(y, 0)
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				close(got)
				return
			}
			got <- bytes.Clone(f)
		}
	}()
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			for i := range each {
				pad := strings.Repeat("x", (i%5)*3000)
				if err := sender.Notify(context.Background(), "n", map[string]any{"g": g, "i": i, "pad": pad}); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					time.Sleep(100 * time.Microsecond) // not only bursts
				}
			}
		})
	}
	next := make([]int, senders)
	for n := 0; n < senders*each; n++ {
		f, ok := <-got
		if !ok {
			t.Fatal("stream ended")
		}
		var m struct {
			Params struct{ G, I int }
		}
		if err := json.Unmarshal(f, &m); err != nil {
			t.Fatalf("frame %d is not JSON (%v): %.80s", n, err, f)
		}
		if m.Params.I != next[m.Params.G] {
			t.Fatalf("sender %d: frame %d, want %d", m.Params.G, m.Params.I, next[m.Params.G])
		}
		next[m.Params.G]++
	}
	wg.Wait()
	y.Close()
}

// TestSocketBlockedWriter: on a socket the peer never reads, calls still
// honour their context, and Close unblocks Run.
func TestSocketBlockedWriter(t *testing.T) {
	for _, passive := range []bool{false, true} {
		x, y := socketPair(t)
		defer y.Close()
		if err := x.(*net.UnixConn).SetWriteBuffer(4096); err != nil {
			t.Fatal(err)
		}
		c := NewConn(x, x, Options{OutboundQueue: 1, Passive: passive})
		runDone := make(chan error, 1)
		go func() { runDone <- c.Run(context.Background()) }()
		big := strings.Repeat("y", 64<<10)
		for range 5 {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			start := time.Now()
			err := c.Call(ctx, "m", big, nil)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Fatalf("call took %v", d)
			}
		}
		c.Close()
		if err := waitFor(t, runDone); err != nil {
			t.Fatalf("Run = %v", err)
		}
	}
}

// TestLongRequestDelaysNothing: requests are handled concurrently, so a
// long one lets the next ones through.
func TestLongRequestDelaysNothing(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "long" {
			close(entered)
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return req.Method, nil
	})
	core, _ := socketConnPair(t, Options{Passive: true}, Options{Handler: h})
	long := make(chan error, 1)
	go func() { long <- core.Call(context.Background(), "long", nil, nil) }()
	<-entered
	for range 20 {
		start := time.Now()
		var s string
		ctx, cancel := context.WithTimeout(context.Background(), waitLong)
		err := core.Call(ctx, "health", nil, &s)
		cancel()
		if err != nil || s != "health" {
			t.Fatalf("health: %q, %v", s, err)
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("health took %v while a long request ran", d)
		}
	}
	close(release)
	if err := waitFor(t, long); err != nil {
		t.Fatal(err)
	}
}

func TestFrameReaderResumesAfterDeadline(t *testing.T) {
	x, y := socketPair(t)
	defer x.Close()
	defer y.Close()
	fr := NewFrameReader(x, 0)
	if _, err := y.Write([]byte(`{"a":`)); err != nil {
		t.Fatal(err)
	}
	x.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := fr.ReadFrame(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	x.SetReadDeadline(time.Time{})
	if _, err := y.Write([]byte("1}\n")); err != nil {
		t.Fatal(err)
	}
	if f, err := fr.ReadFrame(); err != nil || string(f) != `{"a":1}` {
		t.Fatalf("frame %q, %v", f, err)
	}
}

// waitReading returns once a call reads for the passive conn c: the
// handshake that makes a test's cancel or close reach a reading caller.
func waitReading(t *testing.T, c *Conn) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		c.mu.Lock()
		reading := c.dlOwner != 0
		c.mu.Unlock()
		if reading {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no call is reading")
		}
		runtime.Gosched()
	}
}
