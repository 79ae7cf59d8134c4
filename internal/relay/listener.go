package relay

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Path is the only path the listener serves.
const Path = "/atof"

// Defaults, upstream's values where upstream has one (docs/relay.md).
const (
	DefaultMaxRecordBytes    = 1 << 20  // one record (NDJSON line); upstream _MAX_RECORD_BYTES
	DefaultMaxRecords        = 1024     // records buffered per turn; upstream _QUEUE_MAXSIZE
	DefaultMaxBytes          = 16 << 20 // bytes buffered per turn; upstream _QUEUE_MAX_BYTES
	DefaultMaxPending        = 256      // records per turn waiting for their parent
	DefaultBackpressureWait  = 2 * time.Second
	DefaultDrainWindow       = 250 * time.Millisecond // upstream _DRAIN_SECONDS
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10 // upstream's asyncio stream limit
	responseWriteTimeout     = 10 * time.Second
	rejectLinger             = time.Second // a refused connection lingers at most this long
	rejectDrainBytes         = 256 << 10
)

// Errors returned by BeginTurn and Close.
var (
	ErrClosed     = errors.New("relay: listener closed")
	ErrTurnActive = errors.New("relay: the runtime already has an active turn")
)

// Options configure a Listener. Zero values take the defaults.
type Options struct {
	// Host is the address to bind, default 127.0.0.1. It must be a
	// loopback address unless AllowNonLoopback is set.
	Host string
	// Port to bind; 0 picks an ephemeral port.
	Port int
	// AllowNonLoopback permits binding beyond loopback (a gateway in
	// another network namespace); it forces RequireToken.
	AllowNonLoopback bool
	// RequireToken makes the listener demand "Authorization: Bearer
	// <token>" (401 otherwise). The token reaches Relay through the
	// adapter host's environment (SinkConfig.Env) and header_env. Upstream
	// has no token, and Relay refuses to activate when a header_env
	// variable is unset, so this is off by default.
	RequireToken bool

	MaxRecordBytes int   // largest record; default 1 MiB, at most MaxBytes
	MaxRecords     int   // records buffered per turn; default 1,024
	MaxBytes       int64 // record bytes buffered per turn; default 16 MiB
	MaxPending     int   // records per turn parked until their parent arrives; default 256
	// MaxBodyBytes caps one request body (413 when exceeded). Default 0:
	// no cap, because Relay's ndjson transport keeps one upload open for
	// the whole session; MaxRecordBytes bounds memory instead.
	MaxBodyBytes int64

	// BackpressureWait is how long a request waits for room in a full turn
	// buffer before the record is dropped and counted. Waiting stops
	// reading the body, which pushes back on Relay over TCP; Relay's own
	// sink timeout (3 s by default) bounds how long it tolerates that, so
	// the default of 2 s stays below it. Negative: drop at once.
	BackpressureWait time.Duration
	// DrainWindow is how long Turn.End keeps admitting late records,
	// unless the turn's root scope has already ended. Default 250 ms, as
	// upstream; negative: none.
	DrainWindow time.Duration

	ReadHeaderTimeout time.Duration // default 10 s
	IdleTimeout       time.Duration // between requests on a kept-alive connection; default 60 s
	// BodyIdleTimeout, when positive, ends an upload that sends nothing
	// for that long. Default 0: none, as upstream; an ndjson upload is
	// legitimately quiet while the model thinks.
	BodyIdleTimeout time.Duration

	Logger *slog.Logger // the caller's logger (nil discards); never given record contents or the token
}

func (o Options) withDefaults() Options {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.AllowNonLoopback {
		o.RequireToken = true
	}
	if o.MaxRecords <= 0 {
		o.MaxRecords = DefaultMaxRecords
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxRecordBytes <= 0 {
		o.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if int64(o.MaxRecordBytes) > o.MaxBytes {
		o.MaxRecordBytes = int(o.MaxBytes)
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.BackpressureWait == 0 {
		o.BackpressureWait = DefaultBackpressureWait
	}
	if o.DrainWindow == 0 {
		o.DrainWindow = DefaultDrainWindow
	}
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// ListenerStats count what reached the listener as a whole. Per-turn
// counts are in Stats.
type ListenerStats struct {
	Uploads      int `json:"uploads"`      // POST /atof requests whose body was read
	Records      int `json:"records"`      // records parsed
	Discarded    int `json:"discarded"`    // records for a runtime without an active turn (upstream discards them too)
	Uncorrelated int `json:"uncorrelated"` // records without a runtime key that no active turn admitted
	Malformed    int `json:"malformed"`    // lines that were not a JSON object
	Oversized    int `json:"oversized"`    // lines longer than MaxRecordBytes
	Rejected     int `json:"rejected"`     // requests answered 401, 404 or 411
}

// Listener is the ATOF endpoint. One listener serves any number of
// runtimes; each runtime has at most one active turn.
type Listener struct {
	opts  Options
	log   *slog.Logger
	ln    net.Listener
	srv   *http.Server
	url   string // http://host:port/atof
	token string

	closing   chan struct{} // closed by Close
	serveDone chan struct{}
	closeOnce sync.Once
	closeErr  error

	mu       sync.Mutex
	closed   bool
	inflight int           // handlers running
	idle     chan struct{} // closed when closed && inflight == 0
	turns    map[string]*Turn
	order    []*Turn        // active turns, oldest first
	uploads  map[string]int // open uploads by runtime key ("" = none)
	stats    ListenerStats
}

// NewListener binds the listener and starts serving. Close releases it.
func NewListener(opts Options) (*Listener, error) {
	opts = opts.withDefaults()
	ln, err := net.Listen("tcp", net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)))
	if err != nil {
		return nil, fmt.Errorf("relay: listen: %w", err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	if !opts.AllowNonLoopback && !addr.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("relay: %s is not a loopback address (set AllowNonLoopback to bind beyond loopback)", opts.Host)
	}
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	l := &Listener{
		opts:      opts,
		log:       opts.Logger,
		ln:        ln,
		url:       "http://" + net.JoinHostPort(host, strconv.Itoa(addr.Port)) + Path,
		closing:   make(chan struct{}),
		serveDone: make(chan struct{}),
		idle:      make(chan struct{}),
		turns:     make(map[string]*Turn),
		uploads:   make(map[string]int),
	}
	if opts.RequireToken {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			ln.Close()
			return nil, fmt.Errorf("relay: token: %w", err)
		}
		l.token = hex.EncodeToString(b[:])
	}
	l.srv = &http.Server{
		Handler:           l,
		ReadHeaderTimeout: opts.ReadHeaderTimeout,
		IdleTimeout:       opts.IdleTimeout,
		MaxHeaderBytes:    DefaultMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelDebug),
	}
	go func() {
		defer close(l.serveDone)
		l.srv.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	return l, nil
}

// Addr is the bound address.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// URL is the endpoint, http://host:port/atof (without a runtime key).
func (l *Listener) URL() string { return l.url }

// Stats returns the listener-wide counts so far.
func (l *Listener) Stats() ListenerStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// Close stops the listener: it closes every connection (an upload in
// progress ends there), ends every active turn (flushing what is queued to
// its sink while ctx allows; see Turn.End), and waits for every handler and
// the server goroutine. It is safe to call more than once.
func (l *Listener) Close(ctx context.Context) error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		if l.inflight == 0 {
			close(l.idle)
		}
		turns := slices.Clone(l.order)
		l.mu.Unlock()
		close(l.closing)
		err := l.srv.Close()
		select {
		case <-l.idle:
		case <-ctx.Done():
			err = errors.Join(err, fmt.Errorf("relay: waiting for handlers: %w", ctx.Err()))
			<-l.idle // the connections are closed; handlers return promptly
		}
		for _, t := range turns {
			t.end(ctx, false)
		}
		<-l.serveDone
		l.closeErr = err
	})
	return l.closeErr
}

func (l *Listener) isClosing() bool {
	select {
	case <-l.closing:
		return true
	default:
		return false
	}
}

// ServeHTTP implements the ATOF endpoint (docs/relay.md has the rules).
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		reply(w, http.StatusServiceUnavailable)
		return
	}
	l.inflight++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.inflight--
		if l.closed && l.inflight == 0 {
			close(l.idle)
		}
		l.mu.Unlock()
	}()

	// Upstream answers 404 to any other method or path; the query string
	// is not part of the match.
	if r.URL.Path != Path || r.Method != http.MethodPost {
		l.reject(w, r, http.StatusNotFound)
		return
	}
	if l.token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+l.token)) != 1 {
		l.reject(w, r, http.StatusUnauthorized)
		return
	}
	// net/http has already answered 400 to a malformed or negative
	// Content-Length and 501 to a transfer coding other than chunked.
	if len(r.TransferEncoding) == 0 && len(r.Header.Values("Content-Length")) == 0 {
		l.reject(w, r, http.StatusLengthRequired)
		return
	}
	key := r.URL.Query().Get(RuntimeQuery)
	l.uploadStarted(key)

	var body io.Reader = r.Body
	if l.opts.MaxBodyBytes > 0 {
		body = http.MaxBytesReader(w, r.Body, l.opts.MaxBodyBytes)
	}
	if l.opts.BodyIdleTimeout > 0 {
		body = &idleReader{r: body, rc: http.NewResponseController(w), d: l.opts.BodyIdleTimeout}
	}
	// The first read sends "100 Continue" when the client asked for it.
	lr := NewLineReader(body, l.opts.MaxRecordBytes)
	status := http.StatusOK
	interrupted := false
	var malformedN, oversizedN int
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, ErrRecordTooLarge) {
			oversizedN++
			l.count(key, func(s *ListenerStats) { s.Oversized++ }, func(s *Stats) { s.Oversized++ })
			continue
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				status = http.StatusRequestEntityTooLarge
			} else {
				status = http.StatusBadRequest
				interrupted = true
			}
			l.log.Debug("relay: ATOF upload ended early", "runtime_id", key, "status", status, "error", err)
			break
		}
		rec, err := ParseRecord(line)
		if err != nil {
			malformedN++
			l.count(key, func(s *ListenerStats) { s.Malformed++ }, func(s *Stats) { s.Malformed++ })
			continue
		}
		l.route(key, rec)
	}
	l.uploadEnded(key, interrupted)
	if status == http.StatusOK {
		// Bad records were skipped so that the rest of a long-lived
		// upload still counts; the status reports them at the end.
		switch {
		case oversizedN > 0:
			status = http.StatusRequestEntityTooLarge
		case malformedN > 0:
			status = http.StatusBadRequest
		}
	}
	if status != http.StatusOK {
		w.Header().Set("Connection", "close")
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(responseWriteTimeout))
	reply(w, status)
}

// reject answers a request whose body is not wanted and closes the
// connection, as upstream does. net/http alone would keep the connection
// open waiting for a body that a client expecting 100 Continue never sends,
// so the connection is taken over: the reply is written, the write side
// shut, and whatever the client still sends is read (bounded in time and
// bytes) so that closing does not reset the connection under the reply.
func (l *Listener) reject(w http.ResponseWriter, r *http.Request, status int) {
	l.mu.Lock()
	l.stats.Rejected++
	l.mu.Unlock()
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		w.Header().Set("Connection", "close")
		reply(w, status)
		return
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(rejectLinger))
	text := http.StatusText(status)
	fmt.Fprintf(brw, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", status, text, len(text))
	if r.Method != http.MethodHead {
		brw.WriteString(text)
	}
	if brw.Flush() != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	io.Copy(io.Discard, io.LimitReader(brw, rejectDrainBytes))
}

func reply(w http.ResponseWriter, status int) {
	text := http.StatusText(status)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(text)))
	w.WriteHeader(status)
	io.WriteString(w, text)
}

// idleReader gives every read of a request body its own deadline.
type idleReader struct {
	r  io.Reader
	rc *http.ResponseController
	d  time.Duration
}

func (b *idleReader) Read(p []byte) (int, error) {
	b.rc.SetReadDeadline(time.Now().Add(b.d))
	return b.r.Read(p)
}

// turnsFor returns the turns a request with key may feed: the runtime's
// active turn, or for a request without a key every active turn. Called
// with l.mu held.
func (l *Listener) turnsFor(key string) []*Turn {
	if key != "" {
		if t := l.turns[key]; t != nil {
			return []*Turn{t}
		}
		return nil
	}
	return l.order
}

// single returns the one turn a request with key feeds without ambiguity:
// its runtime's turn, or, without a key, the only active turn. Called with
// l.mu held.
func (l *Listener) single(key string) *Turn {
	if ts := l.turnsFor(key); len(ts) == 1 {
		return ts[0]
	}
	return nil
}

func (l *Listener) uploadStarted(key string) {
	l.mu.Lock()
	l.stats.Uploads++
	l.uploads[key]++
	ts := l.turnsFor(key)
	for _, t := range ts {
		t.mu.Lock()
		t.stats.Uploads++
		t.mu.Unlock()
	}
	l.mu.Unlock()
}

func (l *Listener) uploadEnded(key string, interrupted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.uploads[key]--; l.uploads[key] <= 0 {
		delete(l.uploads, key)
	}
	if !interrupted {
		return
	}
	for _, t := range l.turnsFor(key) {
		t.mu.Lock()
		t.stats.Interrupted++
		t.mu.Unlock()
	}
}

// count adds to the listener's stats and to the stats of the turn the
// request unambiguously feeds.
func (l *Listener) count(key string, ls func(*ListenerStats), ts func(*Stats)) {
	l.mu.Lock()
	ls(&l.stats)
	t := l.single(key)
	if t != nil {
		t.mu.Lock()
		if !t.ended {
			ts(&t.stats)
		}
		t.mu.Unlock()
	}
	l.mu.Unlock()
}

// route offers a record to the turns its request may feed.
func (l *Listener) route(key string, rec *Record) {
	l.mu.Lock()
	l.stats.Records++
	cands := l.turnsFor(key)
	var one *Turn
	if len(cands) == 1 {
		one = cands[0]
	} else {
		cands = slices.Clone(cands)
	}
	l.mu.Unlock()
	switch {
	case one != nil:
		if one.offer(rec, false) {
			return
		}
	case len(cands) > 1:
		// Several turns, no runtime key: only unambiguous evidence (the
		// request id, a known parent) decides.
		for _, t := range cands {
			if t.offer(rec, true) {
				return
			}
		}
		l.mu.Lock()
		l.stats.Uncorrelated++
		l.mu.Unlock()
		return
	}
	l.mu.Lock()
	l.stats.Discarded++
	l.mu.Unlock()
}
