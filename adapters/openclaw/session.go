package openclaw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/adapterkit/serverharness"
	"github.com/fabric-runtime/fabric/contract"
)

// gatewayGrace is the SIGTERM-to-SIGKILL grace of a Gateway that is not an
// interface: its state is private and removed at stop, so nothing is lost
// by not waiting for its own (long) shutdown drain. A Gateway that serves
// the dashboard is stopped by harnessui with the contract's 5 s (L5).
const gatewayGrace = 300 * time.Millisecond

// tokenEnv is the variable that gives the Gateway its token
// (gateway.auth.mode token).
const tokenEnv = "OPENCLAW_GATEWAY_TOKEN"

// New returns the OpenClaw adapter.
func New() adapterkit.Adapter { return adapter{} }

type adapter struct{}

// session is one runtime: one Gateway and one agent session on it.
type session struct {
	log       *slog.Logger
	in        adapterkit.StartInput
	set       Settings
	runtimeID string
	user      string // the OpenAI "user" that keys the runtime's agent session

	// What start resolved: the model, its key (never logged), OpenClaw
	// and Node, the workspace.
	model     model
	key       string
	bin       binary
	workspace string

	// Private directories and files, all under dirs.Root, all removed at
	// stop.
	dirs                       adapterkit.Dirs
	state, configPath, logFile string

	srv    *serverharness.Server // the Gateway, and the dashboard interface when on
	res    *reservation
	token  string       // the Gateway token; never logged or reported
	wd     *watchdog    // kills the Gateway's helpers if the host dies
	client *http.Client // loopback only, no proxy
	base   string       // http://127.0.0.1:<port>

	turns atomic.Int64
}

// healthz is the Gateway's unauthenticated liveness endpoint.
func (s *session) healthz(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, serverharness.ProbeTimeout)
	defer cancel()
	return harnessui.Get(ctx, s.client, s.base, "/healthz", "")
}

// ready checks that an authenticated request succeeds and lists the
// runtime's agent. It never calls the model.
func (s *session) ready(ctx context.Context, token string) error {
	ctx, cancel := context.WithTimeout(ctx, serverharness.ProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/v1/models", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /v1/models: status %d", resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("GET /v1/models: %w", err)
	}
	for _, m := range list.Data {
		if m.ID == s.agentModel() {
			return nil
		}
	}
	return fmt.Errorf("GET /v1/models does not list %s", s.agentModel())
}

// agentModel is the agent target the runtime's turns address.
func (s *session) agentModel() string { return "openclaw/" + s.set.AgentID }

// Invoke runs one turn on the runtime's agent session.
func (s *session) Invoke(ctx context.Context, inv adapterkit.Invocation) (contract.AgentRunResult, error) {
	defer s.srv.Busy()()
	if res, ok, err := s.srv.CanTurn(ctx); !ok {
		return res, err
	}
	turn := s.turns.Add(1)
	req := chatRequest{
		Model: s.agentModel(), User: s.user, Stream: true,
		StreamOptions: map[string]any{"include_usage": true},
		Messages:      []chatMessage{{Role: "user", Content: adapterkit.InputText(inv.Request.Input)}},
	}
	out, err := chat(ctx, s.client, s.base, s.token, req, func(d string) {
		inv.Events.Emit(adapterkit.Event{Kind: "output_delta", Message: d})
	})
	res := contract.AgentRunResult{Status: contract.StatusSucceeded, Output: out.Text}
	if u := out.Usage; u != nil {
		res.Usage = &contract.RunUsage{InputTokens: &u.PromptTokens, OutputTokens: &u.CompletionTokens, TotalTokens: &u.TotalTokens}
		inv.Events.Emit(adapterkit.Event{Kind: "usage", Metadata: map[string]any{
			"input_tokens": u.PromptTokens, "output_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens,
		}})
	}
	md := map[string]any{"turn": turn, "session_user": s.user}
	switch {
	case err == nil:
		if out.Text == "" {
			res.Status = contract.StatusFailed
			res.Error = &contract.AgentRunError{Code: CodeTurnFailed, Message: "the OpenClaw agent finished the turn without an answer", Extensions: md}
		}
		return res, nil
	case ctx.Err() != nil:
		res.Status = contract.StatusCancelled
		return res, nil
	}
	if !s.srv.Running() {
		return contract.AgentRunResult{}, s.srv.Exited("exited during the turn")
	}
	res.Status = contract.StatusFailed
	code, retry := CodeTurnFailed, false
	msg := err.Error()
	if he, ok := errors.AsType[*httpError](err); ok {
		md["http_status"] = he.Status
		code = CodeHTTPError
		switch {
		case he.Status == http.StatusTooManyRequests:
			code, retry = CodeRateLimited, true
		case he.Status >= 500 || he.Status == http.StatusOK:
			code = CodeModelError
		}
	}
	if code == CodeTurnFailed {
		// A transport failure: what the Gateway said last explains it.
		if t := s.srv.Output.String(); t != "" {
			msg += "; the Gateway's last output:\n" + t
		}
	}
	res.Error = &contract.AgentRunError{Code: code, Message: msg, Retryable: retry, Extensions: md}
	return res, nil
}

// Health reports evidence from the Gateway for one level, without calling
// the model: live, the Gateway process runs and owns its port; active,
// its /healthz answers; ready, an authenticated /v1/models lists the
// runtime's agent.
func (s *session) Health(ctx context.Context, level string) (adapterkit.Health, error) {
	return s.srv.Health(ctx, level, s.healthz, func(ctx context.Context) error { return s.ready(ctx, s.token) }), nil
}

// Interfaces reports the runtime's interfaces for its handle: where the
// dashboard is and where its token is stored, never the token.
func (s *session) Interfaces() []contract.InterfaceInfo { return s.srv.Interfaces() }

// CheckInterface reports one interface's health (L4). The dashboard is
// the Gateway itself, so its failure is also the runtime's.
func (s *session) CheckInterface(ctx context.Context, name, level string) (adapterkit.Health, error) {
	return s.srv.CheckInterface(ctx, name, level, name == Dashboard), nil
}

// The session reports and checks its interfaces.
var _ adapterkit.InterfaceSession = (*session)(nil)

// Stop ends the Gateway: with the dashboard, harnessui removes the token
// file first, then SIGTERM to the Gateway's group, 5 s, SIGKILL (L5);
// without, SIGTERM, gatewayGrace, SIGKILL. Then every process that left
// the group but carries the runtime's private state directory is killed,
// the port reservation released and the private directories removed.
func (s *session) Stop(ctx context.Context) error {
	s.client.CloseIdleConnections()
	sp := serverharness.StopSpec{Own: s.srv.Ifaces == nil, Root: s.dirs.Root, AfterSweep: func() {
		s.wd.stop(time.Second)
		s.res.release()
	}}
	if s.state != "" {
		sp.Marker = "OPENCLAW_STATE_DIR=" + s.state
	}
	return s.srv.Stop(ctx, sp)
}
