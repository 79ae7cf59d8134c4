package scripted

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
)

// The scripted adapter's service (capabilities.service): a loopback HTTP
// server holding state shared by every runtime bound to it, a turn counter
// and a list of notes, behind a random bearer token. Bound runtimes record
// each turn there; their response templates may use {service_turn} (the
// shared turn number) and {service_notes} (the notes so far, joined by
// "; "). It is what service lifecycles are tested with.
//
// HTTP interface (JSON):
//
//	GET  /healthz     unauthenticated liveness: {"status":"ok"}
//	GET  /v1/state    {"turns": N, "notes": [...]}
//	POST /v1/turns    {"runtime_id", "input"} -> {"turn": N, "notes": [...]}
//
// /v1/ requires "Authorization: Bearer <token>"; anything else gets 401.

// serviceType is the type of the scripted service.
const serviceType = "shared_state"

// serviceTokenEnv is the variable that carries a prepared service's token
// to bound runtime hosts (unless settings.service_token_env names another).
const serviceTokenEnv = "FABRIC_SCRIPTED_SERVICE_TOKEN"

// Service error codes.
const (
	CodeServiceUnauthorized = "scripted_service_unauthorized"
	CodeServiceUnavailable  = "scripted_service_unavailable"
	CodeServiceReference    = "scripted_invalid_service_reference"
)

// Connection keys of the scripted service.
const (
	connURL      = "url"
	connTokenEnv = "token_env"
)

// maxNotes bounds the shared notes list; maxBody a request body.
const (
	maxNotes = 1000
	maxBody  = 1 << 20
)

// ---- the service (in the service host) ----

// sharedState is the state every bound runtime sees.
type sharedState struct {
	token string
	mu    sync.Mutex
	turns int
	notes []string
}

type stateDoc struct {
	Turns int      `json:"turns"`
	Notes []string `json:"notes"`
}

type turnRequest struct {
	RuntimeID string `json:"runtime_id"`
	Input     string `json:"input"`
}

type turnDoc struct {
	Turn  int      `json:"turn"`
	Notes []string `json:"notes"`
}

func (st *sharedState) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(st.token)) == 1
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (st *sharedState) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/v1/") {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found"})
		return
	}
	if !st.authorized(r) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized"})
		return
	}
	switch {
	case r.URL.Path == "/v1/state" && r.Method == http.MethodGet:
		st.mu.Lock()
		doc := stateDoc{Turns: st.turns, Notes: append([]string{}, st.notes...)}
		st.mu.Unlock()
		writeJSON(w, http.StatusOK, doc)
	case r.URL.Path == "/v1/turns" && r.Method == http.MethodPost:
		var req turnRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid body"})
			return
		}
		st.mu.Lock()
		st.turns++
		st.notes = append(st.notes, req.Input)
		if len(st.notes) > maxNotes {
			st.notes = st.notes[len(st.notes)-maxNotes:]
		}
		doc := turnDoc{Turn: st.turns, Notes: append([]string{}, st.notes...)}
		st.mu.Unlock()
		writeJSON(w, http.StatusOK, doc)
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found"})
	}
}

// StartService starts the shared service: the HTTP server on
// 127.0.0.1:0 with a random token (or the token in the variable
// settings.service_token_env names).
func (adapter) StartService(ctx context.Context, in adapterkit.ServiceStart) (adapterkit.ServiceSession, error) {
	set, err := parseSettings(in.Config.Harness)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidSettings, err)
	}
	if in.ServiceType != "" && in.ServiceType != serviceType {
		return nil, adapterkit.Errorf(CodeServiceReference, "unknown service type %q (the scripted adapter provides %s)", in.ServiceType, serviceType)
	}
	tokenEnv, token := serviceTokenEnv, ""
	if set.ServiceTokenEnv != "" {
		tokenEnv, token = set.ServiceTokenEnv, os.Getenv(set.ServiceTokenEnv)
		if token == "" {
			return nil, adapterkit.Errorf(CodeInvalidSettings, "settings.service_token_env names %s, which is not set", tokenEnv)
		}
	} else {
		var b [32]byte
		_, _ = rand.Read(b[:])
		token = hex.EncodeToString(b[:])
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, adapterkit.Errorf(CodeServiceUnavailable, "listen: %w", err)
	}
	s := &serviceSession{
		srv:      &http.Server{Handler: &sharedState{token: token}, ReadHeaderTimeout: 10 * time.Second},
		url:      "http://" + ln.Addr().String(),
		tokenEnv: tokenEnv,
		token:    token,
		served:   make(chan struct{}),
	}
	s.probe = newServiceClient(s.url, token)
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// serviceSession is the running service in the service host.
type serviceSession struct {
	srv      *http.Server
	url      string
	tokenEnv string
	token    string
	probe    *serviceClient
	served   chan struct{} // closed when Serve has returned
}

func (s *serviceSession) Connection() map[string]any {
	return map[string]any{connURL: s.url, connTokenEnv: s.tokenEnv}
}

func (s *serviceSession) CredentialEnv() map[string]string {
	return map[string]string{s.tokenEnv: s.token}
}

func (s *serviceSession) ServiceMetadata() map[string]any {
	return map[string]any{"service_type": serviceType}
}

func (s *serviceSession) Health(ctx context.Context, level string) (adapterkit.Health, error) {
	h := adapterkit.Health{Source: "scripted.service", ObservedAtMillis: time.Now().UnixMilli()}
	if level == contract.LevelLive {
		select {
		case <-s.served:
			h.Outcome, h.ReasonCode, h.Message = contract.OutcomeFailed, contract.ReasonServiceUnavailable, "the HTTP server has stopped"
		default:
			h.Outcome = contract.OutcomePassed
		}
		return h, nil
	}
	return s.probe.health(ctx, h, level)
}

func (s *serviceSession) Stop(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	<-s.served
	s.probe.close()
	return err
}

// ---- attaching to a caller-owned service ----

// AttachService attaches to a scripted service the caller runs: the
// reference's connection needs url and token_env (whose variable the core
// has set from the caller's environment); the service must answer an
// authenticated request.
func (adapter) AttachService(ctx context.Context, in adapterkit.ServiceAttach) (adapterkit.ServiceSession, error) {
	if in.Reference.ServiceType != serviceType {
		return nil, adapterkit.Errorf(CodeServiceReference, "unknown service type %q (the scripted adapter provides %s)", in.Reference.ServiceType, serviceType)
	}
	c, err := clientFor(in.Reference.Connection)
	if err != nil {
		return nil, err
	}
	if err := c.ready(ctx); err != nil {
		c.close()
		return nil, err
	}
	return &attachSession{c: c, conn: map[string]any{connURL: c.base, connTokenEnv: c.tokenEnv}}, nil
}

// attachSession is an attachment: it probes, and Stop only detaches.
type attachSession struct {
	c    *serviceClient
	conn map[string]any
}

func (a *attachSession) Connection() map[string]any { return a.conn }

func (a *attachSession) Health(ctx context.Context, level string) (adapterkit.Health, error) {
	h := adapterkit.Health{Source: "scripted.service", ObservedAtMillis: time.Now().UnixMilli()}
	return a.c.health(ctx, h, level)
}

func (a *attachSession) Stop(context.Context) error {
	a.c.close()
	return nil
}

// ---- the client (bound runtimes, probes) ----

// serviceClient talks to a scripted service.
type serviceClient struct {
	base     string
	tokenEnv string
	token    string
	tr       *http.Transport
	hc       *http.Client
}

func newServiceClient(base, token string) *serviceClient {
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 2, IdleConnTimeout: 30 * time.Second}
	return &serviceClient{base: strings.TrimRight(base, "/"), token: token, tr: tr, hc: &http.Client{Transport: tr}}
}

// clientFor builds a client from a connection: url, and token_env whose
// variable holds the token.
func clientFor(conn map[string]any) (*serviceClient, error) {
	base, _ := conn[connURL].(string)
	tokenEnv, _ := conn[connTokenEnv].(string)
	u, err := url.Parse(base)
	if base == "" || err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, adapterkit.Errorf(CodeServiceReference, "the service connection needs an http url")
	}
	if tokenEnv == "" {
		return nil, adapterkit.Errorf(CodeServiceReference, "the service connection needs token_env")
	}
	token := os.Getenv(tokenEnv)
	if token == "" {
		return nil, adapterkit.Errorf(CodeServiceUnauthorized, "no service token: %s is not set", tokenEnv)
	}
	c := newServiceClient(base, token)
	c.tokenEnv = tokenEnv
	return c, nil
}

// connectService connects a runtime to its bound service and checks that
// the token is accepted.
func connectService(ctx context.Context, b *adapterkit.ServiceConnection) (*serviceClient, error) {
	c, err := clientFor(b.Connection)
	if err != nil {
		return nil, err
	}
	if err := c.ready(ctx); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *serviceClient) close() { c.tr.CloseIdleConnections() }

// do sends one request; auth adds the token. It returns the status and
// the body (bounded).
func (c *serviceClient) do(ctx context.Context, method, path string, auth bool, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if auth {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	return resp.StatusCode, out, err
}

// ready checks that an authenticated request succeeds.
func (c *serviceClient) ready(ctx context.Context) error {
	code, _, err := c.do(ctx, http.MethodGet, "/v1/state", true, nil)
	switch {
	case err != nil:
		return adapterkit.Errorf(CodeServiceUnavailable, "the service at %s does not answer: %v", c.base, scrubURLError(err))
	case code == http.StatusUnauthorized:
		return adapterkit.Errorf(CodeServiceUnauthorized, "the service at %s rejected the token", c.base)
	case code != http.StatusOK:
		return adapterkit.Errorf(CodeServiceUnavailable, "the service at %s answered HTTP %d", c.base, code)
	}
	return nil
}

// scrubURLError keeps the cause of a failed request, never its headers.
func scrubURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// health answers a check level against the service: live, its port
// accepts connections; active, /healthz answers; ready, an authenticated
// request succeeds. Running out of time is an error (unknown).
func (c *serviceClient) health(ctx context.Context, h adapterkit.Health, level string) (adapterkit.Health, error) {
	switch level {
	case contract.LevelLive:
		u, _ := url.Parse(c.base)
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", u.Host)
		if err != nil {
			if ctx.Err() != nil {
				return h, err
			}
			h.Outcome, h.ReasonCode, h.Message = contract.OutcomeFailed, contract.ReasonServiceUnavailable, "the service port refuses connections"
			return h, nil
		}
		conn.Close()
		h.Outcome = contract.OutcomePassed
	case contract.LevelActive:
		code, _, err := c.do(ctx, http.MethodGet, "/healthz", false, nil)
		switch {
		case err != nil && ctx.Err() != nil:
			return h, err
		case err != nil || code != http.StatusOK:
			h.Outcome, h.ReasonCode, h.Message = contract.OutcomeFailed, contract.ReasonEndpointUnavailable, "the service health endpoint does not answer"
		default:
			h.Outcome = contract.OutcomePassed
		}
	case contract.LevelReady:
		if err := c.ready(ctx); err != nil {
			if ctx.Err() != nil {
				return h, err
			}
			h.Outcome, h.ReasonCode, h.Message = contract.OutcomeFailed, contract.ReasonHealthFailed, err.Error()
			return h, nil
		}
		h.Outcome = contract.OutcomePassed
	default:
		h.Outcome, h.ReasonCode = contract.OutcomeUnsupported, contract.ReasonUnsupportedLevel
	}
	return h, nil
}

// recordTurn records a runtime's turn in the service and renders
// {service_turn} and {service_notes} in answer. A service failure is a
// failed result.
func (c *serviceClient) recordTurn(ctx context.Context, runtimeID, input, answer string) (string, *contract.AgentRunResult) {
	code, body, err := c.do(ctx, http.MethodPost, "/v1/turns", true, turnRequest{RuntimeID: runtimeID, Input: input})
	var doc turnDoc
	switch {
	case err == nil && code == http.StatusOK:
		err = json.Unmarshal(body, &doc)
	case err == nil:
		err = fmt.Errorf("HTTP %d", code)
	}
	if err != nil {
		if ctx.Err() != nil {
			r := cancelled()
			return "", &r
		}
		return "", &contract.AgentRunResult{Status: contract.StatusFailed, Output: "", Error: &contract.AgentRunError{
			Code: CodeServiceUnavailable, Message: fmt.Sprintf("the shared service did not record the turn: %v", scrubURLError(err)), Retryable: true,
		}}
	}
	if strings.Contains(answer, "{service_") {
		answer = strings.NewReplacer("{service_turn}", strconv.Itoa(doc.Turn), "{service_notes}", strings.Join(doc.Notes, "; ")).Replace(answer)
	}
	return answer, nil
}
