package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
)

// Defaults for Options fields left zero.
const (
	DefaultOutboundQueue  = 64
	DefaultInboundQueue   = 128
	DefaultMaxConcurrency = 64
)

// maxBatch is how many bytes of queued frames the writer gathers into one
// Write when frames arrive faster than they can be written.
const maxBatch = 64 << 10

// Options configures a Conn. The zero value is usable.
type Options struct {
	// MaxFrame limits the size of every frame in both directions
	// (DefaultMaxFrame if <= 0).
	MaxFrame int
	// Handler receives incoming requests and notifications. With a nil
	// Handler every request is answered with CodeMethodNotFound and
	// notifications are dropped.
	Handler Handler
	// Logger receives debug and warning records about the connection
	// itself, never payloads. Nil discards.
	Logger *slog.Logger
	// OutboundQueue is the number of encoded frames waiting for the writer
	// (DefaultOutboundQueue if <= 0). When it is full, Call and Notify wait
	// for room or for their context.
	OutboundQueue int
	// InboundQueue is the number of received notifications waiting for the
	// ordered dispatcher (DefaultInboundQueue if <= 0). When it is full the
	// reader stops reading until the notification handler catches up, which
	// pushes back on the peer; nothing is dropped.
	InboundQueue int
	// MaxConcurrency limits the requests being handled at once
	// (DefaultMaxConcurrency if <= 0). A request over the limit is answered
	// at once with CodeOverloaded.
	MaxConcurrency int
}

// Conn is a symmetric JSON-RPC 2.0 peer over newline-delimited frames: it
// sends requests and notifications (Call, Notify) and serves the peer's
// through its Handler. Run must be running for anything to be read or
// written.
//
// Conn owns r and w: when Run returns or Close is called, each that
// implements io.Closer is closed. Closing them is also how a blocked read or
// write is interrupted, so Run returns promptly on Close or on cancellation
// of its context only if r and w are closers (pipes, files and network
// connections are).
//
// Ordering: frames are written in the order Call, Notify and handler
// responses queue them. Incoming notifications reach the Handler one at a
// time in the order received, and a response is delivered to its Call only
// after every notification received before it has been handled, so a Call
// returns after the notifications the peer sent before answering it.
type Conn struct {
	r   io.Reader
	w   io.Writer
	log *slog.Logger

	handler Handler
	maxIn   int32
	fr      *FrameReader
	limit   int

	out        chan *frameBuf // to the writer
	inq        chan inbound   // to the ordered dispatcher
	writerStop chan struct{}  // closed when no more responses will be queued
	killed     chan struct{}  // closed by abort: give up blocked sends
	closed     chan struct{}  // closed when the conn stops accepting calls

	nextID   atomic.Int64
	active   atomic.Int32 // request handlers running
	inFlight atomic.Int64 // items queued to or being handled by the dispatcher
	handlers sync.WaitGroup
	running  atomic.Bool

	mu       sync.Mutex
	pending  map[int64]chan callResult
	isClosed bool
	closeErr error // what Call and Notify return once closed
	cause    error // why abort was called; nil if it was not
	isKilled bool

	closeIOOnce sync.Once
}

type callResult struct {
	result json.RawMessage
	err    error
}

// inbound is one item for the ordered dispatcher: a notification, or a
// response held back behind earlier notifications. It is kept to two
// words because the queue is allocated at its full capacity.
type inbound struct {
	note *Request
	resp *heldResponse
}

type heldResponse struct {
	ch  chan callResult
	res callResult
}

// NewConn returns a Conn reading frames from r and writing them to w. It
// starts nothing; call Run.
func NewConn(r io.Reader, w io.Writer, opts Options) *Conn {
	if opts.MaxFrame <= 0 {
		opts.MaxFrame = DefaultMaxFrame
	}
	if opts.OutboundQueue <= 0 {
		opts.OutboundQueue = DefaultOutboundQueue
	}
	if opts.InboundQueue <= 0 {
		opts.InboundQueue = DefaultInboundQueue
	}
	if opts.MaxConcurrency <= 0 {
		opts.MaxConcurrency = DefaultMaxConcurrency
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Conn{
		r:          r,
		w:          w,
		log:        log,
		handler:    opts.Handler,
		maxIn:      int32(min(opts.MaxConcurrency, 1<<30)),
		fr:         NewFrameReader(r, opts.MaxFrame),
		limit:      opts.MaxFrame,
		out:        make(chan *frameBuf, opts.OutboundQueue),
		inq:        make(chan inbound, opts.InboundQueue),
		writerStop: make(chan struct{}),
		killed:     make(chan struct{}),
		closed:     make(chan struct{}),
		pending:    make(map[int64]chan callResult),
	}
}

// Run reads and dispatches frames until the peer closes its end, a read or
// write fails, the peer breaks the protocol, Close is called or ctx is
// cancelled. Before returning it waits for every goroutine it started
// (request handlers included, which see their context cancelled), fails the
// calls still pending with ErrConnClosed, and closes r and w.
//
// Run returns nil after a clean end of stream or Close; the context's cause
// if ctx was cancelled; otherwise the error that ended the connection: one
// wrapping ErrFrameTooLarge or ErrProtocol (a frame that is not JSON), or
// the read or write error. Run may be called only once.
func (c *Conn) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("wire: Conn.Run called more than once")
	}
	c.mu.Lock()
	killed := c.isKilled
	c.mu.Unlock()
	if killed {
		c.closeIO()
		return c.runResult(nil)
	}

	// Handlers see ctx's values but are cancelled only after the conn is
	// aborted, so a handler stopped by ctx cannot get a response out.
	hctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	abortDone := make(chan struct{})
	stopAbort := context.AfterFunc(ctx, func() {
		defer close(abortDone)
		c.abort(context.Cause(ctx))
		cancel(context.Cause(ctx))
	})

	var wg sync.WaitGroup
	wg.Go(c.writeLoop)
	var dispatcher sync.WaitGroup
	dispatcher.Go(func() { c.dispatchLoop(hctx) })

	readErr := c.readLoop(hctx)

	// Stop accepting calls; deliver what was already received; let handlers
	// finish and their responses drain; then fail whatever is still pending.
	c.setClosed(c.endCause(readErr))
	close(c.inq)
	cancel(ErrConnClosed)
	c.handlers.Wait()
	dispatcher.Wait()
	c.failPending()
	close(c.writerStop)
	wg.Wait()

	if !stopAbort() {
		<-abortDone
	}
	c.closeIO()
	return c.runResult(readErr)
}

// Close ends the connection: pending calls fail with ErrConnClosed, r and w
// are closed (which makes a running Run return), and later calls fail at
// once. Close does not wait for Run; the owner of Run waits for it. Close
// is idempotent and returns nil.
func (c *Conn) Close() error {
	c.abort(errClosedLocally)
	return nil
}

// Call sends a request for method with params (omitted if nil) and waits
// for the response. A result is decoded into result unless result is nil;
// a *json.RawMessage receives the raw result without another decoding pass.
// If the peer answers with an error, Call returns it as an *Error. A
// notification handler must not wait for a Call on its own Conn (the
// response is held behind the notification); Call detects this when given
// the handler's context and fails at once. If ctx
// ends first, Call returns ctx.Err() at once and sends nothing more; a late
// response is dropped. If the connection ends, the error wraps
// ErrConnClosed.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if method == "" {
		return errors.New("wire: call: empty method")
	}
	if ctx.Value(dispatchKey{}) == c {
		// The response would wait behind the notification being handled.
		return errors.New("wire: Call from a notification handler of the same Conn would deadlock")
	}
	id := c.nextID.Add(1)
	fb, err := encodeCall(id, method, params, c.limit)
	if err != nil {
		return err
	}
	ch := make(chan callResult, 1)
	c.mu.Lock()
	if c.isClosed {
		err := c.closeErr
		c.mu.Unlock()
		putFrameBuf(fb)
		return err
	}
	c.pending[id] = ch
	c.mu.Unlock()

	if err := c.send(ctx, fb); err != nil {
		c.forget(id)
		return err
	}
	select {
	case res := <-ch:
		if res.err != nil {
			return res.err
		}
		if rm, ok := result.(*json.RawMessage); ok && rm != nil {
			*rm = res.result // validated, and a private copy
			return nil
		}
		if result != nil {
			if err := json.Unmarshal(res.result, result); err != nil {
				return fmt.Errorf("wire: decode %s result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.forget(id)
		return ctx.Err()
	}
}

// Notify sends a notification for method with params (omitted if nil). It
// returns once the frame is queued for writing, or with ctx.Err() if ctx
// ends while the queue is full, or with an error wrapping ErrConnClosed.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if method == "" {
		return errors.New("wire: notify: empty method")
	}
	c.mu.Lock()
	closed, closeErr := c.isClosed, c.closeErr
	c.mu.Unlock()
	if closed {
		return closeErr
	}
	fb, err := encodeCall(0, method, params, c.limit)
	if err != nil {
		return err
	}
	return c.send(ctx, fb)
}

// send queues a frame of a Call or Notify.
func (c *Conn) send(ctx context.Context, fb *frameBuf) error {
	select {
	case c.out <- fb:
		return nil
	case <-ctx.Done():
		putFrameBuf(fb)
		return ctx.Err()
	case <-c.closed:
		putFrameBuf(fb)
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.closeErr
	}
}

// reply queues a response. Responses are still written after the read side
// has ended, until Run stops the writer, but are dropped once the conn is
// aborted.
func (c *Conn) reply(fb *frameBuf) {
	select {
	case c.out <- fb:
	case <-c.killed:
		putFrameBuf(fb)
	}
}

func (c *Conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *Conn) readLoop(ctx context.Context) error {
	for {
		frame, err := c.fr.ReadFrame()
		if err != nil {
			return err
		}
		if err := c.handleFrame(ctx, frame); err != nil {
			return err
		}
	}
}

// handleFrame classifies one frame and routes it. Only a frame that is not
// JSON at all is fatal.
func (c *Conn) handleFrame(ctx context.Context, frame []byte) error {
	m, shape, err := readMessage(frame)
	if err != nil {
		c.reply(encodeResponse(nil, nil, &Error{Code: CodeParseError, Message: "parse error"}, c.limit))
		return protocolErrorf(err, "frame is not JSON")
	}
	if shape != "" {
		c.invalid(m.ID, shape)
		return nil
	}
	switch {
	case m.Method != "":
		if m.ID == nil {
			if m.JSONRPC != "2.0" {
				c.log.Debug("wire: dropping notification without jsonrpc 2.0", "method", truncate(m.Method, 64))
				return nil
			}
			c.notification(&Request{Method: m.Method, Params: m.Params})
			return nil
		}
		if !validID(m.ID) {
			c.invalid(nil, "id must be a string or a number")
			return nil
		}
		if m.JSONRPC != "2.0" {
			c.invalid(m.ID, `jsonrpc must be "2.0"`)
			return nil
		}
		c.request(ctx, &Request{ID: m.ID, Method: m.Method, Params: m.Params})
	case m.ID != nil && (m.Result != nil || m.Error != nil):
		c.response(&m)
	default:
		c.invalid(m.ID, "neither a request, a notification nor a response")
	}
	return nil
}

// invalid answers an invalid message with CodeInvalidRequest, echoing the
// id when it is usable.
func (c *Conn) invalid(id json.RawMessage, msg string) {
	if !validID(id) {
		id = nil
	}
	c.log.Debug("wire: invalid message", "reason", msg)
	c.reply(encodeResponse(id, nil, &Error{Code: CodeInvalidRequest, Message: msg}, c.limit))
}

func (c *Conn) request(ctx context.Context, req *Request) {
	if c.handler == nil {
		c.reply(encodeResponse(req.ID, nil, &Error{Code: CodeMethodNotFound, Message: "method not found: " + req.Method}, c.limit))
		return
	}
	// Only this goroutine increments active, so the check cannot race past
	// the limit.
	if c.active.Load() >= c.maxIn {
		c.log.Warn("wire: too many requests in flight", "method", req.Method, "limit", c.maxIn)
		c.reply(encodeResponse(req.ID, nil, &Error{Code: CodeOverloaded, Message: "too many requests in flight"}, c.limit))
		return
	}
	c.active.Add(1)
	c.handlers.Go(func() {
		defer c.active.Add(-1)
		result, err := c.handler.Handle(ctx, req)
		var rpcErr *Error
		if err != nil {
			rpcErr = toRPCError(err)
		}
		c.reply(encodeResponse(req.ID, result, rpcErr, c.limit))
	})
}

func (c *Conn) notification(note *Request) {
	if c.handler == nil {
		return
	}
	c.enqueue(inbound{note: note})
}

func (c *Conn) response(m *inMessage) {
	id, ok := parseOurID(m.ID)
	if !ok {
		if m.Error != nil && string(m.ID) == "null" {
			var e Error
			_ = json.Unmarshal(m.Error, &e)
			c.log.Warn("wire: peer reported an error without an id", "code", e.Code, "message", truncate(e.Message, 256))
		} else {
			c.log.Debug("wire: response with an id never sent", "id", truncate(string(m.ID), 64))
		}
		return
	}
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch == nil {
		c.log.Debug("wire: response to unknown or abandoned call", "id", id)
		return
	}
	var res callResult
	switch {
	case m.JSONRPC != "2.0":
		res.err = protocolErrorf(nil, `response without jsonrpc "2.0"`)
	case m.Result != nil && m.Error != nil:
		res.err = protocolErrorf(nil, "response with both result and error")
	case m.Error != nil:
		e := new(Error)
		if err := json.Unmarshal(m.Error, e); err != nil || !isObject(m.Error) {
			res.err = protocolErrorf(err, "response error is not a JSON-RPC error object")
		} else {
			res.err = e
		}
	default:
		res.result = m.Result
	}
	if c.inFlight.Load() == 0 {
		ch <- res // buffered; the only send
		return
	}
	c.enqueue(inbound{resp: &heldResponse{ch: ch, res: res}})
}

// enqueue hands an item to the ordered dispatcher, waiting for room.
func (c *Conn) enqueue(it inbound) {
	c.inFlight.Add(1)
	select {
	case c.inq <- it:
	case <-c.killed:
		c.inFlight.Add(-1)
		if it.resp != nil { // taken from pending, so failPending missed it
			c.mu.Lock()
			err := c.closeErr
			c.mu.Unlock()
			it.resp.ch <- callResult{err: err}
		}
	}
}

// dispatchKey marks the context of a notification handler with its Conn.
type dispatchKey struct{}

func (c *Conn) dispatchLoop(ctx context.Context) {
	ctx = context.WithValue(ctx, dispatchKey{}, c)
	for it := range c.inq {
		if it.note != nil {
			if _, err := c.handler.Handle(ctx, it.note); err != nil {
				c.log.Debug("wire: notification handler failed", "method", it.note.Method, "error", err)
			}
		} else {
			it.resp.ch <- it.resp.res
		}
		c.inFlight.Add(-1)
	}
}

func (c *Conn) writeLoop() {
	var batch []byte
	stopping := false
	for {
		var fb *frameBuf
		if stopping {
			select {
			case fb = <-c.out:
			default:
				return
			}
		} else {
			select {
			case fb = <-c.out:
			case <-c.writerStop:
				stopping = true
				continue
			}
		}
		if len(c.out) == 0 {
			c.write(fb.b.Bytes())
			putFrameBuf(fb)
			continue
		}
		// Frames are queued faster than written: gather them into one Write.
		batch = append(batch[:0], fb.b.Bytes()...)
		putFrameBuf(fb)
	gather:
		for len(batch) < maxBatch {
			select {
			case fb = <-c.out:
				batch = append(batch, fb.b.Bytes()...)
				putFrameBuf(fb)
			default:
				break gather
			}
		}
		c.write(batch)
		if cap(batch) > 4*maxBatch {
			batch = nil
		}
	}
}

// write writes whole frames; after the first failure it discards, and the
// failure aborts the conn.
func (c *Conn) write(p []byte) {
	select {
	case <-c.killed:
		return
	default:
	}
	if _, err := c.w.Write(p); err != nil {
		c.abort(fmt.Errorf("wire: write: %w", err))
	}
}

// endCause is the cause recorded when the read side ends.
func (c *Conn) endCause(readErr error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cause != nil {
		return c.cause
	}
	return readErr
}

// setClosed stops the conn from accepting calls and notifications.
func (c *Conn) setClosed(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setClosedLocked(cause)
}

func (c *Conn) setClosedLocked(cause error) {
	if c.isClosed {
		return
	}
	if cause == errClosedLocally {
		c.closeErr = ErrConnClosed
	} else {
		c.closeErr = fmt.Errorf("%w: %w", ErrConnClosed, cause)
	}
	c.isClosed = true
	close(c.closed)
}

// failPending fails every pending call with the close error.
func (c *Conn) failPending() {
	c.mu.Lock()
	pending := c.pending
	c.pending = make(map[int64]chan callResult)
	err := c.closeErr
	c.mu.Unlock()
	for _, ch := range pending {
		ch <- callResult{err: err}
	}
}

// abort ends the conn at once: it unblocks every send, fails pending calls
// and closes r and w.
func (c *Conn) abort(cause error) {
	c.mu.Lock()
	if c.isKilled {
		c.mu.Unlock()
		return
	}
	c.isKilled = true
	c.cause = cause
	c.setClosedLocked(cause)
	close(c.killed)
	c.mu.Unlock()
	c.failPending()
	c.closeIO()
}

func (c *Conn) closeIO() {
	c.closeIOOnce.Do(func() {
		if cl, ok := c.w.(io.Closer); ok {
			_ = cl.Close()
		}
		if cl, ok := c.r.(io.Closer); ok {
			_ = cl.Close()
		}
	})
}

// runResult maps how the conn ended to Run's result.
func (c *Conn) runResult(readErr error) error {
	c.mu.Lock()
	cause := c.cause
	c.mu.Unlock()
	switch {
	case cause == errClosedLocally:
		return nil
	case cause != nil:
		return cause
	case readErr == io.EOF:
		return nil
	}
	return readErr
}
