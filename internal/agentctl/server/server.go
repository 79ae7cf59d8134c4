package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/clientopts"
)

// Defaults of Options.
const (
	DefaultReadTimeout  = 10 * time.Second
	DefaultWriteTimeout = 30 * time.Second
	// handlerGrace bounds the wait, after every runtime stopped, for
	// in-flight requests to send their answers.
	handlerGrace = 5 * time.Second
	// recheckEvery is how often pending unclean entries are re-confirmed.
	recheckEvery = 2 * time.Second
)

// Options configure a Server.
type Options struct {
	// Socket is the control socket's absolute path. Its directory also
	// holds the serve lock, the runtime journal and fabric.unclean.
	Socket string
	// Client starts runtimes (default fabric.New with Logger).
	Client *fabric.Client
	Logger *slog.Logger
	// ShutdownTimeout bounds the wait for runtimes to stop on shutdown;
	// zero leaves it to each runtime's own stop deadlines. A runtime
	// still stopping when it expires is recorded in fabric.unclean.
	ShutdownTimeout time.Duration
	// ReadTimeout bounds the wait for a request line (default 10 s).
	ReadTimeout time.Duration
	// AllowPeer decides whether a connecting uid is served (default: this
	// process's uid and root).
	AllowPeer func(uid uint32) bool
	// Deployer answers deploy requests: set by a deployment supervisor
	// (fabric serve); nil refuses them with not_a_supervisor.
	Deployer Deployer
	// TurnEnded, if set, is told of every turn an owned runtime ran (the
	// invoke operation's and InvokeRuntime's), after it ended: a
	// supervisor keeps the recent ones for its console.
	TurnEnded func(agent, runtimeID string, started time.Time, res *contract.RunResult)
	// Admit, if set, is asked before every turn addressed to agent (the
	// invoke operation's and InvokeRuntime's), also when serve owns no
	// runtime of it: a refusal is the turn's answer; otherwise release is
	// called once the turn ended. A supervisor uses it to close a drained
	// agent to new turns and to know when the ones in flight ended.
	Admit func(agent string) (release func(), refusal *agentctl.Error)
}

// Deployer answers the deploy operation. It is called on the request's
// own goroutine and must bound its own work (ctx ends at shutdown).
type Deployer interface {
	Deploy(ctx context.Context, req *agentctl.Request) *agentctl.Response
}

// errServerStopping is the cancellation cause of work cut short by shutdown.
var errServerStopping = errors.New("fabric-agent-ctl serve is shutting down")

type key struct{ agent, id string }

// entry is one runtime serve owns.
type entry struct {
	agent, id   string
	rt          *fabric.Runtime
	hostPid     int
	hostStart   uint64
	config      string
	started     time.Time
	busy        atomic.Bool
	invocations atomic.Int64
}

// Server owns runtimes and answers control requests on a Unix socket.
type Server struct {
	opts        Options
	client      *fabric.Client
	log         *slog.Logger
	socket      string
	markerPath  string
	journalPath string
	boot        string
	started     time.Time

	ln   *net.UnixListener
	lock *os.File

	base       context.Context // cancelled with errServerStopping at shutdown
	cancelBase context.CancelCauseFunc
	stopping   atomic.Bool
	force      chan struct{}
	forceOnce  sync.Once

	mu       sync.Mutex // guards runtimes and unclean
	runtimes map[key]*entry
	unclean  uncleanState

	confirmMu sync.Mutex // one confirmation pass at a time
	journalMu sync.Mutex // serializes journal writes; guards closed
	closed    bool       // shutdown is over: the journal is gone for good
	handlers  sync.WaitGroup
	// uncleanAdded wakes the recheck loop when an entry is added.
	uncleanAdded chan struct{}
}

// Result is what a shutdown achieved.
type Result struct {
	// Stopped counts runtimes whose stop was confirmed.
	Stopped int `json:"stopped"`
	// Unclean are the runtimes written to fabric.unclean (this serve's
	// unconfirmed stops and any earlier ones still unconfirmed).
	Unclean []agentctl.UncleanRuntime `json:"unclean"`
	// Marker is the marker's path when one was written, else nil.
	Marker *string `json:"marker"`
}

// Listen prepares a server: it takes the directory's serve lock, refuses
// a socket another serve answers on, removes a stale one, binds the socket
// with mode 0600, and reads (and tries to clear) what a previous serve left
// unconfirmed. Errors are *agentctl.Error (serve_already_running,
// socket_unavailable).
func Listen(opts Options) (*Server, error) {
	if !filepath.IsAbs(opts.Socket) {
		return nil, &agentctl.Error{Code: agentctl.CodeSocketUnavailable, Message: fmt.Sprintf("socket path %q is not absolute", opts.Socket)}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Client == nil {
		opts.Client = fabric.New(clientopts.With(os.Getenv, fabric.WithLogger(opts.Logger))...)
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DefaultReadTimeout
	}
	if opts.AllowPeer == nil {
		self := uint32(os.Getuid())
		opts.AllowPeer = func(uid uint32) bool { return uid == self || uid == 0 }
	}
	dir := filepath.Dir(opts.Socket)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &agentctl.Error{Code: agentctl.CodeSocketUnavailable, Message: fmt.Sprintf("cannot create %s: %v", dir, err)}
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts: opts, client: opts.Client, log: opts.Logger, socket: opts.Socket,
		markerPath: filepath.Join(dir, agentctl.MarkerFile), journalPath: filepath.Join(dir, JournalFile),
		boot: bootID(), started: time.Now(), lock: lock,
		force: make(chan struct{}), runtimes: make(map[key]*entry), uncleanAdded: make(chan struct{}, 1),
	}
	s.base, s.cancelBase = context.WithCancelCause(context.Background())
	ln, err := listenSocket(opts.Socket)
	if err != nil {
		lock.Close()
		return nil, err
	}
	s.ln = ln
	s.loadUnclean()
	return s, nil
}

// Socket is the socket path.
func (s *Server) Socket() string { return s.socket }

// Force cuts a running shutdown short: runtimes still stopping are
// recorded in fabric.unclean and Serve returns. Safe to call at any time.
func (s *Server) Force() { s.forceOnce.Do(func() { close(s.force) }) }

// Serve answers requests until ctx is done, then shuts down: new work is
// refused with server_stopping, in-flight invocations are cancelled and
// answered with server_stopping, every runtime is stopped concurrently,
// and whatever could not be confirmed is written to fabric.unclean. check
// and status are answered until the socket closes at the very end.
func (s *Server) Serve(ctx context.Context) Result {
	var wg sync.WaitGroup
	acceptDone := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(acceptDone)
		s.acceptLoop()
	}()
	recheckDone := make(chan struct{})
	go func() {
		defer wg.Done()
		s.recheckLoop(recheckDone)
	}()
	select {
	case <-ctx.Done():
	case <-acceptDone:
		s.log.Error("the control socket stopped accepting; shutting down")
	}
	res := s.shutdown()
	close(recheckDone)
	wg.Wait()
	return res
}

func (s *Server) acceptLoop() {
	delay := time.Duration(0)
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors and the like: back off and keep serving.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed", "error", err, "retry_in", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		s.handlers.Add(1)
		go func() {
			defer s.handlers.Done()
			s.handle(c)
		}()
	}
}

// recheckLoop re-confirms pending unclean entries until done is closed.
// It only ticks while some entry is pending: an idle serve uses no CPU.
func (s *Server) recheckLoop(done <-chan struct{}) {
	t := time.NewTimer(recheckEvery)
	defer t.Stop()
	armed := true
	for {
		var tick <-chan time.Time
		if armed {
			tick = t.C
		}
		select {
		case <-done:
			return
		case <-s.uncleanAdded:
			if !armed {
				t.Reset(recheckEvery)
				armed = true
			}
			continue
		case <-tick:
		}
		s.mu.Lock()
		n := len(s.unclean.pending())
		s.mu.Unlock()
		if n > 0 && !s.stopping.Load() {
			s.confirmUnclean(true, true)
		}
		s.mu.Lock()
		n = len(s.unclean.pending())
		s.mu.Unlock()
		if armed = n > 0; armed {
			t.Reset(recheckEvery)
		}
	}
}

// handle serves one connection: one request line, one response line.
func (s *Server) handle(c *net.UnixConn) {
	defer c.Close()
	begin := time.Now()
	cred, err := peerCred(c)
	if err != nil || !s.opts.AllowPeer(cred.Uid) {
		uid := int64(-1)
		if cred != nil {
			uid = int64(cred.Uid)
		}
		s.log.Warn("connection refused: another user", "peer_uid", uid, "error", err)
		s.reply(c, agentctl.Failed(nil, &agentctl.Error{Code: agentctl.CodePermissionDenied, Message: "this serve answers only its own user"}, nil))
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(s.opts.ReadTimeout))
	br := bufio.NewReaderSize(c, 4<<10)
	line, err := agentctl.ReadRequestLine(br)
	switch {
	case err == nil:
	case agentctl.IsTooLarge(err):
		s.log.Warn("request refused: too large", "peer_pid", cred.Pid)
		s.reply(c, agentctl.Failed(nil, &agentctl.Error{Code: agentctl.CodeRequestTooLarge, Field: "$", Message: fmt.Sprintf("the request line is larger than %d bytes", agentctl.MaxRequestBytes)}, nil))
		return
	case errors.Is(err, io.ErrUnexpectedEOF):
		// The last line may lack its newline when the client half-closed.
	case errors.Is(err, io.EOF):
		return // connected and left: a liveness probe of the socket
	default:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			s.reply(c, agentctl.Failed(nil, &agentctl.Error{Code: agentctl.CodeInvalidRequest, Field: "$", Message: fmt.Sprintf("no complete request line within %v", s.opts.ReadTimeout)}, nil))
		}
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	req, perr := agentctl.DecodeRequest(line)
	var resp *agentctl.Response
	if perr != nil {
		resp = agentctl.Failed(req, perr, nil)
	} else {
		resp = s.dispatch(c, req)
	}
	s.reply(c, resp)
	attrs := []any{"operation", resp.Operation, "operation_id", resp.OperationID, "status", resp.Status,
		"agent", req.Agent, "runtime_id", req.RuntimeID, "elapsed_ms", time.Since(begin).Milliseconds()}
	if resp.Error != nil {
		attrs = append(attrs, "code", resp.Error.Code, "message", resp.Error.Message)
	}
	level := slog.LevelDebug
	switch {
	case resp.Error != nil && resp.Error.Code == agentctl.CodeInternal:
		level = slog.LevelError
	case req.Operation == agentctl.OpStart || req.Operation == agentctl.OpStop || resp.Error != nil:
		level = slog.LevelInfo
	}
	s.log.Log(context.Background(), level, "request", attrs...)
}

func (s *Server) reply(c *net.UnixConn, r *agentctl.Response) {
	b, err := agentctl.EncodeResponse(r)
	if err != nil {
		b, _ = agentctl.EncodeResponse(agentctl.Failed(&agentctl.Request{OperationID: r.OperationID, Operation: r.Operation},
			&agentctl.Error{Code: agentctl.CodeInternal, Message: fmt.Sprintf("cannot encode the answer: %v", err)}, nil))
	}
	_ = c.SetWriteDeadline(time.Now().Add(DefaultWriteTimeout))
	if _, err := c.Write(b); err != nil {
		s.log.Warn("cannot send the answer", "operation", r.Operation, "operation_id", r.OperationID, "error", err)
	}
}

// dispatch runs one decoded request; a panic is answered as internal_error.
func (s *Server) dispatch(c *net.UnixConn, req *agentctl.Request) (resp *agentctl.Response) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic serving a request", "operation", req.Operation, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			resp = agentctl.Failed(req, &agentctl.Error{Code: agentctl.CodeInternal, Message: fmt.Sprintf("serve failed on this request: %v", p)}, nil)
		}
	}()
	switch req.Operation {
	case agentctl.OpStart:
		return s.start(req)
	case agentctl.OpInvoke:
		return s.invoke(c, req)
	case agentctl.OpStop:
		return s.stop(req)
	case agentctl.OpCheck:
		return s.check(req)
	case agentctl.OpStatus:
		return s.status(req)
	case agentctl.OpDecide:
		return s.decide(req)
	case agentctl.OpDeploy:
		if s.opts.Deployer == nil {
			return agentctl.Failed(req, &agentctl.Error{Code: agentctl.CodeNotSupervisor, Message: "this serve supervises no deployment; deploy requests go to a supervisor started by fabric deploy apply or fabric serve"}, nil)
		}
		return s.opts.Deployer.Deploy(s.base, req)
	}
	return agentctl.Failed(req, &agentctl.Error{Code: agentctl.CodeInvalidRequest, Field: "operation", Message: "unknown operation"}, nil)
}

// shutdown stops every runtime and records what it could not confirm.
func (s *Server) shutdown() Result {
	s.mu.Lock()
	s.stopping.Store(true)
	entries := make([]*entry, 0, len(s.runtimes))
	for _, e := range s.runtimes {
		entries = append(entries, e)
	}
	s.mu.Unlock()
	s.cancelBase(errServerStopping)
	s.log.Info("shutting down", "runtimes", len(entries), "shutdown_timeout", s.opts.ShutdownTimeout.String())

	type stopped struct {
		e   *entry
		res stopOutcome
	}
	done := make(chan stopped, len(entries))
	for _, e := range entries {
		// Each stop is bounded by the runtime's own deadlines. When the
		// shutdown budget runs out first, serve exits without waiting for
		// these goroutines; the kernel's parent-death signal ends hosts.
		go func() { done <- stopped{e, s.stopEntry(context.Background(), e)} }()
	}
	var budget <-chan time.Time
	if s.opts.ShutdownTimeout > 0 {
		t := time.NewTimer(s.opts.ShutdownTimeout)
		defer t.Stop()
		budget = t.C
	}
	pending := make(map[*entry]bool, len(entries))
	for _, e := range entries {
		pending[e] = true
	}
	res := Result{Unclean: []agentctl.UncleanRuntime{}}
wait:
	for len(pending) > 0 {
		select {
		case d := <-done:
			delete(pending, d.e)
			if d.res.err == nil {
				res.Stopped++
			}
		case <-budget:
			break wait
		case <-s.force:
			break wait
		}
	}
	now := time.Now().UnixMilli()
	s.mu.Lock()
	for e := range pending {
		s.log.Error("runtime did not stop within the shutdown budget", "runtime_id", e.id, "agent", e.agent, "host_pid", e.hostPid)
		s.addUncleanLocked(agentctl.UncleanRuntime{
			RuntimeID: e.id, Agent: e.agent, HostPid: e.hostPid, HostStartTicks: e.hostStart,
			What:             agentctl.UncleanStopTimedOut,
			Detail:           fmt.Sprintf("stop had not returned when serve's shutdown budget (%v) ran out; the host was left to the kernel's parent-death signal", s.opts.ShutdownTimeout),
			RecordedAtMillis: now,
		})
	}
	s.mu.Unlock()

	// Stop taking connections, then let in-flight requests answer.
	s.ln.Close()
	waited := make(chan struct{})
	go func() { s.handlers.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(handlerGrace):
		s.log.Warn("requests still in flight at exit")
	case <-s.force:
	}

	s.mu.Lock()
	for _, e := range s.unclean.entries {
		if !e.Confirmed {
			res.Unclean = append(res.Unclean, e.UncleanRuntime)
		}
	}
	untrusted := s.unclean.foundErr != ""
	s.mu.Unlock()
	if len(res.Unclean) == 0 && untrusted {
		// A marker serve could not trust is left for the operator.
	} else if err := s.writeMarker(res.Unclean); err != nil {
		s.log.Error("cannot write the unclean marker", "path", s.markerPath, "error", err)
	} else if len(res.Unclean) > 0 {
		res.Marker = &s.markerPath
		s.log.Warn("cleanup not confirmed for some runtimes: recorded in the unclean marker", "marker", s.markerPath, "runtimes", len(res.Unclean))
	}
	// The marker now holds everything unconfirmed; the journal can go, and
	// a stop abandoned above that ends before exit must not bring it back.
	s.journalMu.Lock()
	s.closed = true
	if err := os.Remove(s.journalPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Error("cannot remove the runtime journal", "path", s.journalPath, "error", err)
	}
	s.journalMu.Unlock()
	s.lock.Close()
	s.log.Info("stopped", "runtimes_stopped", res.Stopped, "unclean", len(res.Unclean))
	return res
}

// addUncleanLocked records one of this serve's unconfirmed cleanups.
func (s *Server) addUncleanLocked(r agentctl.UncleanRuntime) {
	for _, e := range s.unclean.entries {
		if e.RuntimeID == r.RuntimeID && !e.Confirmed {
			return
		}
	}
	s.unclean.entries = append(s.unclean.entries, &agentctl.UncleanEntry{UncleanRuntime: r, Origin: agentctl.OriginThis, Confirmation: "not confirmed yet"})
	s.unclean.boots[r.RuntimeID] = s.boot
	s.unclean.clearedAt = time.Time{}
	select {
	case s.uncleanAdded <- struct{}{}:
	default:
	}
}
