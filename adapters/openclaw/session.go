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
	"sync/atomic"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/adapterkit/serverharness"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/proc"
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

func (adapter) Start(ctx context.Context, in adapterkit.StartInput) (adapterkit.Session, error) {
	set, err := parseSettings(in.Config.Harness)
	if err != nil {
		return nil, serverharness.SettingsError(CodeInvalidSettings, err)
	}
	log := in.Log().With("adapter", ID)
	runtimeID := in.RuntimeContext.RuntimeID
	s := &session{
		log: log, in: in, set: set, runtimeID: runtimeID,
		user: "fabric:" + runtimeID,
		srv: &serverharness.Server{
			Name: "the OpenClaw Gateway", Short: "the Gateway", Source: "openclaw gateway", PIDKey: "gateway_pid",
			Log: log, RuntimeID: runtimeID,
			OutputOf: "the Gateway's", Output: &serverharness.Tail{Max: 16 << 10},
			Codes: serverharness.Codes{
				APIKeyMissing: CodeAPIKeyMissing, InvalidWorkspace: CodeInvalidWorkspace,
				StartFailed: CodeStartFailed, Timeout: CodeStartTimeout, Exited: CodeGatewayExited, NotHeld: CodePortUnavailable,
			},
		},
		client: &http.Client{Transport: serverharness.Transport(0)},
	}
	return serverharness.Start(ctx, set.StartupTimeout, s, s.resolve, s.prepare, s.run)
}

// resolve finds the model, OpenClaw and Node, the key and the workspace.
func (s *session) resolve(ctx context.Context) error {
	var err error
	if s.model, err = selectModel(s.in.Config.Models); err != nil {
		return adapterkit.Wrap(CodeInvalidConfig, err)
	}
	if s.key, s.workspace, err = s.srv.KeyAndWorkspace(s.in, s.model.Model); err != nil {
		return err
	}
	s.bin, err = resolveBinary(ctx, os.Getenv, os.Getenv("PATH"))
	switch {
	case errors.Is(err, errNodeUnsupported):
		return adapterkit.Wrap(CodeNodeUnsupported, err)
	case err != nil:
		return adapterkit.Wrap(CodeBinaryNotFound, err)
	}
	return nil
}

// prepare creates the private directories, starts the watchdog, reserves
// the Gateway's ports and writes its configuration.
func (s *session) prepare(context.Context) error {
	var err error
	if s.dirs, err = adapterkit.MakeDirs(s.in.Home, "openclaw", "state", "logs"); err != nil {
		return adapterkit.Wrap(CodeStartFailed, err)
	}
	s.state = filepath.Join(s.dirs.Root, "state")
	s.configPath = filepath.Join(s.dirs.Root, "openclaw.json")
	s.logFile = filepath.Join(s.dirs.Root, "logs", "openclaw.log")
	if s.wd, err = startWatchdog("OPENCLAW_STATE_DIR=" + s.state); err != nil {
		s.log.Warn("openclaw: no watchdog: the Gateway's helpers would outlive a killed host", "error", err)
	}

	// The Gateway's base port: the dashboard's exact port (S2, L6), else
	// one reserved in port_range (Q7).
	if d := s.set.Dashboard; d != nil {
		f, err := lockFile(filepath.Join(mkdirOr(portsDir()), strconv.Itoa(d.Port)+".lock"))
		if err != nil {
			return &harnessui.Error{Code: harnessui.CodePortTaken, Interface: Dashboard, Message: fmt.Sprintf("port %d is taken before launch (S2, L6)", d.Port), Err: err}
		}
		s.res = &reservation{Base: d.Port, f: f}
	} else if s.res, err = pickBase(s.set.PortRange); err != nil {
		return adapterkit.Wrap(CodePortUnavailable, err)
	}
	s.srv.Port = s.res.Base
	s.base = "http://127.0.0.1:" + strconv.Itoa(s.srv.Port)

	cfg := gatewayConfig{
		Port: s.srv.Port, AgentID: s.set.AgentID, Model: s.model, Workspace: s.workspace, LogFile: s.logFile,
	}
	if d := s.set.Dashboard; d != nil {
		cfg.Dashboard, cfg.AllowedOrigins = true, d.PublicOrigins
	}
	doc, err := cfg.build()
	if err != nil {
		return adapterkit.Wrap(CodeStartFailed, err)
	}
	if err := os.WriteFile(s.configPath, doc, 0o600); err != nil {
		return adapterkit.Wrap(CodeStartFailed, err)
	}
	return nil
}

// run starts the Gateway and waits until it is ready: through harnessui
// when it serves the dashboard, else on its own.
func (s *session) run(ctx context.Context) error {
	if err := s.launch(ctx); err != nil {
		return err
	}
	s.log.Info("openclaw: gateway ready", "runtime_id", s.runtimeID, "port", s.srv.Port, "pid", s.srv.Proc.Pid(), "dashboard", s.set.Dashboard != nil, "node", s.bin.NodeVersion)
	return nil
}

func (s *session) launch(ctx context.Context) error {
	env := s.env(os.Environ(), s.bin, s.model, s.key)
	args := []string{s.bin.Entry, "gateway", "run"}
	d := s.set.Dashboard
	if d == nil {
		var err error
		if s.token, err = harnessui.NewToken(); err != nil {
			return adapterkit.Wrap(CodeStartFailed, err)
		}
		p, err := proc.Start(ctx, proc.Spec{
			Path: s.bin.Node, Args: args, Dir: s.workspace,
			Env:    append(env, tokenEnv+"="+s.token),
			Stdout: s.srv.Output, Stderr: s.srv.Output, Grace: gatewayGrace,
		})
		if err != nil {
			return adapterkit.Wrap(CodeStartFailed, err)
		}
		s.srv.Proc = p
		return s.srv.AwaitHealthy(ctx, s.set.StartupTimeout, s.healthz)
	}
	root, err := filepath.Abs(harnessui.ArtifactRoot(s.in))
	if err != nil {
		return adapterkit.Wrap(CodeStartFailed, err)
	}
	set, err := harnessui.Start(ctx, harnessui.Spec{
		RuntimeID: s.runtimeID, ArtifactRoot: root, AdapterName: adapterName,
		StartupTimeout: s.set.StartupTimeout,
		Logger:         s.log,
		Children: []harnessui.Child{{
			Name: Dashboard, Kind: contract.InterfaceHTTP, Browser: true, Credential: contract.CredentialBearer,
			Port: d.Port, CheckPorts: []int{d.Port + BrowserPort}, Path: "/",
			Command: s.bin.Node, Args: args, Dir: s.workspace, Env: env, TokenEnv: tokenEnv,
			Stdout: s.srv.Output, Stderr: s.srv.Output,
			HealthPath: "/healthz",
			Ready:      func(ctx context.Context, t harnessui.Target) error { return s.ready(ctx, t.Token) },
		}},
	})
	if err != nil {
		return s.srv.Explain(err)
	}
	s.srv.Ifaces, s.srv.Proc, s.token = set, set.Process(Dashboard), set.Token(Dashboard)
	return nil
}

// mkdirOr creates dir (errors surface when the lock file is opened).
func mkdirOr(dir string) string {
	_ = os.MkdirAll(dir, 0o700)
	return dir
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

// env returns the Gateway's environment: the host's, without the host
// protocol's variables and the model key's own variable, with HOME, TMPDIR,
// XDG and OpenClaw's state and config pointed into the runtime's private
// directories, Node first on PATH, OpenClaw's own switches for updates,
// Bonjour and channels off, and the key under keyEnv (C1). The token is
// added by the caller.
func (s *session) env(base []string, bin binary, m model, key string) []string {
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
		keyEnv+"="+key,
	)
	return adapterkit.ChildEnv(base, []string{
		m.APIKeyEnv, tokenEnv, envBinary, envNode, "OPENCLAW_HOME", "OPENCLAW_PROFILE",
		"OPENCLAW_GATEWAY_PORT", "OPENCLAW_GATEWAY_PASSWORD", "NODE_OPTIONS",
	}, set...)
}

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
