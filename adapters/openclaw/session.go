package openclaw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/proc"
)

// Timing of the adapter's waits.
const (
	// gatewayGrace is the SIGTERM-to-SIGKILL grace of a Gateway that is not
	// an interface: its state is private and removed at stop, so nothing is
	// lost by not waiting for its own (long) shutdown drain. A Gateway that
	// serves the dashboard is stopped by harnessui with the contract's 5 s (L5).
	gatewayGrace = 300 * time.Millisecond
	// sweepWait bounds the killing of processes that left the group.
	sweepWait = 2 * time.Second
	// healthPollMax is the longest pause between health probes at start.
	healthPollMax = 250 * time.Millisecond
	// probeTimeout bounds one HTTP probe.
	probeTimeout = 2 * time.Second
)

// TokenEnv is the variable that gives the Gateway its token
// (gateway.auth.mode token).
const TokenEnv = "OPENCLAW_GATEWAY_TOKEN"

// New returns the OpenClaw adapter.
func New() adapterkit.Adapter { return adapter{} }

type adapter struct{}

// session is one runtime: one Gateway and one agent session on it.
type session struct {
	log       *slog.Logger
	set       Settings
	model     Model
	runtimeID string
	user      string // the OpenAI "user" that keys the runtime's agent session

	// Private directories and files, all under dirs.Root, all removed at
	// stop.
	dirs                       adapterkit.Dirs
	state, configPath, logFile string

	port   int
	res    *reservation
	token  string         // the Gateway token; never logged or reported
	gw     *proc.Process  // the Gateway
	ifaces *harnessui.Set // the dashboard interface (the Gateway), nil when off
	output *tail          // the Gateway's last output lines
	wd     *watchdog      // kills the Gateway's helpers if the host dies
	client *http.Client   // loopback only, no proxy
	base   string         // http://127.0.0.1:<port>

	busy     atomic.Bool
	turns    atomic.Int64
	stopOnce sync.Once
	stopErr  error
}

func (adapter) Start(ctx context.Context, in adapterkit.StartInput) (adapterkit.Session, error) {
	log := in.Log().With("adapter", ID)
	set, err := ParseSettings(in.Config.Harness)
	if err != nil {
		if ie, ok := errors.AsType[*harnessui.Error](err); ok {
			return nil, ie
		}
		return nil, adapterkit.Wrap(CodeInvalidSettings, err)
	}
	// L3: one deadline for everything start does.
	ctx, cancel := context.WithTimeout(ctx, set.StartupTimeout)
	defer cancel()

	model, err := SelectModel(in.Config.Models)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidConfig, err)
	}
	key, err := adapterkit.ModelKey(model.APIKeyEnv, "models."+model.Role+".api_key_env")
	if err != nil {
		return nil, adapterkit.Wrap(CodeAPIKeyMissing, err)
	}
	bin, err := ResolveBinary(ctx, os.Getenv, os.Getenv("PATH"))
	switch {
	case errors.Is(err, ErrNodeUnsupported):
		return nil, adapterkit.Wrap(CodeNodeUnsupported, err)
	case err != nil:
		return nil, adapterkit.Wrap(CodeBinaryNotFound, err)
	}
	workspace, err := adapterkit.Workspace(in)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidWorkspace, err)
	}
	runtimeID := in.RuntimeContext.RuntimeID

	s := &session{
		log: log, set: set, model: model, runtimeID: runtimeID,
		user:   "fabric:" + runtimeID,
		output: &tail{max: 16 << 10},
		client: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second}},
	}
	ok := false
	defer func() {
		if !ok {
			s.teardown(context.WithoutCancel(ctx))
		}
	}()
	if s.dirs, err = adapterkit.MakeDirs(in.Home, "openclaw", "state", "logs"); err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, err)
	}
	s.state = filepath.Join(s.dirs.Root, "state")
	s.configPath = filepath.Join(s.dirs.Root, "openclaw.json")
	s.logFile = filepath.Join(s.dirs.Root, "logs", "openclaw.log")
	if s.wd, err = startWatchdog("OPENCLAW_STATE_DIR=" + s.state); err != nil {
		log.Warn("openclaw: no watchdog: the Gateway's helpers would outlive a killed host", "error", err)
	}

	// The Gateway's base port: the dashboard's exact port (S2, L6), else
	// one reserved in port_range (Q7).
	if d := set.Dashboard; d != nil {
		f, err := lockFile(filepath.Join(mkdirOr(portsDir()), strconv.Itoa(d.Port)+".lock"))
		if err != nil {
			return nil, &harnessui.Error{Code: harnessui.CodePortTaken, Interface: Dashboard, Message: fmt.Sprintf("port %d is taken before launch (S2, L6)", d.Port), Err: err}
		}
		s.res = &reservation{Base: d.Port, f: f}
	} else if s.res, err = pickBase(set.PortRange); err != nil {
		return nil, adapterkit.Wrap(CodePortUnavailable, err)
	}
	s.port = s.res.Base
	s.base = "http://127.0.0.1:" + strconv.Itoa(s.port)

	cfg := GatewayConfig{
		Port: s.port, AgentID: set.AgentID, Model: model, Workspace: workspace, LogFile: s.logFile,
	}
	if d := set.Dashboard; d != nil {
		cfg.Dashboard, cfg.AllowedOrigins = true, d.PublicOrigins
	}
	doc, err := cfg.Build()
	if err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, err)
	}
	if err := os.WriteFile(s.configPath, doc, 0o600); err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, err)
	}
	env := s.env(os.Environ(), bin, model, key)
	args := []string{bin.Entry, "gateway", "run"}

	if d := set.Dashboard; d != nil {
		root, err := filepath.Abs(harnessui.ArtifactRoot(in))
		if err != nil {
			return nil, adapterkit.Wrap(CodeStartFailed, err)
		}
		set, err := harnessui.Start(ctx, harnessui.Spec{
			RuntimeID: runtimeID, ArtifactRoot: root, AdapterName: Name,
			StartupTimeout: s.set.StartupTimeout,
			Logger:         log,
			Children: []harnessui.Child{{
				Name: Dashboard, Kind: contract.InterfaceHTTP, Browser: true, Credential: contract.CredentialBearer,
				Port: d.Port, CheckPorts: []int{d.Port + BrowserPort}, Path: "/",
				Command: bin.Node, Args: args, Dir: workspace, Env: env, TokenEnv: TokenEnv,
				Stdout: s.output, Stderr: s.output,
				HealthPath: "/healthz",
				Ready:      func(ctx context.Context, t harnessui.Target) error { return s.ready(ctx, t.Token) },
			}},
		})
		if err != nil {
			return nil, s.explainStart(err)
		}
		s.ifaces, s.gw, s.token = set, set.Process(Dashboard), set.Token(Dashboard)
	} else {
		if s.token, err = harnessui.NewToken(); err != nil {
			return nil, adapterkit.Wrap(CodeStartFailed, err)
		}
		p, err := proc.Start(ctx, proc.Spec{
			Path: bin.Node, Args: args, Dir: workspace,
			Env:    append(env, TokenEnv+"="+s.token),
			Stdout: s.output, Stderr: s.output, Grace: gatewayGrace,
		})
		if err != nil {
			return nil, adapterkit.Wrap(CodeStartFailed, err)
		}
		s.gw = p
		if err := s.awaitHealthy(ctx); err != nil {
			return nil, err
		}
	}
	log.Info("openclaw: gateway ready", "runtime_id", runtimeID, "port", s.port, "pid", s.gw.Pid(), "dashboard", set.Dashboard != nil, "node", bin.NodeVersion)
	ok = true
	return s, nil
}

// mkdirOr creates dir (errors surface when the lock file is opened).
func mkdirOr(dir string) string {
	_ = os.MkdirAll(dir, 0o700)
	return dir
}

// explainStart adds the Gateway's last output to a start failure.
func (s *session) explainStart(err error) error {
	var ae *adapterkit.Error
	if !errors.As(err, &ae) {
		ae = adapterkit.Wrap(CodeStartFailed, err)
	}
	out := *ae
	out.Message = ae.Message
	if t := s.output.String(); t != "" && out.Code != harnessui.CodePortTaken && out.Code != harnessui.CodeInvalid {
		out.Message += "; the Gateway's last output:\n" + t
	}
	return &out
}

// awaitHealthy polls the Gateway's /healthz until it answers 200, then
// checks the Gateway still runs and owns its port (as S2 asks of
// interfaces).
func (s *session) awaitHealthy(ctx context.Context) error {
	err := s.gw.AwaitHealthy(ctx, uint16(s.port), healthPollMax, s.healthz)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, proc.ErrExited):
		return s.explainStart(adapterkit.Wrap(CodeGatewayExited, fmt.Errorf("the OpenClaw Gateway exited before it was healthy: %w", err)))
	case ctx.Err() != nil:
		return s.explainStart(adapterkit.Wrap(CodeStartTimeout, fmt.Errorf("the OpenClaw Gateway was not healthy within startup_timeout_seconds (%s)", s.set.StartupTimeout)))
	case errors.Is(err, proc.ErrNotListening):
		return adapterkit.Wrap(CodePortUnavailable, fmt.Errorf("after health, port %d is not held by the Gateway: %w", s.port, err))
	}
	return adapterkit.Wrap(CodeStartFailed, err)
}

// healthz is the Gateway's unauthenticated liveness endpoint.
func (s *session) healthz(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	return s.get(ctx, "/healthz", "")
}

// ready checks that an authenticated request succeeds and lists the
// runtime's agent. It never calls the model.
func (s *session) ready(ctx context.Context, token string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
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

func (s *session) get(ctx context.Context, path, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("GET %s: status %d", path, resp.StatusCode)
	}
	return nil
}

// agentModel is the agent target the runtime's turns address.
func (s *session) agentModel() string { return "openclaw/" + s.set.AgentID }

// env returns the Gateway's environment: the host's, without the host
// protocol's variables and the model key's own variable, with HOME, TMPDIR,
// XDG and OpenClaw's state and config pointed into the runtime's private
// directories, Node first on PATH, OpenClaw's own switches for updates,
// Bonjour and channels off, and the key under KeyEnv (C1). The token is
// added by the caller.
func (s *session) env(base []string, bin Binary, m Model, key string) []string {
	path := os.Getenv("PATH")
	for _, kv := range base {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	set := append(s.dirs.Env(),
		"PATH="+filepath.Dir(bin.Node)+string(os.PathListSeparator)+path,
		"OPENCLAW_STATE_DIR="+s.state,
		"OPENCLAW_CONFIG_PATH="+s.configPath,
		"OPENCLAW_NO_AUTO_UPDATE=1",
		"OPENCLAW_DISABLE_BONJOUR=1",
		"OPENCLAW_SKIP_CHANNELS=1",
		"OPENCLAW_SKIP_CRON=1",
		"OPENCLAW_SKIP_CANVAS_HOST=1",
		"OPENCLAW_SKIP_GMAIL_WATCHER=1",
		"NO_COLOR=1",
		KeyEnv+"="+key,
	)
	return adapterkit.ChildEnv(base, []string{
		m.APIKeyEnv, TokenEnv, EnvBinary, EnvNode, "OPENCLAW_HOME", "OPENCLAW_PROFILE",
		"OPENCLAW_GATEWAY_PORT", "OPENCLAW_GATEWAY_PASSWORD", "NODE_OPTIONS",
	}, set...)
}

// alive reports whether the Gateway runs.
func (s *session) alive() bool {
	if s.gw == nil {
		return false
	}
	select {
	case <-s.gw.Done():
		return false
	default:
		return true
	}
}

// Invoke runs one turn on the runtime's agent session.
func (s *session) Invoke(ctx context.Context, inv adapterkit.Invocation) (contract.AgentRunResult, error) {
	s.busy.Store(true)
	defer s.busy.Store(false)
	if !s.alive() {
		info, _ := s.gw.ExitState()
		return contract.AgentRunResult{}, &adapterkit.Error{Code: CodeGatewayExited, Message: fmt.Sprintf("the OpenClaw Gateway is not running (%s)", info)}
	}
	if ctx.Err() != nil {
		return contract.AgentRunResult{Status: contract.StatusCancelled, Output: ""}, nil
	}
	turn := s.turns.Add(1)
	req := chatRequest{
		Model: s.agentModel(), User: s.user, Stream: true,
		StreamOptions: map[string]any{"include_usage": true},
		Messages:      []chatMessage{{Role: "user", Content: InputText(inv.Request.Input)}},
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
	if !s.alive() {
		info, _ := s.gw.ExitState()
		return contract.AgentRunResult{}, &adapterkit.Error{Code: CodeGatewayExited, Message: fmt.Sprintf("the OpenClaw Gateway exited during the turn (%s)", info)}
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
		if t := s.output.String(); t != "" {
			msg += "; the Gateway's last output:\n" + t
		}
	}
	res.Error = &contract.AgentRunError{Code: code, Message: msg, Retryable: retry, Extensions: md}
	return res, nil
}

// InputText is the text of an invocation input: a string as is, anything
// else as JSON.
func InputText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Health reports evidence from the Gateway for one level, without calling
// the model: live, the Gateway process runs and owns its port; active,
// its /healthz answers; ready, an authenticated /v1/models lists the
// runtime's agent.
func (s *session) Health(ctx context.Context, level string) (adapterkit.Health, error) {
	h := adapterkit.Health{Source: "openclaw gateway", Activity: contract.ActivityIdle, ObservedAtMillis: time.Now().UnixMilli()}
	if s.busy.Load() {
		h.Activity = contract.ActivityBusy
	}
	if s.gw != nil {
		h.Metadata = map[string]any{"gateway_pid": s.gw.Pid(), "port": s.port}
	}
	fail := func(reason, msg string) (adapterkit.Health, error) {
		h.Outcome, h.ReasonCode, h.Message = contract.OutcomeFailed, reason, msg
		return h, nil
	}
	switch level {
	case contract.LevelLive, contract.LevelActive, contract.LevelReady:
	default:
		h.Outcome, h.ReasonCode = contract.OutcomeUnsupported, contract.ReasonUnsupportedLevel
		return h, nil
	}
	if !s.alive() {
		return fail(contract.ReasonAgentExited, "the OpenClaw Gateway is not running")
	}
	if owns, err := s.gw.OwnsListener(uint16(s.port)); err == nil && !owns {
		return fail(contract.ReasonEndpointUnavailable, fmt.Sprintf("the Gateway does not hold port %d", s.port))
	}
	if level != contract.LevelLive {
		if err := s.healthz(ctx); err != nil {
			if ctx.Err() != nil {
				h.Outcome, h.ReasonCode, h.Message = contract.OutcomeUnknown, contract.ReasonProbeTimeout, err.Error()
				return h, nil
			}
			return fail(contract.ReasonHealthFailed, err.Error())
		}
	}
	if level == contract.LevelReady {
		if err := s.ready(ctx, s.token); err != nil {
			if ctx.Err() != nil {
				h.Outcome, h.ReasonCode, h.Message = contract.OutcomeUnknown, contract.ReasonProbeTimeout, err.Error()
				return h, nil
			}
			return fail(contract.ReasonHealthFailed, err.Error())
		}
	}
	h.Outcome = contract.OutcomePassed
	return h, nil
}

// Interfaces reports the runtime's interfaces for its handle: where the
// dashboard is and where its token is stored, never the token.
func (s *session) Interfaces() []contract.InterfaceInfo {
	if s.ifaces == nil {
		return nil
	}
	return s.ifaces.Interfaces()
}

// CheckInterface reports one interface's health (L4). The dashboard is
// the Gateway itself, so its failure is also the runtime's.
func (s *session) CheckInterface(ctx context.Context, name, level string) (adapterkit.Health, error) {
	if s.ifaces == nil || name != Dashboard {
		return adapterkit.Health{Outcome: contract.OutcomeFailed, ReasonCode: contract.ReasonEndpointUnavailable, Source: "openclaw gateway", Message: "no interface " + strconv.Quote(name) + " runs", ObservedAtMillis: time.Now().UnixMilli()}, nil
	}
	return s.ifaces.Check(ctx, name, level), nil
}

// The session reports and checks its interfaces.
var _ adapterkit.InterfaceSession = (*session)(nil)

// Stop ends the Gateway: with the dashboard, iface removes the token file
// first, then SIGTERM to the Gateway's group, 5 s, SIGKILL (L5); without,
// SIGTERM, gatewayGrace, SIGKILL. Then every process that left the group
// but carries the runtime's private state directory is killed, the port
// reservation released and the private directories removed.
func (s *session) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.teardown(ctx) })
	return s.stopErr
}

func (s *session) teardown(ctx context.Context) error {
	var errs []error
	t0 := time.Now()
	s.client.CloseIdleConnections()
	switch {
	case s.ifaces != nil:
		if err := s.ifaces.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
	case s.gw != nil:
		if err := s.gw.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	tGateway := time.Since(t0)
	if s.state != "" {
		if pids := proc.KillByEnv("OPENCLAW_STATE_DIR="+s.state, sweepWait); len(pids) > 0 {
			s.log.Info("openclaw: killed processes that had left the Gateway's process group", "pids", pids)
		}
	}
	s.wd.stop(time.Second)
	tSweep := time.Since(t0)
	s.res.release()
	if s.dirs.Root != "" {
		if err := removeAll(s.dirs.Root); err != nil {
			errs = append(errs, fmt.Errorf("remove private directories: %w", err))
		}
	}
	s.log.Info("openclaw: stopped", "runtime_id", s.runtimeID, "gateway_ms", tGateway.Milliseconds(), "sweep_ms", (tSweep - tGateway).Milliseconds(), "remove_ms", (time.Since(t0) - tSweep).Milliseconds())
	return errors.Join(errs...)
}

// removeAll removes dir, retrying briefly: a process that was just killed
// may still have been writing into it.
func removeAll(dir string) error {
	var err error
	for range 5 {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// PrivateDirs returns the session's private root and state directory
// (for tests and diagnostics).
func (s *session) PrivateDirs() (root, state string) { return s.dirs.Root, s.state }

// tail keeps the last max bytes written to it, whole lines where it can.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
		if i := strings.IndexByte(string(t.buf), '\n'); i >= 0 && i < len(t.buf)-1 {
			t.buf = t.buf[i+1:]
		}
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}
