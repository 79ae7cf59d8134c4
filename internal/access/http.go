package access

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

func (g *Gateway) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", func(w http.ResponseWriter, r *http.Request) { g.handleCreate(w, r, surfaceResponses) })
	mux.HandleFunc("GET /v1/responses/{id}", g.handleRetrieve)
	mux.HandleFunc("POST /v1/responses/{id}/cancel", g.handleCancel)
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { g.handleCreate(w, r, surfaceChat) })
	mux.HandleFunc("GET /v1/models", g.handleModels)
	mux.HandleFunc("GET /v1/models/{id}", g.handleModel)
	mux.HandleFunc("GET /v1/fabric/access", g.handleAccess)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]bool{"ok": true}) })
	mux.HandleFunc("GET /readyz", g.handleReady)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{status: 404, typ: "not_found_error", code: "not_found", message: "no such endpoint"})
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.handlers.Add(1)
		defer g.handlers.Done()
		w.Header().Set("x-request-id", newID("req_"))
		if d, ok := g.addrAllow(remoteHost(r)); !ok {
			writeError(w, rateLimited(d))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, g.opts.MaxBodyBytes)
		mux.ServeHTTP(w, r)
	})
}

func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes an OpenAI-shaped error; every error the client must
// not retry says so (x-should-retry: false).
func writeError(w http.ResponseWriter, e *apiError) {
	if !e.retry {
		w.Header().Set("x-should-retry", "false")
	}
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(e.retryAfter)))
	}
	var param any
	if e.param != "" {
		param = e.param
	}
	writeJSON(w, e.status, map[string]any{"error": map[string]any{"message": e.message, "type": e.typ, "param": param, "code": e.code}})
}

func rateLimited(d time.Duration) *apiError {
	return &apiError{status: 429, typ: "rate_limit_error", code: "rate_limit_exceeded", message: "too many requests; retry after " + strconv.Itoa(retrySeconds(d)) + " s", retry: true, param: "", retryAfter: d}
}

func retrySeconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

func notFound(what string) *apiError {
	return &apiError{status: 404, typ: "not_found_error", code: "not_found", message: "no such " + what}
}

func authError(code, msg string) *apiError {
	return &apiError{status: 401, typ: "authentication_error", code: code, message: msg}
}

func permissionError(code, msg string) *apiError {
	return &apiError{status: 403, typ: "permission_error", code: code, message: msg}
}

// addrLimits are one address's buckets: all requests, and auth failures.
type addrLimits struct {
	all, fails *rate.Limiter
	seen       time.Time
}

func (g *Gateway) addrLimitsLocked(host string, now time.Time) *addrLimits {
	l := g.addrLim[host]
	if l == nil {
		per := rate.Every(time.Minute / time.Duration(g.opts.AuthFailuresPerMinute))
		l = &addrLimits{all: rate.NewLimiter(g.opts.AddrRate, g.opts.AddrBurst), fails: rate.NewLimiter(per, g.opts.AuthFailuresPerMinute)}
		g.addrLim[host] = l
	}
	l.seen = now
	return l
}

// take takes one token of l at now, or says how long until there is one.
func take(l *rate.Limiter, now time.Time) (time.Duration, bool) {
	r := l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

func (g *Gateway) addrAllow(host string) (time.Duration, bool) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	return take(g.addrLimitsLocked(host, now).all, now)
}

// pruneLimiters forgets buckets unused for 10 minutes (they are full again).
func (g *Gateway) pruneLimiters(now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for h, l := range g.addrLim {
		if now.Sub(l.seen) > 10*time.Minute {
			delete(g.addrLim, h)
		}
	}
	for id := range g.keyLim {
		if gr := g.grants[id]; gr == nil || gr.revoked != nil || now.After(gr.expires) {
			delete(g.keyLim, id)
		}
	}
}

// principal is an authenticated key and its binding.
type principal struct {
	g *grant
	b Binding
}

func (p *principal) owns(client, agent string) bool {
	return p.g.client == client && p.g.agent == agent
}

// dummyVerifier keeps the timing of an unknown key id like a known one.
var dummyVerifier = make([]byte, 32)

// authenticate checks the bearer token (only the Authorization header
// counts), the grant, its binding and the per-key rate limit.
func (g *Gateway) authenticate(w http.ResponseWriter, r *http.Request) (*principal, bool) {
	host := remoteHost(r)
	now := g.now()
	g.mu.Lock()
	lim := g.addrLimitsLocked(host, now)
	if lim.fails.TokensAt(now) < 1 {
		d := lim.fails.ReserveN(now, 1)
		delay := d.DelayFrom(now)
		d.CancelAt(now)
		g.mu.Unlock()
		writeError(w, rateLimited(delay))
		return nil, false
	}
	g.mu.Unlock()
	p, e := g.verify(r.Header.Get("Authorization"), now)
	if e != nil {
		if e.status == 401 {
			g.mu.Lock()
			_, _ = take(lim.fails, now)
			g.mu.Unlock()
		}
		writeError(w, e)
		return nil, false
	}
	g.mu.Lock()
	kl := g.keyLim[p.g.keyID]
	if kl == nil {
		kl = rate.NewLimiter(g.opts.KeyRate, g.opts.KeyBurst)
		g.keyLim[p.g.keyID] = kl
	}
	d, ok := take(kl, now)
	g.mu.Unlock()
	if !ok {
		writeError(w, rateLimited(d))
		return nil, false
	}
	return p, true
}

func (g *Gateway) verify(header string, now time.Time) (*principal, *apiError) {
	tok := bearer(header)
	if tok == "" {
		return nil, authError("invalid_api_key", "missing bearer token in the Authorization header")
	}
	keyID, secret, ok := parseToken(tok)
	if !ok {
		return nil, authError("invalid_api_key", "invalid API key")
	}
	g.mu.Lock()
	gr := g.grants[keyID]
	var want []byte
	var revoked bool
	var expires time.Time
	var b Binding
	var bound, client bool
	if gr != nil {
		want, revoked, expires = gr.verifier, gr.revoked != nil, gr.expires
		b, bound = g.bindings[gr.agent]
		client = g.clients[gr.client]
	}
	g.mu.Unlock()
	got := verifier(g.pepper, keyID, secret)
	if gr == nil {
		subtle.ConstantTimeCompare(got, dummyVerifier)
		return nil, authError("invalid_api_key", "invalid API key")
	}
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return nil, authError("invalid_api_key", "invalid API key")
	}
	switch {
	case revoked:
		return nil, authError("token_revoked", "this key was revoked")
	case !now.Before(expires):
		return nil, authError("token_expired", "this key has expired")
	case !client:
		return nil, permissionError("operation_not_allowed", "this key's client is no longer allowed")
	case !bound || b.Generation != gr.generation:
		return nil, permissionError("agent_replaced", "the agent of this key was replaced; ask for a new key")
	}
	return &principal{g: gr, b: b}, nil
}

// stillValid re-checks a key on a live stream; it returns the code that
// ends the stream, or "".
func (g *Gateway) stillValid(p *principal) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	b, bound := g.bindings[p.g.agent]
	switch {
	case p.g.revoked != nil:
		return "token_revoked"
	case !g.now().Before(p.g.expires):
		return "token_expired"
	case !g.clients[p.g.client]:
		return "operation_not_allowed"
	case !bound || b.Generation != p.g.generation:
		return "agent_replaced"
	}
	return ""
}

// watch is one live stream's registration, ended by revocation.
type watch struct {
	ended  chan struct{}
	reason string
}

func (g *Gateway) watchKey(keyID string) (*watch, func()) {
	w := &watch{ended: make(chan struct{})}
	g.mu.Lock()
	set := g.watchers[keyID]
	if set == nil {
		set = map[*watch]struct{}{}
		g.watchers[keyID] = set
	}
	set[w] = struct{}{}
	g.mu.Unlock()
	return w, func() {
		g.mu.Lock()
		delete(g.watchers[keyID], w)
		if len(g.watchers[keyID]) == 0 {
			delete(g.watchers, keyID)
		}
		g.mu.Unlock()
	}
}

func (g *Gateway) endStreamsLocked(keyID, reason string) {
	for w := range g.watchers[keyID] {
		w.reason = reason
		close(w.ended)
	}
	delete(g.watchers, keyID)
}

// authenticatedBody authenticates, then reads the bounded body.
func (g *Gateway) authenticatedBody(w http.ResponseWriter, r *http.Request) (*principal, []byte, bool) {
	p, ok := g.authenticate(w, r)
	if !ok {
		return nil, nil, false
	}
	body, ok := readBody(w, r)
	return p, body, ok
}

// readBody reads a bounded body.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, &apiError{status: 413, typ: "invalid_request_error", code: "request_too_large", message: "the request body is too large"})
		} else {
			writeError(w, badRequest("invalid_body", "", "cannot read the request body"))
		}
		return nil, false
	}
	return b, true
}

// modelMatches says whether a model name names the key's agent.
func modelMatches(model, agent string) bool {
	return model == agent || model == "fabric/"+agent
}

func modelObject(agent string, created int64) map[string]any {
	return map[string]any{"id": agent, "object": "model", "created": created, "owned_by": "fabric"}
}

func (g *Gateway) handleModels(w http.ResponseWriter, r *http.Request) {
	p, ok := g.authenticate(w, r)
	if !ok {
		return
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": []any{modelObject(p.g.agent, p.g.created.Unix())}})
}

func (g *Gateway) handleModel(w http.ResponseWriter, r *http.Request) {
	p, ok := g.authenticate(w, r)
	if !ok {
		return
	}
	if !modelMatches(r.PathValue("id"), p.g.agent) {
		writeError(w, notFound("model"))
		return
	}
	writeJSON(w, 200, modelObject(p.g.agent, p.g.created.Unix()))
}

// agentReady asks the supervisor for an agent; ok when its runtime is
// running, healthy and of the bound generation.
func (g *Gateway) agentReady(ctx context.Context, b Binding) (AgentInfo, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := g.opts.Dispatcher.Agent(ctx, b.Agent)
	if err != nil {
		return info, false, err
	}
	return info, info.RuntimeID != "" && info.Health == "passed" && info.Generation == b.Generation, nil
}

func (g *Gateway) handleReady(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	bs := make([]Binding, 0, len(g.bindings))
	for _, b := range g.bindings {
		bs = append(bs, b)
	}
	closed := g.closed
	g.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	storeOK := !closed && g.st.ping(ctx)
	supervisor, agents := true, true
	for _, b := range bs {
		_, ok, err := g.agentReady(r.Context(), b)
		supervisor = supervisor && err == nil
		agents = agents && ok
	}
	status := 200
	if !storeOK || !supervisor || !agents {
		status = 503
	}
	writeJSON(w, status, map[string]bool{"store": storeOK, "supervisor": supervisor, "agents": agents})
}

// handleAccess is authorized readiness: the key, its agent and whether
// that agent can take a turn now.
func (g *Gateway) handleAccess(w http.ResponseWriter, r *http.Request) {
	p, ok := g.authenticate(w, r)
	if !ok {
		return
	}
	info, ready, err := g.agentReady(r.Context(), p.b)
	health := info.Health
	if err != nil {
		health = "unknown"
	}
	body := map[string]any{"key_id": p.g.keyID, "client": p.g.client, "agent": p.g.agent, "generation": p.g.generation,
		"expires_at": p.g.expires.Format(time.RFC3339), "agent_ready": ready, "health": health}
	status := 200
	if !ready {
		status = 503
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, body)
}

// idempotencyKey reads and validates the Idempotency-Key header.
func idempotencyKey(r *http.Request) (string, *apiError) {
	return parseIdempotencyKey(r.Header.Values("Idempotency-Key"))
}

// onDisconnect is the request's disconnect policy.
func onDisconnect(r *http.Request, b Binding) string {
	switch strings.ToLower(r.Header.Get("x-fabric-on-disconnect")) {
	case OnDisconnectCancel:
		return OnDisconnectCancel
	case OnDisconnectContinue:
		return OnDisconnectContinue
	}
	return b.OnDisconnect
}
