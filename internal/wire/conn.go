package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
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
	// ResponseWritten, if set, is called with the id of each request whose
	// response has been written whole, on the goroutine that wrote it:
	// it must not block.
	ResponseWritten func(id json.RawMessage)
	// Go, if set, starts the goroutine that serves a request: it must run
	// serve on a goroutine of its own and return without waiting for it.
	// It is called on the reading goroutine. A host uses it to give the
	// goroutine the stack its requests need before any frame of this
	// package is on it (adapterkit's startRequest). By default the conn
	// starts a plain goroutine.
	Go func(serve func())
	// Passive makes the Conn read only while a Call waits for its response,
	// on the goroutine of that Call: the answer then wakes the caller
	// directly instead of a reader goroutine that hands it over, which
	// saves a goroutine switch per call. Whatever the peer sends while no
	// call waits (notifications, requests, the end of the stream) is read
	// with the next call. It is meant for a client whose peer only speaks
	// when asked. A caller that gives up interrupts its read with a read
	// deadline, so Passive takes effect only if the reader has a
	// SetReadDeadline method (net.Conn, *os.File); otherwise the Conn reads
	// all the time, as without it.
	Passive bool
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
//
// Each request is handled on a goroutine of its own, so a long request
// delays nothing else.
type Conn struct {
	r   io.Reader
	w   io.Writer
	log *slog.Logger

	handler     Handler
	respWritten func(id json.RawMessage) // Options.ResponseWritten
	spawn       func(serve func())       // Options.Go
	maxIn       int32
	fr          *FrameReader
	limit       int

	out        chan *frameBuf // to the writer
	inq        chan inbound   // to the ordered dispatcher
	readDone   chan error     // the error that ended reading (sent once)
	writerStop chan struct{}  // closed when no more responses will be queued
	killed     chan struct{}  // closed by abort: give up blocked sends
	closed     chan struct{}  // closed when the conn stops accepting calls

	// Inline writes: a frame is written by the goroutine that produced it
	// (see tryWriter) when no frame is queued (queued == 0) and nobody is
	// writing (wmu is free). wmu is held for every write to w; queued
	// counts the frames given to the writer goroutine (or on their way to
	// it, or the tail of a frame written in part) until they are written.
	fast    tryWriter
	wmu     sync.Mutex
	queued  atomic.Int64
	rest    []byte        // under wmu: unwritten tail of an inline frame
	restFB  *frameBuf     // under wmu: the frame rest belongs to
	kick    chan struct{} // tells the writer that rest is waiting
	wclosed bool          // under wmu: the writer goroutine has ended

	hctx context.Context // handlers' context, set by Run before reading

	// Passive reading: the read role is a token in role while nobody
	// reads; a Call takes it to read, and gives it back when its own answer
	// has been read. dl interrupts the read of a caller that gives up.
	passive bool
	dl      interface{ SetReadDeadline(time.Time) error }
	role    chan struct{}
	respID  int64 // with the role: id of the last response routed
	yielded bool  // with the role: handed to a helper goroutine

	active   atomic.Int32 // request handlers running
	inFlight atomic.Int64 // items queued to or being handled by the dispatcher
	handlers sync.WaitGroup

	// mu guards the conn's state below; wmu above only serializes writes.
	mu        sync.Mutex
	running   bool // Run has been called
	readEnded bool // set before readDone is sent
	nextID    int64
	dlOwner   int64 // the call reading (passive), whose cancellation interrupts the read
	dlSet     bool  // a read deadline is set
	pending   map[int64]chan callResult
	isClosed  bool
	closeErr  error // what Call and Notify return once closed
	cause     error // why abort was called; nil if it was not
	isKilled  bool

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
	dl, _ := r.(interface{ SetReadDeadline(time.Time) error })
	c := &Conn{
		r:           r,
		w:           w,
		log:         log,
		handler:     opts.Handler,
		respWritten: opts.ResponseWritten,
		spawn:       opts.Go,
		maxIn:       int32(min(opts.MaxConcurrency, 1<<30)),
		fr:          NewFrameReader(r, opts.MaxFrame),
		limit:       opts.MaxFrame,
		out:         make(chan *frameBuf, opts.OutboundQueue),
		inq:         make(chan inbound, opts.InboundQueue),
		readDone:    make(chan error, 1),
		writerStop:  make(chan struct{}),
		killed:      make(chan struct{}),
		closed:      make(chan struct{}),
		pending:     make(map[int64]chan callResult),
		fast:        nonblockingWriter(w),
		kick:        make(chan struct{}, 1),
		passive:     opts.Passive && dl != nil,
		dl:          dl,
		role:        make(chan struct{}, 1),
	}
	return c
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
	c.mu.Lock()
	again, killed := c.running, c.isKilled
	c.running = true
	c.mu.Unlock()
	if again {
		return errors.New("wire: Conn.Run called more than once")
	}
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

	c.hctx = hctx
	var readErr error
	if c.passive {
		c.role <- struct{}{} // callers may read from now on
		select {
		case readErr = <-c.readDone:
		case <-c.killed:
			// A reader sees its stream closed and reports; or nobody
			// reads, and the role is taken for good.
			select {
			case readErr = <-c.readDone:
			case <-c.role:
			}
		}
	} else {
		c.handlers.Go(c.readLoop)
		readErr = <-c.readDone
	}
	// From here on nothing reads or routes frames.
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

// CloseWithCause is Close for a reason: the pending calls, and calls made
// later, fail with an error that wraps both ErrConnClosed and cause, and a
// running Run returns cause. A nil cause is Close. Only the first of Close
// and CloseWithCause counts.
func (c *Conn) CloseWithCause(cause error) {
	if cause == nil {
		cause = errClosedLocally
	}
	c.abort(cause)
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
	id, ch, err := c.register()
	if err != nil {
		return err
	}
	fb, err := encodeCall(id, method, params, c.limit)
	if err != nil {
		c.forget(id)
		return err
	}

	if !c.writeInline(fb) {
		if err := c.send(ctx, fb); err != nil {
			c.forget(id)
			return err
		}
	}
	var res callResult
	if c.passive {
		var ok bool
		if res, ok = c.awaitReading(ctx, id, ch); !ok {
			c.forget(id)
			return ctx.Err()
		}
	} else {
		select {
		case res = <-ch:
		case <-ctx.Done():
			c.forget(id)
			return ctx.Err()
		}
	}
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
}

// awaitReading waits for the answer to call id on a passive conn, reading
// for the whole conn whenever nobody else does and the answer has not been
// read yet. It reports false if ctx ended first.
func (c *Conn) awaitReading(ctx context.Context, id int64, ch chan callResult) (callResult, bool) {
	role := c.role
	for {
		select {
		case res := <-ch:
			return res, true
		default:
		}
		if ctx.Err() != nil {
			return callResult{}, false
		}
		select {
		case res := <-ch:
			return res, true
		case <-ctx.Done():
			return callResult{}, false
		case <-role:
			if c.readFor(ctx, id) || isDone(c.killed) {
				// The answer has been read, and is in ch or on its way
				// through the dispatcher; or the conn is dead and fails
				// the call.
				role = nil
			}
		}
	}
}

// readFor reads and routes frames, holding the read role, until the answer
// to call id has been read, ctx ends or reading fails, and reports whether
// the answer has been read. Then it gives the role back, which wakes a
// caller waiting for it, unless reading has ended for good or the role went
// to a helper.
func (c *Conn) readFor(ctx context.Context, id int64) (answered bool) {
	c.mu.Lock()
	c.dlOwner = id
	c.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { c.interrupt(id) })
	release := true
	for ctx.Err() == nil && !isDone(c.killed) {
		if !c.isPending(id) { // read by the previous reader
			answered = true
			break
		}
		c.clearDeadline()
		frame, err := c.fr.ReadFrame()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && (ctx.Err() != nil || c.deadlineSet()) {
				continue // interrupted: the loop sees ctx has ended
			}
			c.endReading(err)
			release = false
			break
		}
		c.respID = 0
		err = c.handleFrameFor(ctx, frame)
		yielded := c.yielded
		c.yielded = false
		if err != nil {
			c.endReading(err)
			release = false
			break
		}
		if yielded {
			release = false
			break
		}
		if c.respID == id {
			answered = true
			break
		}
	}
	stop()
	c.mu.Lock()
	c.dlOwner = 0
	c.mu.Unlock()
	if release {
		c.fr.release() // between calls an idle connection holds no read buffer
		c.role <- struct{}{}
	}
	return answered
}

// The calls in flight, c.pending, change only through register, take and
// takeAll.

// register adds a call in flight, or returns the close error.
func (c *Conn) register() (int64, chan callResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isClosed {
		return 0, nil, c.closeErr
	}
	c.nextID++
	ch := make(chan callResult, 1)
	c.pending[c.nextID] = ch
	return c.nextID, ch, nil
}

// take removes call id and returns its channel, nil if it is no longer in
// flight (answered, abandoned or failed).
func (c *Conn) take(id int64) chan callResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.pending[id]
	delete(c.pending, id)
	return ch
}

// takeAll removes every call in flight, for failing them with the close
// error it returns.
func (c *Conn) takeAll() (map[int64]chan callResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pending := c.pending
	c.pending = make(map[int64]chan callResult)
	return pending, c.closeErr
}

func (c *Conn) isPending(id int64) bool {
	c.mu.Lock()
	_, ok := c.pending[id]
	c.mu.Unlock()
	return ok
}

// closedErr returns the error Call and Notify return once the conn is
// closed, nil before.
func (c *Conn) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

// interrupt makes the read of call id, if it is still reading, return at
// once.
func (c *Conn) interrupt(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dlOwner == id {
		c.dlSet = true
		_ = c.dl.SetReadDeadline(time.Unix(1, 0))
	}
}

func (c *Conn) deadlineSet() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dlSet
}

func (c *Conn) clearDeadline() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dlSet {
		c.dlSet = false
		_ = c.dl.SetReadDeadline(time.Time{})
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
	if err := c.closedErr(); err != nil {
		return err
	}
	fb, err := encodeCall(0, method, params, c.limit)
	if err != nil {
		return err
	}
	// Written at once when nothing is queued or being written; otherwise
	// the writer gathers what queued up into few writes.
	if c.writeInline(fb) {
		return nil
	}
	return c.send(ctx, fb)
}

// send queues a frame of a Call or Notify.
func (c *Conn) send(ctx context.Context, fb *frameBuf) error {
	c.queued.Add(1)
	select {
	case c.out <- fb:
		return nil
	case <-ctx.Done():
		c.queued.Add(-1)
		return ctx.Err()
	case <-c.closed:
		c.queued.Add(-1)
		return c.closedErr()
	}
}

// reply sends a response. Responses are still written after the read side
// has ended, until Run stops the writer, but are dropped once the conn is
// aborted.
func (c *Conn) reply(fb *frameBuf) {
	if c.writeInline(fb) {
		return
	}
	c.queued.Add(1)
	select {
	case c.out <- fb:
	case <-c.killed:
		c.queued.Add(-1)
	}
}

// writeInline writes fb from the calling goroutine if that can be done
// without blocking and without overtaking a frame queued earlier: nothing
// is queued and nobody is writing. It reports whether it took fb; if the
// stream could take only part of it, the writer goroutine writes the rest
// before any other frame.
func (c *Conn) writeInline(fb *frameBuf) bool {
	if c.fast == nil || c.queued.Load() != 0 || !c.wmu.TryLock() {
		return false
	}
	// Queued frames are counted before they reach the queue, and counted
	// off only after the writer wrote them under wmu: with wmu held and
	// nothing counted, no frame queued before fb is still unwritten.
	if c.queued.Load() != 0 || c.wclosed || isDone(c.killed) {
		c.wmu.Unlock()
		return false
	}
	p := fb.b.Bytes()
	n, err := c.fast.TryWrite(p)
	switch {
	case err != nil:
		c.wmu.Unlock()
		c.abort(fmt.Errorf("wire: write: %w", err))
	case n >= len(p):
		c.wmu.Unlock()
		c.written(fb)
	case n == 0:
		c.wmu.Unlock()
		return false
	default:
		// Part of the frame is out: nothing else may be written before
		// its tail, which the writer goroutine now owns.
		c.rest, c.restFB = p[n:], fb
		c.queued.Add(1)
		c.wmu.Unlock()
		select {
		case c.kick <- struct{}{}:
		default: // a kick is already pending
		}
	}
	return true
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (c *Conn) forget(id int64) { c.take(id) }

// endReading reports the error that ends reading for good to Run.
func (c *Conn) endReading(err error) {
	c.mu.Lock()
	c.readEnded = true
	c.mu.Unlock()
	c.readDone <- err
}

// releaseRole gives the read role back on a passive conn, unless reading
// has ended.
func (c *Conn) releaseRole() {
	c.mu.Lock()
	ended := c.readEnded
	c.mu.Unlock()
	if !ended {
		c.role <- struct{}{}
	}
}

// readLoop reads and routes frames until reading fails, which it reports
// on readDone.
func (c *Conn) readLoop() {
	for {
		frame, err := c.fr.ReadFrame()
		if err == nil {
			err = c.handleFrameFor(nil, frame)
		}
		if err != nil {
			c.endReading(err)
			return
		}
	}
}

// handleFrameFor classifies one frame and routes it. Only a frame that is
// not JSON at all is fatal. caller is the context of the Call reading on a
// passive conn, nil otherwise.
//
// readMessage fills m in place: returned by value, the message and its
// copy made this frame 488 bytes rather than 280, and a read loop
// outgrew its first 2 KiB stack while decoding its first frame. That copy
// read the pc tables of the eight frames on the stack (see adapterkit's
// growStack), one 64 KiB window of the binary no other code of an idle
// host touches: bench/idle, host RSS median 6.30 -> 6.24 MiB.
func (c *Conn) handleFrameFor(caller context.Context, frame []byte) error {
	var m inMessage
	shape, err := readMessage(frame, &m)
	if err != nil {
		c.replyFrom(caller, encodeResponse(nil, nil, &Error{Code: CodeParseError, Message: "parse error"}, c.limit))
		return protocolErrorf(err, "frame is not JSON")
	}
	switch {
	case shape != "":
		c.invalid(caller, m.ID, shape)
	case m.Method != "" && m.ID == nil:
		if m.JSONRPC != "2.0" {
			c.log.Debug("wire: dropping notification without jsonrpc 2.0", "method", truncate(m.Method, 64))
			return nil
		}
		c.notification(caller, &Request{Method: m.Method, Params: m.Params})
	case m.Method != "" && !validID(m.ID):
		c.invalid(caller, nil, "id must be a string or a number")
	case m.Method != "" && m.JSONRPC != "2.0":
		c.invalid(caller, m.ID, `jsonrpc must be "2.0"`)
	case m.Method != "":
		c.request(caller, &Request{ID: m.ID, Method: m.Method, Params: m.Params})
	case m.ID != nil && (m.Result != nil || m.Error != nil):
		c.response(caller, &m)
	default:
		c.invalid(caller, m.ID, "neither a request, a notification nor a response")
	}
	return nil
}

// replyFrom sends a response the reader produces itself. A passive reader
// whose caller gives up while the queue is full hands the wait, and the
// read role with it, to a helper goroutine, and sets c.yielded (as
// enqueue does).
func (c *Conn) replyFrom(caller context.Context, fb *frameBuf) {
	if caller == nil {
		c.reply(fb)
		return
	}
	if c.writeInline(fb) {
		return
	}
	c.queued.Add(1)
	select {
	case c.out <- fb:
	case <-c.killed:
		c.queued.Add(-1)
	case <-caller.Done():
		c.yielded = true
		c.handlers.Go(func() {
			select {
			case c.out <- fb:
			case <-c.killed:
				c.queued.Add(-1)
			}
			c.releaseRole()
		})
	}
}

// invalid answers an invalid message with CodeInvalidRequest, echoing the
// id when it is usable.
func (c *Conn) invalid(caller context.Context, id json.RawMessage, msg string) {
	if !validID(id) {
		id = nil
	}
	c.log.Debug("wire: invalid message", "reason", msg)
	c.replyFrom(caller, encodeResponse(id, nil, &Error{Code: CodeInvalidRequest, Message: msg}, c.limit))
}

// request serves a request on a goroutine of its own.
func (c *Conn) request(caller context.Context, req *Request) {
	if c.handler == nil {
		c.replyFrom(caller, encodeResponse(req.ID, nil, &Error{Code: CodeMethodNotFound, Message: "method not found: " + req.Method}, c.limit))
		return
	}
	// Only the reading goroutine increments active, so the check cannot
	// race past the limit.
	if c.active.Load() >= c.maxIn {
		c.log.Warn("wire: too many requests in flight", "method", req.Method, "limit", c.maxIn)
		c.replyFrom(caller, encodeResponse(req.ID, nil, &Error{Code: CodeOverloaded, Message: "too many requests in flight"}, c.limit))
		return
	}
	c.active.Add(1)
	if c.spawn == nil {
		c.handlers.Go(func() { c.serveRequest(req) })
		return
	}
	c.handlers.Add(1)
	c.spawn(func() {
		defer c.handlers.Done()
		c.serveRequest(req)
	})
}

func (c *Conn) serveRequest(req *Request) {
	result, err := c.handler.Handle(c.hctx, req)
	// The slot is free before the answer goes out: a peer that sends its
	// next request on the answer is not told the conn is overloaded.
	c.active.Add(-1)
	var rpcErr *Error
	if err != nil {
		rpcErr = toRPCError(err)
	}
	c.reply(encodeResponse(req.ID, result, rpcErr, c.limit))
}

func (c *Conn) notification(caller context.Context, note *Request) {
	if c.handler == nil {
		return
	}
	c.enqueue(caller, inbound{note: note})
}

func (c *Conn) response(caller context.Context, m *inMessage) {
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
	ch := c.take(id)
	c.respID = id // only the reader writes it; only a passive reader reads it
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
	c.enqueue(caller, inbound{resp: &heldResponse{ch: ch, res: res}})
}

// enqueue hands an item to the ordered dispatcher, waiting for room. A
// passive reader whose caller gives up meanwhile hands the wait, and the
// read role with it, to a helper goroutine (nothing else may be routed
// before the item), and sets c.yielded.
func (c *Conn) enqueue(caller context.Context, it inbound) {
	c.inFlight.Add(1)
	var done <-chan struct{}
	if caller != nil {
		done = caller.Done()
	}
	select {
	case c.inq <- it:
	case <-c.killed:
		c.dropItem(it)
	case <-done:
		c.yielded = true
		c.handlers.Go(func() {
			select {
			case c.inq <- it:
			case <-c.killed:
				c.dropItem(it)
			}
			c.releaseRole()
		})
	}
}

func (c *Conn) dropItem(it inbound) {
	c.inFlight.Add(-1)
	if it.resp != nil { // taken from pending, so failPending missed it
		it.resp.ch <- callResult{err: c.closedErr()}
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
	var frames []*frameBuf // those in batch
	stopping := false
	for {
		var fb *frameBuf
		if stopping {
			select {
			case fb = <-c.out:
			default:
				// Done once nothing is queued or left over; from then on
				// frames can no longer be written inline either.
				c.wmu.Lock()
				c.writeRestLocked()
				if len(c.out) == 0 {
					c.wclosed = true
					c.wmu.Unlock()
					return
				}
				c.wmu.Unlock()
				continue
			}
		} else {
			select {
			case fb = <-c.out:
			case <-c.kick:
				c.flushRest()
				continue
			case <-c.writerStop:
				stopping = true
				continue
			}
		}
		c.wmu.Lock()
		c.writeRestLocked()
		if len(c.out) == 0 {
			if c.write(fb.b.Bytes()) {
				c.written(fb)
			}
			c.queued.Add(-1)
			c.wmu.Unlock()
			continue
		}
		// Frames are queued faster than written: gather them into one Write.
		batch = append(batch[:0], fb.b.Bytes()...)
		frames = append(frames[:0], fb)
	gather:
		for len(batch) < maxBatch {
			select {
			case fb = <-c.out:
				batch = append(batch, fb.b.Bytes()...)
				frames = append(frames, fb)
			default:
				break gather
			}
		}
		if c.write(batch) {
			for _, fb := range frames {
				c.written(fb)
			}
		}
		c.queued.Add(-int64(len(frames)))
		clear(frames)
		c.wmu.Unlock()
		if cap(batch) > 4*maxBatch {
			batch = nil
		}
	}
}

// flushRest writes the tail of a frame written inline in part.
func (c *Conn) flushRest() {
	c.wmu.Lock()
	c.writeRestLocked()
	c.wmu.Unlock()
}

func (c *Conn) writeRestLocked() {
	if c.restFB == nil {
		return
	}
	if c.write(c.rest) {
		c.written(c.restFB)
	}
	c.rest, c.restFB = nil, nil
	c.queued.Add(-1)
}

// write writes whole frames and reports whether they went out; after the
// first failure it discards, and the failure aborts the conn. The caller
// holds wmu.
func (c *Conn) write(p []byte) bool {
	if isDone(c.killed) {
		return false
	}
	if _, err := c.w.Write(p); err != nil {
		c.abort(fmt.Errorf("wire: write: %w", err))
		return false
	}
	return true
}

// written reports a frame that has been written whole.
func (c *Conn) written(fb *frameBuf) {
	if fb.respID != nil && c.respWritten != nil {
		c.respWritten(fb.respID)
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
	pending, err := c.takeAll()
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
