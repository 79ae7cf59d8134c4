package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/lazy"
	"github.com/fabric-runtime/fabric/proc"
)

// Timing of the adapter's waits.
const (
	// serverGrace is the SIGTERM-to-SIGKILL grace of a server that is not
	// an interface (OpenCode exits about 1.7 s after SIGTERM). A server
	// that serves the web UI is stopped by harnessui with the contract's 5 s.
	serverGrace = 3 * time.Second
	// sweepWait bounds the killing of processes that left the group.
	sweepWait = 2 * time.Second
	// healthPollMax is the longest pause between health probes at start.
	healthPollMax = 250 * time.Millisecond
	// probeTimeout bounds one health probe.
	probeTimeout = 2 * time.Second
	// abortWait is how long a cancelled turn waits for the session to be
	// idle after the abort request.
	abortWait = 1200 * time.Millisecond
)

// Names of OpenCode's Basic auth.
const (
	PasswordEnv = "OPENCODE_SERVER_PASSWORD"
	Username    = "opencode"
)

// Event kinds the adapter emits.
const (
	EventOutputDelta    = "output_delta"
	EventReasoningDelta = "reasoning_delta"
	EventToolCall       = "tool_call"
	EventToolResult     = "tool_result"
	EventUsage          = "usage"
)

// New returns the OpenCode adapter.
func New() adapterkit.Adapter { return adapter{} }

type adapter struct{}

// session is one runtime: one `opencode serve` and one session on it.
type session struct {
	log       *slog.Logger
	set       Settings
	model     Model
	key       string // the model key, only to scrub it from text; never logged
	runtimeID string

	// Private directories and files, all under dirs.Root, all removed at
	// stop.
	dirs                  adapterkit.Dirs
	configPath, instrPath string
	marker                string // the server's proc.Spec.EnvMarker

	bin       string
	workspace string
	port      int
	base      string         // http://127.0.0.1:<port>
	password  string         // the server's per-start password; never logged or reported
	srv       *proc.Process  // the server
	ownSrv    bool           // srv was started here (not by harnessui)
	ifaces    *harnessui.Set // nil without interfaces
	output    *tail          // the server's last output lines
	listening chan int       // the port from the server's "listening on" line
	client    *http.Client   // loopback only, no proxy, request timeout
	stream    *http.Client   // for /event: no overall timeout
	sessionID string

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
	bin, err := ResolveBinary(os.Getenv, os.Getenv("PATH"))
	if err != nil {
		return nil, adapterkit.Wrap(CodeBinaryNotFound, err)
	}
	workspace, err := adapterkit.Workspace(in)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidWorkspace, err)
	}
	transport := &http.Transport{Proxy: nil, MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second, ResponseHeaderTimeout: set.RequestTimeout}
	s := &session{
		log: log, set: set, model: model, key: key, runtimeID: in.RuntimeContext.RuntimeID,
		bin: bin, workspace: workspace,
		output:    &tail{max: 16 << 10},
		listening: make(chan int, 1),
		client:    &http.Client{Transport: transport, Timeout: set.RequestTimeout},
		stream:    &http.Client{Transport: transport},
	}
	ok := false
	defer func() {
		if !ok {
			s.teardown(context.WithoutCancel(ctx))
		}
	}()
	if s.dirs, err = adapterkit.MakeDirs(in.Home, "opencode"); err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, err)
	}
	s.configPath = filepath.Join(s.dirs.Root, "opencode.json")
	s.instrPath = filepath.Join(s.dirs.Root, "instructions.md")
	s.marker = "OPENCODE_CONFIG=" + s.configPath
	doc, instr, err := ServerConfig{
		Model: model, Agent: set.Agent, Snapshots: set.Snapshots, Instructions: systemInstruction(in.Config.Instructions),
		InstructionsFile: s.instrPath, MCP: in.Config.MCP,
	}.Build()
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidConfig, err)
	}
	if err := os.WriteFile(s.configPath, doc, 0o600); err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, err)
	}
	if instr != "" {
		if err := os.WriteFile(s.instrPath, []byte(instr), 0o600); err != nil {
			return nil, adapterkit.Wrap(CodeStartFailed, err)
		}
	}
	if s.password, err = harnessui.NewToken(); err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, err)
	}
	env := s.env(os.Environ(), key)
	args := []string{"serve", "--pure", "--hostname", harnessui.Loopback}

	if w := set.Web; w != nil {
		// The web UI is the server itself, on the consumer's exact port.
		s.port = w.Port
		s.base = "http://" + harnessui.Loopback + ":" + strconv.Itoa(s.port)
		args = append(args, "--port", strconv.Itoa(s.port))
		for _, o := range w.PublicOrigins {
			args = append(args, "--cors", o)
		}
		children := []harnessui.Child{{
			Name: Web, Kind: contract.InterfaceHTTP, Browser: true, Credential: contract.CredentialBasic,
			Token: s.password, TokenEnv: PasswordEnv, Port: s.port, Path: "/",
			Command: bin, Args: args, Dir: workspace, Env: env, EnvMarker: s.marker,
			Stdout: s.output, Stderr: s.output,
			Health: func(ctx context.Context, _ harnessui.Target) error { return s.health(ctx) },
			Ready:  func(ctx context.Context, _ harnessui.Target) error { return s.health(ctx) },
		}}
		if set.Terminal != nil {
			children = append(children, s.terminalChild())
		}
		is, err := harnessui.Start(ctx, s.ifaceSpec(in, children))
		if err != nil {
			return nil, s.explainStart(err)
		}
		s.ifaces, s.srv = is, is.Process(Web)
	} else {
		p, err := proc.Start(ctx, proc.Spec{
			Path: bin, Args: append(args, "--port", "0"), Dir: workspace,
			Env:    append(env, PasswordEnv+"="+s.password),
			Stdout: &portScanner{w: s.output, found: s.listening}, Stderr: s.output,
			Grace: serverGrace, EnvMarker: s.marker,
		})
		if err != nil {
			return nil, adapterkit.Wrap(CodeStartFailed, err)
		}
		s.srv, s.ownSrv = p, true
		if err := s.awaitListening(ctx); err != nil {
			return nil, err
		}
		if err := s.awaitHealthy(ctx); err != nil {
			return nil, err
		}
		if set.Terminal != nil {
			is, err := harnessui.Start(ctx, s.ifaceSpec(in, []harnessui.Child{s.terminalChild()}))
			if err != nil {
				return nil, s.explainStart(err)
			}
			s.ifaces = is
		}
	}
	if err := s.createSession(ctx); err != nil {
		return nil, s.explainStart(adapterkit.Wrap(CodeStartFailed, err))
	}
	log.Info("opencode: server ready", "runtime_id", s.runtimeID, "port", s.port, "pid", s.srv.Pid(), "session", s.sessionID,
		"web", set.Web != nil, "terminal", set.Terminal != nil)
	ok = true
	return s, nil
}

func systemInstruction(in *contract.AgentInstructionsConfig) *contract.AgentInstruction {
	if in == nil {
		return nil
	}
	return in.System
}

func (s *session) ifaceSpec(in adapterkit.StartInput, children []harnessui.Child) harnessui.Spec {
	root, _ := filepath.Abs(harnessui.ArtifactRoot(in))
	return harnessui.Spec{
		RuntimeID: s.runtimeID, ArtifactRoot: root, AdapterName: Name,
		StartupTimeout: s.set.StartupTimeout, Logger: s.log, Children: children,
	}
}

// terminalChild is the terminal interface: a launcher that runs `opencode
// attach` against the runtime's server and continues its session, with
// the password from the token file (the server's one password).
func (s *session) terminalChild() harnessui.Child {
	return harnessui.Child{
		Name: Terminal, Kind: contract.InterfaceTerminal, Credential: contract.CredentialBasic, Token: s.password,
		Launcher: &harnessui.Launcher{
			Argv:     []string{s.bin, "attach", s.base, "--dir", s.workspace, "--continue"},
			Env:      OfflineEnv(),
			Dir:      s.workspace,
			TokenEnv: PasswordEnv,
		},
	}
}

// portScanner passes output on and reports the port of the server's
// "opencode server listening on http://127.0.0.1:<port>" line once.
type portScanner struct {
	w     io.Writer
	found chan int
	mu    sync.Mutex
	buf   []byte
	done  bool
}

var listeningRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`listening on http://127\.0\.0\.1:(\d+)\s`) }}

func (p *portScanner) Write(b []byte) (int, error) {
	p.mu.Lock()
	if !p.done {
		p.buf = append(p.buf, b...)
		if m := listeningRE.Get().FindSubmatch(p.buf); m != nil {
			if port, err := strconv.Atoi(string(m[1])); err == nil && port > 0 && port < 65536 {
				p.found <- port
				p.done = true
			}
		}
		if len(p.buf) > 64<<10 {
			p.buf = p.buf[len(p.buf)-1024:]
		}
	}
	p.mu.Unlock()
	return p.w.Write(b)
}

// awaitListening waits for the server's listening line.
func (s *session) awaitListening(ctx context.Context) error {
	select {
	case port := <-s.listening:
		s.port = port
		s.base = "http://" + harnessui.Loopback + ":" + strconv.Itoa(port)
		return nil
	case <-s.srv.Done():
		info, _ := s.srv.ExitState()
		return s.explainStart(adapterkit.Wrap(CodeServerExited, fmt.Errorf("opencode serve exited (%s) before it listened", info)))
	case <-ctx.Done():
		return s.explainStart(adapterkit.Wrap(CodeStartTimeout, fmt.Errorf("opencode serve did not listen within startup_timeout_seconds (%s)", s.set.StartupTimeout)))
	}
}

// awaitHealthy polls GET /global/health until it answers, then checks the
// server still runs and owns its port on loopback (as S2 asks of
// interfaces).
func (s *session) awaitHealthy(ctx context.Context) error {
	err := s.srv.AwaitHealthy(ctx, uint16(s.port), healthPollMax, s.health)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, proc.ErrExited):
		return s.explainStart(adapterkit.Wrap(CodeServerExited, fmt.Errorf("opencode serve exited before it was healthy: %w", err)))
	case ctx.Err() != nil:
		return s.explainStart(adapterkit.Wrap(CodeStartTimeout, fmt.Errorf("opencode serve was not healthy within startup_timeout_seconds (%s)", s.set.StartupTimeout)))
	case errors.Is(err, proc.ErrNotListening):
		return adapterkit.Wrap(CodeStartFailed, fmt.Errorf("after health, port %d is not held by opencode serve: %w", s.port, err))
	}
	return adapterkit.Wrap(CodeStartFailed, err)
}

// explainStart adds the server's last output to a start failure.
func (s *session) explainStart(err error) error {
	var ae *adapterkit.Error
	if !errors.As(err, &ae) {
		ae = adapterkit.Wrap(CodeStartFailed, err)
	}
	out := *ae
	if t := s.output.String(); t != "" && out.Code != harnessui.CodePortTaken && out.Code != harnessui.CodeInvalid {
		out.Message += "; the server's last output:\n" + s.scrub(t)
	}
	return &out
}

// request sends one request to the server with Basic auth and the request
// timeout, and decodes a 2xx JSON answer into out (when not nil).
func (s *session) request(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, s.set.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		return err
	}
	req.SetBasicAuth(Username, s.password)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &httpError{Method: method, Path: path, Status: resp.StatusCode, Body: s.scrub(cut(string(data), 500))}
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return nil
}

// httpError is a non-2xx answer of the server.
type httpError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("%s %s: status %d: %s", e.Method, e.Path, e.Status, e.Body)
}

// health asks the server's /global/health (authenticated).
func (s *session) health(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var h struct {
		Healthy bool `json:"healthy"`
	}
	if err := s.request(ctx, http.MethodGet, "/global/health", nil, &h); err != nil {
		return err
	}
	if !h.Healthy {
		return errors.New("GET /global/health: not healthy")
	}
	return nil
}

// createSession creates the runtime's one OpenCode session.
func (s *session) createSession(ctx context.Context) error {
	var out struct {
		ID string `json:"id"`
	}
	if err := s.request(ctx, http.MethodPost, "/session", map[string]any{"title": "fabric " + s.runtimeID}, &out); err != nil {
		return err
	}
	if out.ID == "" {
		return errors.New("POST /session: no session id")
	}
	s.sessionID = out.ID
	return nil
}

// env returns the server's environment: the host's, without the host
// protocol's variables, the model key's own variable and every OPENCODE_*
// variable, with HOME, TMPDIR and XDG pointed into the runtime's private
// directories, OpenCode's configuration file and offline switches, and
// the key under KeyEnv (C1). The password is added by the caller (or
// harnessui).
func (s *session) env(base []string, key string) []string {
	set := append(s.dirs.Env(), s.marker)
	set = append(set, offlineEnv...)
	set = append(set, KeyEnv+"="+key)
	return adapterkit.ChildEnv(base, []string{"OPENCODE_*", s.model.APIKeyEnv, KeyEnv, EnvBinary}, set...)
}

// alive reports whether the server runs.
func (s *session) alive() bool {
	if s.srv == nil {
		return false
	}
	select {
	case <-s.srv.Done():
		return false
	default:
		return true
	}
}

// scrub replaces the model key and the password in text.
func (s *session) scrub(text string) string {
	for _, secret := range []string{s.key, s.password} {
		if len(secret) >= 4 {
			text = strings.ReplaceAll(text, secret, contract.Redacted)
		}
	}
	return text
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Health reports evidence from the server for one level, without calling
// the model: live, the server runs and owns its port; active, its
// /global/health answers; ready, the runtime's session is there.
func (s *session) Health(ctx context.Context, level string) (adapterkit.Health, error) {
	h := adapterkit.Health{Source: "opencode serve", Activity: contract.ActivityIdle, ObservedAtMillis: time.Now().UnixMilli()}
	if s.busy.Load() {
		h.Activity = contract.ActivityBusy
	}
	if s.srv != nil {
		h.Metadata = map[string]any{"server_pid": s.srv.Pid(), "port": s.port}
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
		return fail(contract.ReasonAgentExited, "opencode serve is not running")
	}
	if owns, err := s.srv.OwnsListener(uint16(s.port)); err == nil && !owns {
		return fail(contract.ReasonEndpointUnavailable, fmt.Sprintf("opencode serve does not hold port %d", s.port))
	}
	probe := func(err error) (adapterkit.Health, error, bool) {
		if err == nil {
			return h, nil, false
		}
		if ctx.Err() != nil {
			h.Outcome, h.ReasonCode, h.Message = contract.OutcomeUnknown, contract.ReasonProbeTimeout, err.Error()
			return h, nil, true
		}
		r, e := fail(contract.ReasonHealthFailed, err.Error())
		return r, e, true
	}
	if level != contract.LevelLive {
		if r, e, done := probe(s.health(ctx)); done {
			return r, e
		}
	}
	if level == contract.LevelReady {
		if r, e, done := probe(s.request(ctx, http.MethodGet, "/session/"+s.sessionID, nil, nil)); done {
			return r, e
		}
	}
	h.Outcome = contract.OutcomePassed
	return h, nil
}

// Interfaces reports the runtime's interfaces for its handle: where they
// are and where their password is stored, never the password.
func (s *session) Interfaces() []contract.InterfaceInfo {
	if s.ifaces == nil {
		return nil
	}
	return s.ifaces.Interfaces()
}

// CheckInterface reports one interface's health (L4).
func (s *session) CheckInterface(ctx context.Context, name, level string) (adapterkit.Health, error) {
	if s.ifaces == nil || (name != Web && name != Terminal) || (name == Web && s.set.Web == nil) || (name == Terminal && s.set.Terminal == nil) {
		return adapterkit.Health{Outcome: contract.OutcomeFailed, ReasonCode: contract.ReasonEndpointUnavailable, Source: "opencode serve", Message: "no interface " + strconv.Quote(name) + " runs", ObservedAtMillis: time.Now().UnixMilli()}, nil
	}
	return s.ifaces.Check(ctx, name, level), nil
}

// The session reports and checks its interfaces.
var _ adapterkit.InterfaceSession = (*session)(nil)

// Stop ends the server: harnessui removes the token files and markers first;
// then SIGTERM to the server's group, a grace, SIGKILL; then every process
// that left the group but carries the runtime's configuration path is
// killed and the private directories are removed.
func (s *session) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.teardown(ctx) })
	return s.stopErr
}

func (s *session) teardown(ctx context.Context) error {
	var errs []error
	t0 := time.Now()
	s.client.CloseIdleConnections()
	if s.ifaces != nil {
		if err := s.ifaces.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if s.ownSrv && s.srv != nil {
		if err := s.srv.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	tServer := time.Since(t0)
	if s.marker != "" {
		if pids := proc.KillByEnv(s.marker, sweepWait); len(pids) > 0 {
			s.log.Info("opencode: killed processes that had left the server's process group", "pids", pids)
		}
	}
	if s.dirs.Root != "" {
		if err := removeAll(s.dirs.Root); err != nil {
			errs = append(errs, fmt.Errorf("remove private directories: %w", err))
		}
	}
	s.log.Info("opencode: stopped", "runtime_id", s.runtimeID, "server_ms", tServer.Milliseconds(), "total_ms", time.Since(t0).Milliseconds())
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

// tail keeps the last max bytes written to it.
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
