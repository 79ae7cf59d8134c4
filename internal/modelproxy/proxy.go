package modelproxy

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fabric-runtime/fabric/modelstub"
)

// The wire APIs a route can speak (Route.API).
const (
	APIOpenAIResponses   = "openai-responses"
	APIOpenAIChat        = "openai-chat-completions"
	APIAnthropicMessages = "anthropic-messages"
)

// Defaults for Options.
const (
	DefaultAddr            = "127.0.0.1:0"
	DefaultMaxBodyBytes    = 16 << 20
	DefaultShutdownTimeout = 5 * time.Second
)

// PlaceholderPrefix starts every placeholder credential.
const PlaceholderPrefix = "fabp_"

// maxAgentName bounds an agent's name (it is logged).
const maxAgentName = 256

// Route is one upstream model endpoint.
type Route struct {
	// API is openai-responses, openai-chat-completions or
	// anthropic-messages.
	API string
	// BaseURL is the upstream base URL, the one the API's clients take:
	// https://api.openai.com/v1 (requests go to BaseURL + /responses) or
	// https://api.anthropic.com (requests go to BaseURL + /v1/messages).
	BaseURL string
	// Credential is the real key; it is held in memory only and sent as
	// Authorization: Bearer (OpenAI) or x-api-key (Anthropic). Empty sends
	// none.
	Credential string
	// Model, when set, replaces the "model" of every JSON request body.
	Model string
}

// CheckRoute reports why SetRoute(name, r) would give a route that answers
// every request with an error: a name that is not 1 to 64 letters, digits,
// '.', '_' or '-', an unknown API, or a base URL that is not an absolute
// http(s) URL without user info, query or fragment.
func CheckRoute(name string, r Route) error {
	_, err := compileRoute(name, r)
	return err
}

// Options configure a Proxy.
type Options struct {
	// Addr is the address to listen on; default DefaultAddr. It must be a
	// loopback address unless AllowNonLoopback is set.
	Addr             string
	AllowNonLoopback bool
	// Logger receives one record per request (never a credential). Nil
	// means no logging.
	Logger *slog.Logger
	// MaxBodyBytes bounds request bodies; larger ones get 413. Default
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Client's Transport carries upstream requests (nil: a clone of
	// http.DefaultTransport, owned and closed by the Proxy). Redirects are
	// passed to the agent, not followed, and Client.Timeout does not apply:
	// streams last as long as the upstream sends.
	Client *http.Client
	// ShutdownTimeout bounds how long Serve waits for requests in flight
	// once its context ends before it cuts them. Default
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
}

// Usage counts one agent's requests on one route.
type Usage struct {
	// Requests are the authorized requests forwarded (or tried).
	Requests int64 `json:"requests"`
	// Failed are those that got an error status, could not reach the
	// upstream, or whose response was cut (revocation, upstream or client
	// gone).
	Failed       int64 `json:"failed"`
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// LastAtMillis is when the last request arrived (Unix milliseconds).
	LastAtMillis int64 `json:"last_at_millis,omitempty"`
}

// Proxy is the brokered model proxy. Its methods are safe for concurrent
// use.
type Proxy struct {
	opts      Options
	ln        net.Listener
	srv       *http.Server
	url       string
	transport http.RoundTripper
	ownsTrans *http.Transport // closed by Serve when the Proxy made it
	macKey    []byte
	errLog    *log.Logger

	baseCtx    context.Context // requests' contexts derive from it
	cancelBase context.CancelFunc
	handlers   sync.WaitGroup
	served     atomic.Bool

	mu      sync.RWMutex
	routes  map[string]*route
	grants  map[[sha256.Size]byte]*grant // by HMAC of the placeholder
	byAgent map[grantKey]*grant
	usage   map[grantKey]*Usage
}

// route is a Route as the proxy uses it.
type route struct {
	Route
	api  modelstub.API
	base *url.URL
	err  error // why it cannot be used
}

type grantKey struct{ route, agent string }

type grant struct {
	grantKey
	mac     [sha256.Size]byte
	revoked chan struct{} // closed by Revoke, a new Grant or RemoveRoute
}

func compileRoute(name string, r Route) (*route, error) {
	rt := &route{Route: r}
	if !validRouteName(name) {
		return rt, fmt.Errorf("route name %q: want 1 to %d letters, digits, '.', '_' or '-'", name, maxRouteName)
	}
	switch r.API {
	case APIOpenAIResponses:
		rt.api = modelstub.APIResponses
	case APIOpenAIChat:
		rt.api = modelstub.APIChat
	case APIAnthropicMessages:
		rt.api = modelstub.APIMessages
	default:
		return rt, fmt.Errorf("route %s: api %q is not %s, %s or %s", name, r.API, APIOpenAIResponses, APIOpenAIChat, APIAnthropicMessages)
	}
	u, err := url.Parse(r.BaseURL)
	switch {
	case err != nil:
		return rt, fmt.Errorf("route %s: base_url is not a URL", name)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "", u.Opaque != "":
		return rt, fmt.Errorf("route %s: base_url must be an absolute http or https URL", name)
	case u.User != nil, u.RawQuery != "", u.ForceQuery, u.Fragment != "":
		return rt, fmt.Errorf("route %s: base_url must not hold user info, a query or a fragment", name)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = strings.TrimRight(u.RawPath, "/")
	rt.base = u
	return rt, nil
}

// New binds the listener. Requests are answered once Serve runs.
func New(opts Options) (*Proxy, error) {
	if opts.Addr == "" {
		opts.Addr = DefaultAddr
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	macKey := make([]byte, 32)
	_, _ = rand.Read(macKey) // never fails (crypto/rand)
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("model proxy: %w", err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !opts.AllowNonLoopback && (!ok || !tcp.IP.IsLoopback()) {
		_ = ln.Close()
		return nil, fmt.Errorf("model proxy: %s is not a loopback address (set AllowNonLoopback to serve beyond this machine)", opts.Addr)
	}
	p := &Proxy{
		opts:    opts,
		ln:      ln,
		url:     "http://" + ln.Addr().String(),
		macKey:  macKey,
		errLog:  slog.NewLogLogger(opts.Logger.Handler(), slog.LevelDebug),
		routes:  map[string]*route{},
		grants:  map[[sha256.Size]byte]*grant{},
		byAgent: map[grantKey]*grant{},
		usage:   map[grantKey]*Usage{},
	}
	if opts.Client != nil && opts.Client.Transport != nil {
		p.transport = opts.Client.Transport
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		p.transport, p.ownsTrans = t, t
	}
	p.baseCtx, p.cancelBase = context.WithCancel(context.Background())
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          p.errLog,
		BaseContext:       func(net.Listener) context.Context { return p.baseCtx },
	}
	return p, nil
}

// Serve answers requests until ctx ends, then stops accepting, gives the
// requests in flight Options.ShutdownTimeout to finish, cuts the rest and
// returns once every handler has. It returns nil after ctx ends or Close.
func (p *Proxy) Serve(ctx context.Context) error {
	if !p.served.CompareAndSwap(false, true) {
		return errors.New("model proxy: Serve called twice")
	}
	defer p.release()
	errc := make(chan error, 1)
	go func() { errc <- p.srv.Serve(p.ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("model proxy: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), p.opts.ShutdownTimeout)
	defer cancel()
	if err := p.srv.Shutdown(sctx); err != nil {
		p.cancelBase()
		_ = p.srv.Close()
	}
	<-errc
	return nil
}

// release ends what is left once the server stopped.
func (p *Proxy) release() {
	p.cancelBase()
	p.handlers.Wait()
	if p.ownsTrans != nil {
		p.ownsTrans.CloseIdleConnections()
	}
}

// Close stops the proxy at once: the listener closes, requests in flight
// are cut, and a running Serve returns. Without Serve it releases what New
// bound.
func (p *Proxy) Close() error {
	p.cancelBase()
	err := p.srv.Close()
	if !p.served.Load() {
		_ = p.ln.Close()
		p.release()
	}
	return err
}

// URL is the proxy's root, http://127.0.0.1:PORT.
func (p *Proxy) URL() string { return p.url }

// BaseURL is the base URL an agent's client takes for route: URL +
// /r/<route>/v1 for the OpenAI APIs (clients append /responses or
// /chat/completions), URL + /r/<route> for Anthropic (clients append
// /v1/messages). It is "" for an unknown route.
func (p *Proxy) BaseURL(name string) string {
	p.mu.RLock()
	rt := p.routes[name]
	p.mu.RUnlock()
	if rt == nil {
		return ""
	}
	if rt.API == APIAnthropicMessages {
		return p.url + "/r/" + name
	}
	return p.url + "/r/" + name + "/v1"
}

// SetRoute adds or replaces the route called name; requests that arrive
// after it returns use the new route, those in flight finish with the old
// one, and grants are kept. A route CheckRoute refuses answers its requests
// with 500 (the reason is logged, never sent).
func (p *Proxy) SetRoute(name string, r Route) {
	rt, err := compileRoute(name, r)
	if err != nil {
		rt.err = err
		p.opts.Logger.Error("model proxy route unusable", "route", printable(name), "error", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.routes[name] = rt
}

// RemoveRoute removes the route, revokes its grants (cutting their streams)
// and forgets its usage.
func (p *Proxy) RemoveRoute(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.routes, name)
	for k, g := range p.byAgent {
		if k.route == name {
			p.revokeLocked(g)
		}
	}
	for k := range p.usage {
		if k.route == name {
			delete(p.usage, k)
		}
	}
}

// Grant issues a fresh placeholder credential for agent on route and
// returns it: PlaceholderPrefix and 256 random bits. The proxy keeps only
// its HMAC under a per-process random key. A grant replaces (revokes) the
// agent's earlier placeholder on the route.
func (p *Proxy) Grant(routeName, agent string) (string, error) {
	if agent == "" || len(agent) > maxAgentName || strings.IndexFunc(agent, unicode.IsControl) >= 0 {
		return "", fmt.Errorf("model proxy: agent name must be 1 to %d bytes without control characters", maxAgentName)
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	placeholder := PlaceholderPrefix + base64.RawURLEncoding.EncodeToString(raw)
	k := grantKey{routeName, agent}
	g := &grant{grantKey: k, mac: p.mac(placeholder), revoked: make(chan struct{})}
	p.mu.Lock()
	if p.routes[routeName] == nil {
		p.mu.Unlock()
		return "", fmt.Errorf("model proxy: no route %q", routeName)
	}
	if old := p.byAgent[k]; old != nil {
		p.revokeLocked(old)
	}
	p.grants[g.mac] = g
	p.byAgent[k] = g
	if p.usage[k] == nil {
		p.usage[k] = &Usage{}
	}
	p.mu.Unlock()
	RecordForAudit(placeholder)
	return placeholder, nil
}

// Revoke ends agent's grant on route: its placeholder is refused from the
// next request on, and its responses in flight are cut at once.
func (p *Proxy) Revoke(routeName, agent string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if g := p.byAgent[grantKey{routeName, agent}]; g != nil {
		p.revokeLocked(g)
	}
}

func (p *Proxy) revokeLocked(g *grant) {
	delete(p.grants, g.mac)
	delete(p.byAgent, g.grantKey)
	close(g.revoked)
}

// Usage returns a copy of the counts: route -> agent -> usage. Every agent
// granted on a route is listed, also after its grant was revoked.
func (p *Proxy) Usage() map[string]map[string]Usage {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := map[string]map[string]Usage{}
	for k, u := range p.usage {
		if out[k.route] == nil {
			out[k.route] = map[string]Usage{}
		}
		out[k.route][k.agent] = *u
	}
	return out
}

func (p *Proxy) mac(placeholder string) [sha256.Size]byte {
	h := hmac.New(sha256.New, p.macKey)
	h.Write([]byte(placeholder))
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// lookup finds the grant a presented placeholder belongs to. The map is
// keyed by an HMAC under a secret key, so its timing tells nothing about
// placeholders; the entry found is confirmed in constant time.
func (p *Proxy) lookup(presented string) *grant {
	mac := p.mac(presented)
	p.mu.RLock()
	defer p.mu.RUnlock()
	g := p.grants[mac]
	if g == nil || subtle.ConstantTimeCompare(g.mac[:], mac[:]) != 1 {
		return nil
	}
	return g
}

func (p *Proxy) count(k grantKey, f func(*Usage)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u := p.usage[k]; u != nil {
		f(u)
	}
}

// credentialHeaders are the request headers that may carry a credential;
// none of them is forwarded.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key", "Cookie"}

// presented returns the placeholder a request carries (Authorization:
// Bearer or x-api-key). ok is false when it carries none, or two that
// differ.
func presented(h http.Header) (value string, ok bool) {
	var found []string
	if a := h.Values("Authorization"); len(a) > 0 {
		scheme, rest, _ := strings.Cut(a[0], " ")
		if len(a) > 1 || !strings.EqualFold(scheme, "bearer") {
			return "", false
		}
		found = append(found, strings.TrimSpace(rest))
	}
	if k := h.Values("X-Api-Key"); len(k) > 0 {
		if len(k) > 1 {
			return "", false
		}
		found = append(found, strings.TrimSpace(k[0]))
	}
	if len(found) == 0 || found[0] == "" || (len(found) == 2 && found[0] != found[1]) {
		return "", false
	}
	return found[0], true
}

// printable makes an outside string safe for a log record: at most 256
// bytes, control characters and invalid UTF-8 replaced.
func printable(s string) string {
	const most = 256
	cut := len(s) > most
	if cut {
		s = s[:most]
	}
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	if cut {
		s += "…"
	}
	return s
}

// ServeHTTP answers one request (see the package documentation).
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.handlers.Add(1)
	defer p.handlers.Done()
	if r.URL.Path == "/health" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
		return
	}
	name, rest, ok := splitRoutePath(r.URL.EscapedPath())
	if !ok {
		modelstub.WriteError(w, modelstub.APIChat, http.StatusNotFound, "not a model proxy route: use the base URL Fabric gave this agent")
		return
	}
	p.mu.RLock()
	rt := p.routes[name]
	p.mu.RUnlock()
	if rt == nil {
		modelstub.WriteError(w, modelstub.APIChat, http.StatusNotFound, "no such model proxy route")
		return
	}
	api := rt.api
	if api == "" {
		api = modelstub.APIChat
	}
	value, ok := presented(r.Header)
	var g *grant
	if ok && strings.HasPrefix(value, PlaceholderPrefix) {
		g = p.lookup(value)
	}
	if g == nil || g.route != name {
		reason := "no matching grant"
		switch {
		case !ok:
			reason = "no credential, or two that differ"
		case g != nil:
			reason = "a grant of another route"
		}
		p.opts.Logger.Warn("model proxy refused", "route", name, "reason", reason)
		msg := "invalid or revoked model proxy credential"
		if !ok {
			msg = "missing model proxy credential: send the placeholder Fabric granted this agent as Authorization: Bearer or x-api-key"
		}
		modelstub.WriteError(w, api, http.StatusUnauthorized, msg)
		return
	}
	if rt.err != nil {
		p.opts.Logger.Error("model proxy route unusable", "route", name, "agent", g.agent, "error", rt.err)
		modelstub.WriteError(w, api, http.StatusInternalServerError, "the model proxy route is misconfigured")
		return
	}
	x := &exchange{p: p, rt: rt, g: g, name: name, rest: rest, start: time.Now(), secrets: []string{rt.Credential, value}}
	x.serve(w, r)
}

// exchange is one authorized request.
type exchange struct {
	p       *Proxy
	rt      *route
	g       *grant
	name    string
	rest    string // the request path after /r/<route>, escaped
	start   time.Time
	secrets []string

	status  int
	meter   *meter
	body    *responseBody
	outcome string // set by settle
	usage   modelstub.Usage
}

func (x *exchange) serve(w http.ResponseWriter, r *http.Request) {
	x.p.count(x.g.grantKey, func(u *Usage) {
		u.Requests++
		u.LastAtMillis = x.start.UnixMilli()
	})
	defer x.finish(r)
	path, ok := upstreamPath(x.rt.API, x.rest)
	if !ok {
		x.reject(w, http.StatusNotFound, "not_found", "OpenAI routes take paths below /v1")
		return
	}
	body, status, msg := x.readBody(r)
	if status != 0 {
		x.reject(w, status, "bad_request", msg)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	watch := make(chan struct{})
	go func() {
		defer close(watch)
		select {
		case <-x.g.revoked:
			cancel()
		case <-ctx.Done():
		}
	}()
	defer func() { cancel(); <-watch }()

	target := *x.rt.base
	target.Path += mustUnescape(path)
	target.RawPath = x.rt.base.EscapedPath() + path
	target.RawQuery = r.URL.RawQuery
	in := r.WithContext(ctx)
	in.Body = io.NopCloser(bytes.NewReader(body))
	in.ContentLength = int64(len(body))
	in.TransferEncoding = nil
	in.Header = r.Header.Clone()
	in.Header.Del("Content-Length")
	if len(body) == 0 {
		in.Body = http.NoBody
	}
	rp := &httputil.ReverseProxy{
		Rewrite:        func(pr *httputil.ProxyRequest) { x.rewrite(pr, &target) },
		Transport:      x.p.transport,
		FlushInterval:  -1,
		ErrorLog:       x.p.errLog,
		ModifyResponse: x.modifyResponse,
		ErrorHandler:   x.upstreamError,
	}
	rp.ServeHTTP(w, in)
}

func mustUnescape(p string) string {
	s, err := url.PathUnescape(p)
	if err != nil {
		return p // splitRoutePath refused malformed escapes already
	}
	return s
}

// readBody reads the request body within the bound and applies
// Route.Model. A non-zero status refuses the request.
func (x *exchange) readBody(r *http.Request) (body []byte, status int, message string) {
	limit := x.p.opts.MaxBodyBytes
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	switch {
	case int64(len(body)) > limit:
		return nil, http.StatusRequestEntityTooLarge, "request body larger than " + strconv.FormatInt(limit, 10) + " bytes"
	case err != nil:
		return nil, http.StatusBadRequest, "could not read the request body"
	case x.rt.Model == "" || len(body) == 0:
		return body, 0, ""
	}
	if enc := r.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		return nil, http.StatusUnsupportedMediaType, "this route sets the model, so the request body must not be encoded"
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil || doc == nil {
		return nil, http.StatusBadRequest, "the request body must be a JSON object"
	}
	model, _ := json.Marshal(x.rt.Model)
	doc["model"] = model
	body, err = json.Marshal(doc)
	if err != nil {
		return nil, http.StatusBadRequest, "the request body must be a JSON object"
	}
	return body, 0, ""
}

// reject answers an authorized request the proxy does not forward.
func (x *exchange) reject(w http.ResponseWriter, status int, outcome, message string) {
	x.status = status
	x.settle(outcome)
	modelstub.WriteError(w, x.rt.api, status, message)
}

// settle counts the exchange's outcome and usage, once: before the last
// byte of its answer goes out, so that a client that has read the answer
// finds it counted.
func (x *exchange) settle(outcome string) {
	if x.outcome != "" {
		return
	}
	x.outcome = outcome
	if x.meter != nil {
		x.usage = x.meter.usage
	}
	failed := outcome != "completed"
	x.p.count(x.g.grantKey, func(u *Usage) {
		u.InputTokens = addSat(u.InputTokens, x.usage.InputTokens)
		u.OutputTokens = addSat(u.OutputTokens, x.usage.OutputTokens)
		if failed {
			u.Failed++
		}
	})
}

// bodyEnded settles an exchange whose upstream body ended.
func (x *exchange) bodyEnded() {
	if x.status < 400 {
		x.settle("completed")
	} else {
		x.settle("error_status")
	}
}

// rewrite turns the inbound request into the upstream one: the route's
// URL, the real credential instead of any the client sent, and no
// compression (the usage reader and the masker read plain bytes).
func (x *exchange) rewrite(pr *httputil.ProxyRequest, target *url.URL) {
	pr.Out.URL = target
	pr.Out.Host = ""
	h := pr.Out.Header
	for _, k := range credentialHeaders {
		h.Del(k)
	}
	if c := x.rt.Credential; c != "" {
		if x.rt.API == APIAnthropicMessages {
			h.Set("X-Api-Key", c)
		} else {
			h.Set("Authorization", "Bearer "+c)
		}
	}
	h.Set("Accept-Encoding", "identity")
}

// modifyResponse masks credentials in the upstream's headers and wraps its
// body in the meter and masker.
func (x *exchange) modifyResponse(resp *http.Response) error {
	x.status = resp.StatusCode
	m := newMasker(x.secrets...)
	for k, vs := range resp.Header {
		for i, v := range vs {
			b := []byte(v)
			m.mask(b, true)
			vs[i] = string(b)
		}
		resp.Header[k] = vs
	}
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	x.meter = &meter{api: x.rt.api, sse: strings.HasPrefix(ct, "text/event-stream")}
	x.body = &responseBody{src: resp.Body, mask: m, meter: x.meter, ended: x.bodyEnded}
	resp.Body = x.body
	return nil
}

// upstreamError answers when the upstream could not be reached (or the
// request was cut before its answer began).
func (x *exchange) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	select {
	case <-x.g.revoked:
		x.status = http.StatusUnauthorized
		x.settle("revoked")
		modelstub.WriteError(w, x.rt.api, http.StatusUnauthorized, "invalid or revoked model proxy credential")
		return
	default:
	}
	if r.Context().Err() != nil {
		x.settle("client_gone")
		return
	}
	x.p.opts.Logger.Warn("model proxy upstream unreachable", "route", x.name, "agent", x.g.agent, "error_kind", errorKind(err))
	x.status = http.StatusBadGateway
	x.settle("upstream_error")
	modelstub.WriteError(w, x.rt.api, http.StatusBadGateway, "the model proxy could not reach the upstream model endpoint")
}

// errorKind names an upstream error without its text (which may quote a
// URL).
func errorKind(err error) string {
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.As(err, &oe):
		return oe.Op
	}
	return "transport"
}

// finish settles what is not settled yet (a stream that was cut: then
// ReverseProxy aborts the handler with a panic, and this runs deferred) and
// logs the request.
func (x *exchange) finish(r *http.Request) {
	outcome := "cut"
	select {
	case <-x.g.revoked:
		outcome = "revoked"
	default:
	}
	x.settle(outcome)
	x.p.opts.Logger.Info("model proxy request", "route", x.name, "agent", x.g.agent, "method", r.Method, "path", printable(x.rest),
		"status", x.status, "outcome", x.outcome, "input_tokens", x.usage.InputTokens, "output_tokens", x.usage.OutputTokens,
		"ms", time.Since(x.start).Milliseconds())
}

func addSat(a, b int64) int64 {
	if b > 0 && a > 1<<63-1-b {
		return 1<<63 - 1
	}
	return a + b
}
