package modelstub

import (
	"compress/gzip"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for Options.
const (
	DefaultMaxBodyBytes   = 32 << 20
	DefaultMaxRecords     = 10_000
	DefaultMaxRecordBytes = 256 << 20
)

// Options configure a Server. An Options value is itself an Option: its
// non-zero fields are applied.
type Options struct {
	// ExpectKey, when not empty, is the API key every API request must
	// carry in a header its API uses (Authorization: Bearer or api-key for
	// OpenAI, x-api-key or Authorization: Bearer for Anthropic,
	// x-goog-api-key or ?key= for Gemini). Others get 401.
	ExpectKey string
	// MaxBodyBytes bounds request bodies (after decompression); larger ones
	// get 413. Default DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxRecords bounds the request records kept; the oldest go first.
	// Default DefaultMaxRecords.
	MaxRecords int
	// MaxRecordBytes bounds the recorded bodies' total size; the oldest
	// records go first. Default DefaultMaxRecordBytes.
	MaxRecordBytes int64
	// Logger receives one record per request (never a credential). Nil
	// means no logging.
	Logger *slog.Logger
}

// Option configures a Server.
type Option interface{ apply(*Options) }

func (o Options) apply(dst *Options) {
	if o.ExpectKey != "" {
		dst.ExpectKey = o.ExpectKey
	}
	if o.MaxBodyBytes > 0 {
		dst.MaxBodyBytes = o.MaxBodyBytes
	}
	if o.MaxRecords > 0 {
		dst.MaxRecords = o.MaxRecords
	}
	if o.MaxRecordBytes > 0 {
		dst.MaxRecordBytes = o.MaxRecordBytes
	}
	if o.Logger != nil {
		dst.Logger = o.Logger
	}
}

type optionFunc func(*Options)

func (f optionFunc) apply(o *Options) { f(o) }

// WithExpectKey makes the server require key (see Options.ExpectKey).
func WithExpectKey(key string) Option { return optionFunc(func(o *Options) { o.ExpectKey = key }) }

// WithLogger logs one record per request to l.
func WithLogger(l *slog.Logger) Option { return optionFunc(func(o *Options) { o.Logger = l }) }

// WithMaxBodyBytes bounds request bodies.
func WithMaxBodyBytes(n int64) Option { return optionFunc(func(o *Options) { o.MaxBodyBytes = n }) }

// Server is a running scripted model endpoint.
type Server struct {
	opts   Options
	ln     net.Listener
	srv    *http.Server
	url    string
	done   chan struct{} // closed by Close: releases stalls and slow streams
	served chan struct{} // closed when Serve returns
	once   sync.Once
	client *http.Client
	ids    atomic.Int64
	active atomic.Int64 // handlers running

	connMu  sync.Mutex
	conns   map[net.Conn]http.ConnState
	closing bool

	mu      sync.Mutex
	script  *Script
	seen    []int // per rule: requests matching its conditions
	fired   []int // per rule: requests it answered
	records []*Request
	recSize int64 // recorded body bytes
	seq     int
}

// New starts a server on a random loopback port, like httptest.NewServer.
// It panics if the script is invalid or no port can be bound; use
// NewServer to get an error instead. A nil script answers every request
// with DefaultText.
func New(script *Script, opts ...Option) *Server {
	s, err := NewServer("127.0.0.1:0", script, opts...)
	if err != nil {
		panic("modelstub: " + err.Error())
	}
	return s
}

// NewServer starts a server listening on addr ("127.0.0.1:0" picks a free
// loopback port). It binds exactly the address given: callers that expose
// it beyond loopback decide so themselves.
func NewServer(addr string, script *Script, opts ...Option) (*Server, error) {
	if err := script.Validate(); err != nil {
		return nil, fmt.Errorf("invalid script: %w", err)
	}
	o := Options{MaxBodyBytes: DefaultMaxBodyBytes, MaxRecords: DefaultMaxRecords, MaxRecordBytes: DefaultMaxRecordBytes}
	for _, opt := range opts {
		if opt != nil {
			opt.apply(&o)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:   o,
		ln:     ln,
		url:    "http://" + ln.Addr().String(),
		done:   make(chan struct{}),
		served: make(chan struct{}),
		conns:  map[net.Conn]http.ConnState{},
		client: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16}},
	}
	s.setScript(script.clone())
	errLog := log.New(io.Discard, "", 0)
	if o.Logger != nil {
		errLog = slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug)
	}
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          errLog,
		ConnState:         s.trackConn,
	}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

func (s *Server) setScript(sc *Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = sc
	s.seen = make([]int, len(sc.Rules))
	s.fired = make([]int, len(sc.Rules))
}

// SetScript replaces the script and resets its rule counters. Requests in
// flight finish with the reply they already chose.
func (s *Server) SetScript(script *Script) error {
	if err := script.Validate(); err != nil {
		return fmt.Errorf("invalid script: %w", err)
	}
	s.setScript(script.clone())
	return nil
}

// URL is the server's root, http://127.0.0.1:PORT.
func (s *Server) URL() string { return s.url }

// Addr is the listening address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// OpenAIBaseURL is the base URL OpenAI clients take (URL + "/v1").
func (s *Server) OpenAIBaseURL() string { return s.url + "/v1" }

// AnthropicBaseURL is the base URL Anthropic clients take (they append
// /v1/messages).
func (s *Server) AnthropicBaseURL() string { return s.url }

// GeminiBaseURL is the base URL Gemini clients take (they append
// /v1beta/models/…; GOOGLE_GEMINI_BASE_URL).
func (s *Server) GeminiBaseURL() string { return s.url }

// APIs are the API families BaseURLFor knows ("" means openai).
func APIs() []string { return []string{"openai", "anthropic", "gemini"} }

// BaseURLFor is the base URL the clients of an API family take: "openai"
// (or ""), "anthropic" or "gemini"; false for any other.
func (s *Server) BaseURLFor(api string) (string, bool) {
	switch api {
	case "", "openai":
		return s.OpenAIBaseURL(), true
	case "anthropic":
		return s.AnthropicBaseURL(), true
	case "gemini":
		return s.GeminiBaseURL(), true
	}
	return "", false
}

// Client returns an HTTP client for the server whose idle connections are
// closed by Close.
func (s *Server) Client() *http.Client { return s.client }

// Close releases stalled and slow requests, stops the server and waits for
// its handlers to return. It is safe to call more than once.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.client.CloseIdleConnections()
		_ = s.ln.Close()
		// Like httptest: connections that carry no request now (idle, or
		// opened and never used) are closed at once.
		s.connMu.Lock()
		s.closing = true
		for c, st := range s.conns {
			if st == http.StateNew || st == http.StateIdle {
				_ = c.Close()
			}
		}
		s.connMu.Unlock()
		// Handlers return promptly once done is closed; wait for them, then
		// cut what is left (connections lingering after an early reply).
		deadline := time.Now().Add(5 * time.Second)
		for s.active.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		_ = s.srv.Close()
		<-s.served
		s.client.CloseIdleConnections()
		// Connection goroutines may linger briefly (net/http delays the
		// close after an unread body); wait so that none outlives Close.
		for time.Now().Before(deadline) {
			s.connMu.Lock()
			n := len(s.conns)
			s.connMu.Unlock()
			if n == 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	})
}

func (s *Server) trackConn(c net.Conn, st http.ConnState) {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	switch st {
	case http.StateHijacked, http.StateClosed:
		delete(s.conns, c)
		return
	}
	s.conns[c] = st
	if s.closing && (st == http.StateNew || st == http.StateIdle) {
		_ = c.Close()
	}
}

// Requests returns a copy of the request records, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.records))
	for i, r := range s.records {
		out[i] = r.clone()
	}
	return out
}

// ClearRequests forgets the request records (rule counters are kept).
func (s *Server) ClearRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = nil
	s.recSize = 0
}

func (s *Server) addRecord(r *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	r.Seq = s.seq
	s.records = append(s.records, r)
	s.recSize += r.size()
	drop := 0
	for len(s.records)-drop > s.opts.MaxRecords || (s.recSize > s.opts.MaxRecordBytes && len(s.records)-drop > 1) {
		s.recSize -= s.records[drop].size()
		drop++
	}
	if drop > 0 {
		s.records = append([]*Request(nil), s.records[drop:]...)
	}
}

// update changes a record under the lock.
func (s *Server) update(r *Request, f func(*Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(r)
}

func (s *Server) nextID(prefix string) string {
	return fmt.Sprintf("%s%06d", prefix, s.ids.Add(1))
}

// endpoint is what a request path asks for.
type endpoint struct {
	name    string // see Request.Endpoint
	api     API
	method  string // the method it takes
	model   string // from the path (Gemini)
	stream  bool   // from the path (Gemini)
	count   bool   // a token count
	models  bool   // a model listing
	gemini  bool   // Gemini flavour of a model listing
	modelID string // a single model asked for (GET …/models/{id})
}

func route(r *http.Request) endpoint {
	p := strings.TrimRight(r.URL.Path, "/")
	if r.Method == http.MethodHead {
		return endpoint{name: "head", method: http.MethodHead}
	}
	if i := strings.LastIndex(p, "/models/"); i >= 0 {
		rest := p[i+len("/models/"):]
		if c := strings.LastIndex(rest, ":"); c >= 0 {
			model, op := rest[:c], rest[c+1:]
			switch op {
			case "generateContent":
				return endpoint{name: "gemini.generateContent", api: APIGemini, method: http.MethodPost, model: model}
			case "streamGenerateContent":
				return endpoint{name: "gemini.streamGenerateContent", api: APIGemini, method: http.MethodPost, model: model, stream: true}
			case "countTokens":
				return endpoint{name: "gemini.countTokens", api: APIGemini, method: http.MethodPost, model: model, count: true}
			}
		}
	}
	switch {
	case strings.HasSuffix(p, "/chat/completions"):
		return endpoint{name: "chat.completions", api: APIChat, method: http.MethodPost}
	case strings.HasSuffix(p, "/responses"):
		return endpoint{name: "responses", api: APIResponses, method: http.MethodPost}
	case strings.HasSuffix(p, "/messages/count_tokens"):
		return endpoint{name: "messages.count_tokens", api: APIMessages, method: http.MethodPost, count: true}
	case strings.HasSuffix(p, "/messages"):
		return endpoint{name: "messages", api: APIMessages, method: http.MethodPost}
	case strings.HasSuffix(p, "/models"):
		return endpoint{name: "models", method: http.MethodGet, models: true, gemini: strings.Contains(p, "/v1beta/")}
	case strings.Contains(p, "/models/"):
		id := p[strings.LastIndex(p, "/models/")+len("/models/"):]
		return endpoint{name: "models", method: http.MethodGet, models: true, gemini: strings.Contains(p, "/v1beta/"), modelID: id}
	}
	return endpoint{name: "unknown"}
}

// credential is one API key a request presented.
type credential struct {
	where string // authorization, x-api-key, x-goog-api-key, api-key, query:key
	value string
}

func credentials(r *http.Request) []credential {
	var out []credential
	if h := r.Header.Get("Authorization"); h != "" {
		v := h
		if scheme, rest, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "bearer") {
			v = strings.TrimSpace(rest)
		}
		out = append(out, credential{"authorization", v})
	}
	for _, h := range []string{"x-api-key", "x-goog-api-key", "api-key"} {
		if v := r.Header.Get(h); v != "" {
			out = append(out, credential{h, v})
		}
	}
	if v := r.URL.Query().Get("key"); v != "" {
		out = append(out, credential{"query:key", v})
	}
	return out
}

// acceptedAuth lists where each API's clients send the key.
func acceptedAuth(ep endpoint) []string {
	switch ep.api {
	case APIChat, APIResponses:
		return []string{"authorization", "api-key"}
	case APIMessages:
		return []string{"x-api-key", "authorization"}
	case APIGemini:
		return []string{"x-goog-api-key", "query:key"}
	}
	return []string{"authorization", "x-api-key", "x-goog-api-key", "api-key", "query:key"}
}

// checkKey names where the credential came from (preferring a place the
// API uses) and whether the request passes the key check: want presented
// in an accepted place, or no key expected.
func checkKey(creds []credential, accepted []string, want string) (where string, ok bool) {
	if len(creds) > 0 {
		where = creds[0].where
	}
	ok = want == ""
	found := false
	for _, a := range accepted {
		for _, c := range creds {
			if c.where != a {
				continue
			}
			if !found {
				where, found = a, true
			}
			if want != "" && subtle.ConstantTimeCompare([]byte(c.value), []byte(want)) == 1 {
				ok = true
			}
		}
	}
	return where, ok
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"message":"encoding failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ServeHTTP answers one request. The Server is an http.Handler, so it can
// also be mounted elsewhere; stalls then end with the request's context.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.active.Add(1)
	defer s.active.Add(-1)
	switch p := strings.TrimRight(r.URL.Path, "/"); p {
	case "/health", "/healthz":
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return
	case "/_requests":
		s.serveRequests(w, r)
		return
	}
	ep := route(r)
	creds := credentials(r)
	secrets := make([]string, 0, len(creds)+1)
	if s.opts.ExpectKey != "" {
		secrets = append(secrets, s.opts.ExpectKey)
	}
	for _, c := range creds {
		secrets = append(secrets, c.value)
	}
	rec := &Request{
		Time:      time.Now().UTC(),
		Method:    r.Method,
		Path:      scrubString(r.URL.Path, secrets),
		Query:     scrubString(redactQuery(r.URL.RawQuery), secrets),
		API:       ep.api,
		Endpoint:  ep.name,
		Model:     ep.model,
		Stream:    ep.stream,
		Rule:      -1,
		UserAgent: scrubString(r.UserAgent(), secrets),
		Headers:   recordHeaders(r.Header),
	}
	for k, v := range rec.Headers {
		rec.Headers[k] = scrubString(v, secrets)
	}
	rec.AuthPresent = len(creds) > 0
	rec.AuthHeader, rec.KeyOK = checkKey(creds, acceptedAuth(ep), s.opts.ExpectKey)
	rec.KeyChecked = s.opts.ExpectKey != ""

	x := &exchange{s: s, w: w, r: r, ep: ep, rec: rec, secrets: secrets}
	// Deferred: an exchange that ends early aborts with a panic.
	defer s.finish(rec)
	x.serve()
}

// finish marks a record completed (unless it ended early) and logs it.
func (s *Server) finish(rec *Request) {
	s.update(rec, func(rec *Request) {
		if rec.Outcome == "" {
			rec.Outcome = "completed"
		}
	})
	if l := s.opts.Logger; l != nil {
		final := s.snapshot(rec)
		l.Info("model request", "seq", final.Seq, "method", final.Method, "path", final.Path,
			"api", string(final.API), "model", final.Model, "stream", final.Stream, "side", final.Side,
			"rule", final.Rule, "reply", final.Reply, "status", final.Status, "outcome", final.Outcome,
			"auth_header", final.AuthHeader, "key_ok", final.KeyOK)
	}
}

func (s *Server) snapshot(r *Request) Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return r.clone()
}

func (s *Server) serveRequests(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		since := 0
		if v := r.URL.Query().Get("since"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "since must be an integer"}})
				return
			}
			since = n
		}
		out := []Request{}
		for _, rec := range s.Requests() {
			if rec.Seq > since {
				out = append(out, rec)
			}
		}
		writeJSON(w, http.StatusOK, out)
	case http.MethodDelete:
		s.ClearRequests()
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, DELETE")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": map[string]any{"message": "use GET or DELETE"}})
	}
}

// exchange is one request being answered.
type exchange struct {
	s       *Server
	w       http.ResponseWriter
	r       *http.Request
	ep      endpoint
	rec     *Request
	secrets []string
	v       *view
	body    []byte
	wrote   bool // the status line went out
}

// fail answers with an error in the endpoint's API format.
func (x *exchange) fail(status int, kind, message string) {
	x.finishRecord(kind, status)
	api := x.ep.api
	if api == "" {
		api = APIChat
	}
	x.writeError(api, status, message, "", 0)
}

func (x *exchange) writeError(api API, status int, message, typ string, retryAfter int) {
	if retryAfter == 0 && (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) {
		retryAfter = 1
	}
	if retryAfter > 0 {
		x.w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	x.setIDHeaders()
	x.wrote = true
	writeJSON(x.w, status, errorBody(api, status, message, typ))
}

func (x *exchange) setIDHeaders() {
	id := x.s.nextID("req_stub_")
	x.w.Header().Set("x-request-id", id)
	x.w.Header().Set("request-id", id)
}

// finishRecord stores the record (first call) with its reply and status.
func (x *exchange) finishRecord(reply string, status int) {
	x.rec.Reply = reply
	x.rec.Status = status
	x.s.addRecord(x.rec)
}

func (x *exchange) serve() {
	ep, r := x.ep, x.r
	if ep.name == "head" {
		x.rec.Side, x.rec.SideReason = true, "head"
		x.finishRecord("head", http.StatusOK)
		x.w.WriteHeader(http.StatusOK)
		return
	}
	if ep.name == "unknown" {
		x.readBody() // recorded for debugging; errors do not matter here
		x.fail(http.StatusNotFound, "not_found", fmt.Sprintf("the model stub has no endpoint %s %s", r.Method, r.URL.Path))
		return
	}
	if r.Method != ep.method {
		x.w.Header().Set("Allow", ep.method)
		x.fail(http.StatusMethodNotAllowed, "method_not_allowed", fmt.Sprintf("%s takes %s, not %s", r.URL.Path, ep.method, r.Method))
		return
	}
	var bodyStatus int
	var bodyErr error
	if !ep.models {
		bodyStatus, bodyErr = x.readBody()
	}
	if !x.rec.KeyOK {
		msg := "missing API key"
		if x.rec.AuthPresent {
			msg = "invalid API key"
		}
		x.fail(http.StatusUnauthorized, "unauthorized", msg)
		return
	}
	if ep.models {
		x.rec.Side, x.rec.SideReason = true, "models"
		x.finishRecord("models", http.StatusOK)
		x.setIDHeaders()
		x.wrote = true
		writeJSON(x.w, http.StatusOK, x.s.modelList(ep))
		return
	}
	if bodyErr != nil {
		x.fail(bodyStatus, "bad_body", bodyErr.Error())
		return
	}
	var body map[string]any
	if err := json.Unmarshal(x.body, &body); err != nil || body == nil {
		x.fail(http.StatusBadRequest, "bad_json", "the request body must be a JSON object")
		return
	}
	x.v = inspect(ep.api, body)
	if ep.api == APIGemini {
		x.v.model = ep.model
		x.v.stream = ep.stream
		if ep.count {
			// countTokens may wrap a whole generateContent request.
			if inner := obj(either(body, "generateContentRequest", "generate_content_request")); inner != nil {
				x.v = inspect(APIGemini, inner)
				x.v.model = ep.model
			}
		}
	}
	if ep.count {
		x.v.stream = false
	}
	v := x.v
	x.rec.Model = v.model
	x.rec.Stream = v.stream
	x.rec.Tools = v.toolNames()
	x.rec.UserText = truncate(scrubString(v.userText, x.secrets), maxUserText)
	x.rec.ToolResult = v.toolResult
	side, reason := ep.count, ""
	if ep.count {
		reason = "count_tokens"
	} else if x.s.sideDetection() {
		reason = v.sideReason()
		side = reason != ""
	}
	x.rec.Side, x.rec.SideReason = side, reason
	a := x.s.decide(x, side)
	x.answer(a)
}

// readBody reads the (possibly chunked, possibly gzip-compressed) body
// within the size limit and records it.
func (x *exchange) readBody() (int, error) {
	limit := x.s.opts.MaxBodyBytes
	raw := io.LimitReader(x.r.Body, limit+1)
	var rd io.Reader = raw
	switch enc := strings.ToLower(strings.TrimSpace(x.r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(raw)
		if err != nil {
			x.drain()
			return http.StatusBadRequest, fmt.Errorf("invalid gzip body: %v", err)
		}
		defer zr.Close()
		rd = io.LimitReader(zr, limit+1)
	default:
		x.drain()
		return http.StatusUnsupportedMediaType, fmt.Errorf("unsupported Content-Encoding %q", enc)
	}
	body, err := io.ReadAll(rd)
	if int64(len(body)) > limit {
		x.rec.BodyBytes = len(body)
		x.drain()
		return http.StatusRequestEntityTooLarge, fmt.Errorf("request body larger than %d bytes", limit)
	}
	x.rec.setBody(body, x.secrets)
	if err != nil {
		return http.StatusBadRequest, fmt.Errorf("reading the request body: %v", err)
	}
	x.body = body
	return 0, nil
}

// drain discards what is left of a refused body (up to a bound), so that the
// connection closes cleanly and the client reads the error instead of a
// reset.
func (x *exchange) drain() {
	_, _ = io.Copy(io.Discard, io.LimitReader(x.r.Body, max(x.s.opts.MaxBodyBytes, 1<<20)))
}

func (s *Server) sideDetection() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.script.SideDetection != "off"
}

// modelList answers a model listing with one shape that OpenAI and
// Anthropic clients both read (and Gemini's under /v1beta/).
func (s *Server) modelList(ep endpoint) any {
	s.mu.Lock()
	names := []string{"stub-model"}
	have := map[string]bool{"stub-model": true}
	for _, r := range s.script.Rules {
		if m := r.Match.Model; m != "" && !have[m] {
			have[m] = true
			names = append(names, m)
		}
	}
	s.mu.Unlock()
	if ep.gemini {
		var models []any
		for _, n := range names {
			models = append(models, map[string]any{
				"name": "models/" + n, "displayName": n, "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
				"supportedGenerationMethods": []string{"generateContent", "countTokens"},
			})
		}
		return map[string]any{"models": models}
	}
	var data []any
	for _, n := range names {
		data = append(data, map[string]any{
			"id": n, "object": "model", "created": 1700000000, "owned_by": "fabric-modelstub",
			"type": "model", "display_name": n, "created_at": "2023-11-14T22:13:20Z",
		})
	}
	if ep.modelID != "" {
		for _, d := range data {
			if d.(map[string]any)["id"] == ep.modelID {
				return d
			}
		}
		m := data[0].(map[string]any)
		m["id"], m["display_name"] = ep.modelID, ep.modelID
		return m
	}
	return map[string]any{"object": "list", "data": data, "has_more": false, "first_id": names[0], "last_id": names[len(names)-1]}
}
