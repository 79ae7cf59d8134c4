package adapterkit

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/wire"
)

// v2Server is protocol v2's front end: the wire.Handler of the host's
// JSON-RPC connection.
type v2Server struct {
	*host
	conn    *wire.Conn
	ending  chan struct{} // closed when the host must end after its answer
	endOnce sync.Once

	lastID       atomic.Pointer[json.RawMessage] // the request whose answer ends the host
	answered     chan struct{}                   // closed when that answer has been written
	answeredOnce sync.Once
}

// serveV2 runs protocol v2 on r and w. wire.Conn handles requests
// concurrently and writes frames in the order they are queued, which keeps
// an invocation's events before its response.
func (h *host) serveV2(ctx context.Context, r io.Reader, w io.Writer) error {
	er := &eofReader{r: r, eof: make(chan struct{})}
	s := &v2Server{host: h, ending: make(chan struct{}), answered: make(chan struct{})}
	s.conn = wire.NewConn(er, w, wire.Options{Handler: s, Logger: h.log, MaxFrame: h.cfg.maxFrame, ResponseWritten: s.written, Go: startRequest})

	runDone := make(chan error, 1)
	// Run's context keeps life's values (hostfault.Writer) but is
	// never cancelled: cancelling it would drop queued responses. The host
	// ends the connection with Close once the last answer is out.
	go func() { runDone <- s.conn.Run(context.WithoutCancel(h.life)) }()

	var readErr error
	select {
	case err := <-runDone: // the connection ended by itself (handlers are done)
		h.stopSession()
		return err
	case <-er.eof:
		// The core closed the channel (or reading failed): stop the
		// session; wire cancels the handlers and flushes their answers.
		// Writing the last answers may fail if the core closed both
		// directions; that is still a clean end.
		h.stopSession()
		if er.err != io.EOF {
			readErr = er.err
		}
		if _, ok := waitFor(runDone, h.cfg.stopGrace); ok {
			return readErr
		}
	case <-s.ending:
		h.stopSession()
		if er.stopReading() {
			// The read side now ends like an EOF, and wire finishes
			// properly: every handler's answer (a cancelled invoke's
			// included) is written before Run returns.
			if _, ok := waitFor(runDone, h.cfg.stopGrace); ok {
				return nil
			}
		} else {
			waitFor(s.answered, h.cfg.stopGrace) // the last answer is out
		}
	case <-ctx.Done():
		h.log.Info("adapterkit: shutting down", "cause", context.Cause(ctx))
		h.stopSession()
	}
	s.conn.Close()
	err, ok := waitFor(runDone, h.cfg.stopGrace)
	if !ok {
		h.log.Warn("adapterkit: a request handler did not return; leaving it")
	}
	if err == nil {
		err = readErr
	}
	return err
}

// endAfter makes the host end once the answer to the request with id has
// been written.
func (s *v2Server) endAfter(id json.RawMessage) {
	s.lastID.Store(&id)
	s.endOnce.Do(func() { close(s.ending) })
}

// written is the conn's ResponseWritten hook.
func (s *v2Server) written(id json.RawMessage) {
	if last := s.lastID.Load(); last != nil && bytes.Equal(*last, id) {
		s.answeredOnce.Do(func() { close(s.answered) })
	}
}

// rpcFailure is a lifecycle failure as a JSON-RPC error.
func rpcFailure(fail *hostproto.ErrorData) error {
	data, err := json.Marshal(fail)
	if err != nil { // metadata JSON cannot carry
		f := *fail
		f.Metadata = nil
		data, _ = json.Marshal(&f)
	}
	return &wire.Error{Code: hostproto.RPCLifecycleError, Message: fail.Message, Data: data}
}

// Handle implements wire.Handler.
func (s *v2Server) Handle(ctx context.Context, req *wire.Request) (any, error) {
	if req.IsNotification() {
		if req.Method == hostproto.MethodCancel {
			var p hostproto.CancelParams
			if req.UnmarshalParams(&p) == nil {
				s.cancelInvocation(p.InvocationID)
			}
		}
		return nil, nil
	}
	switch req.Method {
	case hostproto.OpStart:
		if !isObject(req.Params) {
			return nil, rpcFailure(lifecycleFailure(req.Method, CodeInvalidRequest, "start params must be an object"))
		}
		p, runtimeID, bad := decodeStart(req.Params)
		fail, adapterCalled := s.start(&p, runtimeID, bad)
		if fail != nil {
			if adapterCalled {
				s.endAfter(req.ID)
			}
			return nil, rpcFailure(fail)
		}
		return &hostproto.StartResult{Interfaces: s.interfaces()}, nil

	case hostproto.MethodServiceStart, hostproto.MethodServiceAttach:
		return s.handleService(req)

	case hostproto.OpInvoke:
		if !isObject(req.Params) {
			return nil, rpcFailure(lifecycleFailure(req.Method, CodeInvalidRequest, "invoke params must be an object"))
		}
		p, runtimeID, bad := decodeInvoke(req.Params)
		em := &v2Emitter{conn: s.conn, ctx: ctx, perms: &s.permissions}
		if p.RuntimeContext != nil {
			em.id = p.RuntimeContext.InvocationID
		}
		out, fail := s.invoke(ctx, &p, runtimeID, bad, em)
		if fail != nil {
			return nil, rpcFailure(fail)
		}
		return out, nil

	case hostproto.MethodCancel:
		var p hostproto.CancelParams
		if err := req.UnmarshalParams(&p); err != nil || p.InvocationID == "" {
			return nil, rpcFailure(lifecycleFailure(hostproto.OpInvoke, CodeInvalidRequest, "cancel params need an invocation_id"))
		}
		return &hostproto.CancelResult{Cancelled: s.cancelInvocation(p.InvocationID)}, nil

	case hostproto.MethodPermissionDecide:
		var p hostproto.PermissionDecideParams
		if err := req.UnmarshalParams(&p); err != nil || p.RequestID == "" {
			return nil, rpcFailure(lifecycleFailure(hostproto.OpInvoke, CodeInvalidRequest, "permission/decide params need a request_id"))
		}
		return &hostproto.PermissionDecideResult{Accepted: s.decidePermission(p.RequestID, p.Decision)}, nil

	case hostproto.MethodHealth:
		var p hostproto.HealthParams
		if len(req.Params) > 0 && string(req.Params) != "null" {
			if err := req.UnmarshalParams(&p); err != nil {
				return nil, rpcFailure(lifecycleFailure(hostproto.OpInvoke, CodeInvalidRequest, "invalid health params"))
			}
		}
		res, fail := s.health(ctx, p.Level, time.Duration(p.TimeoutMillis)*time.Millisecond, p.Interface)
		if fail != nil {
			fail.Stage = hostproto.OpInvoke
			return nil, rpcFailure(fail)
		}
		return &res, nil

	case hostproto.OpStop:
		// Like upstream, every stop ends the host, whatever it answers.
		defer s.endAfter(req.ID)
		runtimeID := ""
		if isObject(req.Params) {
			runtimeID = decodeStopRuntimeID(req.Params)
		}
		if fail := s.stop(runtimeID, false); fail != nil {
			return nil, rpcFailure(fail)
		}
		return nil, nil
	}
	return nil, &wire.Error{Code: wire.CodeMethodNotFound, Message: "method not found: " + req.Method}
}

// v2Emitter sends an invocation's events until Invoke returns. It sends on
// the connection's context, not the invocation's, so events emitted while
// a cancelled turn winds down still arrive.
//
// Emit queues the event and returns; a sender goroutine, started when the
// queue becomes non-empty, writes what is queued: one event as an "event"
// notification, several (those emitted while the previous frame was being
// written) as one "events" notification, so a fast producer pays one frame
// per batch rather than per event. The queue is bounded: Emit waits while it holds
// maxEmitQueue events (backpressure). close waits for the queue to drain,
// which keeps every event ahead of the invoke's response.
type v2Emitter struct {
	conn   *wire.Conn
	ctx    context.Context
	id     string
	perms  *permissionSet // the host's pending permission requests
	closed atomic.Bool

	mu      sync.Mutex
	queue   []Event
	spare   []Event
	sending bool
	drained *sync.Cond // signalled when a send ends
}

// maxEmitQueue bounds the events waiting behind a send in progress.
const maxEmitQueue = 1024

// PermissionSet implements permission.Holder: AskPermission through this
// emitter is pending on its host.
func (e *v2Emitter) PermissionSet() *permissionSet { return e.perms }

func (e *v2Emitter) Emit(ev Event) {
	if e.closed.Load() {
		return
	}
	if ev.TimestampMillis == 0 {
		ev.TimestampMillis = time.Now().UnixMilli()
	}
	e.mu.Lock()
	if e.drained == nil {
		e.drained = sync.NewCond(&e.mu)
	}
	for e.sending && len(e.queue) >= maxEmitQueue {
		e.drained.Wait()
	}
	e.queue = append(e.queue, ev)
	start := !e.sending
	e.sending = true
	e.mu.Unlock()
	if start {
		go e.run()
	}
}

// run sends batches until the queue is empty.
func (e *v2Emitter) run() {
	e.mu.Lock()
	for len(e.queue) > 0 {
		batch := e.queue
		e.queue, e.spare = e.spare[:0], nil
		e.mu.Unlock()
		e.send(batch)
		clear(batch)
		e.mu.Lock()
		e.spare = batch[:0]
		e.drained.Broadcast()
	}
	e.sending = false
	e.drained.Broadcast()
	e.mu.Unlock()
}

// send writes one batch. Notify encodes before it returns; the params do
// not outlive the call.
func (e *v2Emitter) send(batch []Event) {
	if len(batch) == 1 {
		_ = e.conn.Notify(e.ctx, hostproto.NotifyEvent, &hostproto.EventParams{InvocationID: e.id, Event: batch[0]})
		return
	}
	_ = e.conn.Notify(e.ctx, hostproto.NotifyEvents, &hostproto.EventsParams{InvocationID: e.id, Events: batch})
}

// close drops later events and waits until queued ones are sent.
func (e *v2Emitter) close() {
	e.closed.Store(true)
	e.mu.Lock()
	for e.sending {
		e.drained.Wait()
	}
	e.mu.Unlock()
}

// eofReader reports the first read error (io.EOF included) of r, and can
// end the read side of a stream that has read deadlines.
type eofReader struct {
	r      io.Reader
	once   sync.Once
	eof    chan struct{}
	err    error
	ending atomic.Bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && e.ending.Load() {
		err = io.EOF
	}
	if err != nil {
		e.once.Do(func() {
			e.err = err
			close(e.eof)
		})
	}
	return n, err
}

// stopReading makes a pending and every later Read end as at EOF, if r
// supports read deadlines (net.Conn does: the fd 3 socket and net.Pipe).
func (e *eofReader) stopReading() bool {
	d, ok := e.r.(interface{ SetReadDeadline(time.Time) error })
	if !ok {
		return false
	}
	e.ending.Store(true)
	return d.SetReadDeadline(time.Now()) == nil
}

func (e *eofReader) Close() error {
	if c, ok := e.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
