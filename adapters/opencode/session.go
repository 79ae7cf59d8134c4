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
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/adapterkit/serverharness"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/proc"
)

// Timing of the adapter's waits.
const (
	// serverGrace is the SIGTERM-to-SIGKILL grace of a server that is not
	// an interface (OpenCode exits about 1.7 s after SIGTERM). A server
	// that serves the web UI is stopped by harnessui with the contract's 5 s.
	serverGrace = 3 * time.Second
	// abortWait is how long a cancelled turn waits for the session to be
	// idle after the abort request.
	abortWait = 1200 * time.Millisecond
)

// Names of OpenCode's Basic auth.
const (
	passwordEnv = "OPENCODE_SERVER_PASSWORD"
	username    = "opencode"
)

// event kinds the adapter emits.
const (
	eventOutputDelta    = "output_delta"
	eventReasoningDelta = "reasoning_delta"
	eventToolCall       = "tool_call"
	eventToolResult     = "tool_result"
	eventUsage          = "usage"
)

// New returns the OpenCode adapter.
func New() adapterkit.Adapter { return adapter{} }

type adapter struct{}

// session is one runtime: one `opencode serve` and one session on it.
type session struct {
	log       *slog.Logger
	in        adapterkit.StartInput
	set       Settings
	model     model
	key       string // the model key, only to scrub it from text; never logged
	runtimeID string

	// Private directories and files, all under dirs.Root, all removed at
	// stop.
	dirs                  adapterkit.Dirs
	configPath, instrPath string
	marker                string // the server's proc.Spec.EnvMarker

	bin       string
	workspace string
	srv       *serverharness.Server // the server and the interfaces
	base      string                // http://127.0.0.1:<port>
	password  string                // the server's per-start password; never logged or reported
	ownSrv    bool                  // srv was started here (not by harnessui)
	listening chan int              // the port from the server's "listening on" line
	client    *http.Client          // loopback only, no proxy, request timeout
	stream    *http.Client          // for /event: no overall timeout
	sessionID string

	turns atomic.Int64
}

func (adapter) Start(ctx context.Context, in adapterkit.StartInput) (adapterkit.Session, error) {
	set, err := parseSettings(in.Config.Harness)
	if err != nil {
		return nil, serverharness.SettingsError(CodeInvalidSettings, err)
	}
	log := in.Log().With("adapter", ID)
	transport := serverharness.Transport(set.RequestTimeout)
	s := &session{
		log: log, in: in, set: set, runtimeID: in.RuntimeContext.RuntimeID,
		listening: make(chan int, 1),
		client:    &http.Client{Transport: transport, Timeout: set.RequestTimeout},
		stream:    &http.Client{Transport: transport},
	}
	s.srv = &serverharness.Server{
		Name: "opencode serve", Source: "opencode serve", PIDKey: "server_pid",
		Log: log, RuntimeID: s.runtimeID,
		OutputOf: "the server's", Output: &serverharness.Tail{Max: 16 << 10}, Scrub: s.scrub,
		Codes: serverharness.Codes{
			APIKeyMissing: CodeAPIKeyMissing, InvalidWorkspace: CodeInvalidWorkspace,
			StartFailed: CodeStartFailed, Timeout: CodeStartTimeout, Exited: CodeServerExited, NotHeld: CodeStartFailed,
		},
	}
	return serverharness.Start(ctx, set.StartupTimeout, s, s.resolve, s.configure, s.run, s.createSession)
}

// resolve finds the model, the key, the workspace and OpenCode.
func (s *session) resolve(context.Context) error {
	var err error
	if s.model, err = selectModel(s.in.Config.Models); err != nil {
		return adapterkit.Wrap(CodeInvalidConfig, err)
	}
	if s.key, s.workspace, err = s.srv.KeyAndWorkspace(s.in, s.model); err != nil {
		return err
	}
	if s.bin, err = resolveBinary(os.Getenv, os.Getenv("PATH")); err != nil {
		return adapterkit.Wrap(CodeBinaryNotFound, err)
	}
	return nil
}

// configure creates the private directories and writes OpenCode's
// configuration, the instructions file and the password.
func (s *session) configure(context.Context) error {
	var err error
	if s.dirs, err = adapterkit.MakeDirs(s.in.Home, "opencode"); err != nil {
		return adapterkit.Wrap(CodeStartFailed, err)
	}
	s.configPath = filepath.Join(s.dirs.Root, "opencode.json")
	s.instrPath = filepath.Join(s.dirs.Root, "instructions.md")
	s.marker = "OPENCODE_CONFIG=" + s.configPath
	doc, instr, err := serverConfig{
		Model: s.model, Agent: s.set.Agent, Snapshots: s.set.Snapshots, Instructions: systemInstruction(s.in.Config.Instructions),
		InstructionsFile: s.instrPath, MCP: s.in.Config.MCP,
	}.build()
	if err != nil {
		return adapterkit.Wrap(CodeInvalidConfig, err)
	}
	if err := os.WriteFile(s.configPath, doc, 0o600); err != nil {
		return adapterkit.Wrap(CodeStartFailed, err)
	}
	if instr != "" {
		if err := os.WriteFile(s.instrPath, []byte(instr), 0o600); err != nil {
			return adapterkit.Wrap(CodeStartFailed, err)
		}
	}
	if s.password, err = harnessui.NewToken(); err != nil {
		return adapterkit.Wrap(CodeStartFailed, err)
	}
	return nil
}

// run starts the server and waits until it is healthy: through harnessui
// when it serves the web UI, else on a port of its choosing; then the
// terminal interface, when on.
func (s *session) run(ctx context.Context) error {
	env := s.env(os.Environ(), s.key)
	args := []string{"serve", "--pure", "--hostname", harnessui.Loopback}
	if w := s.set.Web; w != nil {
		// The web UI is the server itself, on the consumer's exact port.
		s.setPort(w.Port)
		args = append(args, "--port", strconv.Itoa(w.Port))
		for _, o := range w.PublicOrigins {
			args = append(args, "--cors", o)
		}
		children := []harnessui.Child{{
			Name: Web, Kind: contract.InterfaceHTTP, Browser: true, Credential: contract.CredentialBasic,
			Token: s.password, TokenEnv: passwordEnv, Port: w.Port, Path: "/",
			Command: s.bin, Args: args, Dir: s.workspace, Env: env, EnvMarker: s.marker,
			Stdout: s.srv.Output, Stderr: s.srv.Output,
			Health: func(ctx context.Context, _ harnessui.Target) error { return s.health(ctx) },
			Ready:  func(ctx context.Context, _ harnessui.Target) error { return s.health(ctx) },
		}}
		if s.set.Terminal != nil {
			children = append(children, s.terminalChild())
		}
		is, err := harnessui.Start(ctx, s.ifaceSpec(children))
		if err != nil {
			return s.srv.Explain(err)
		}
		s.srv.Ifaces, s.srv.Proc = is, is.Process(Web)
		return nil
	}
	p, err := proc.Start(ctx, proc.Spec{
		Path: s.bin, Args: append(args, "--port", "0"), Dir: s.workspace,
		Env:    append(env, passwordEnv+"="+s.password),
		Stdout: &portScanner{w: s.srv.Output, found: s.listening}, Stderr: s.srv.Output,
		Grace: serverGrace, EnvMarker: s.marker,
	})
	if err != nil {
		return adapterkit.Wrap(CodeStartFailed, err)
	}
	s.srv.Proc, s.ownSrv = p, true
	if err := s.awaitListening(ctx); err != nil {
		return err
	}
	if err := s.srv.AwaitHealthy(ctx, s.set.StartupTimeout, s.health); err != nil {
		return err
	}
	if s.set.Terminal != nil {
		is, err := harnessui.Start(ctx, s.ifaceSpec([]harnessui.Child{s.terminalChild()}))
		if err != nil {
			return s.srv.Explain(err)
		}
		s.srv.Ifaces = is
	}
	return nil
}

// setPort records the server's port.
func (s *session) setPort(port int) {
	s.srv.Port = port
	s.base = "http://" + harnessui.Loopback + ":" + strconv.Itoa(port)
}

func systemInstruction(in *contract.AgentInstructionsConfig) *contract.AgentInstruction {
	if in == nil {
		return nil
	}
	return in.System
}

func (s *session) ifaceSpec(children []harnessui.Child) harnessui.Spec {
	root, _ := filepath.Abs(harnessui.ArtifactRoot(s.in))
	return harnessui.Spec{
		RuntimeID: s.runtimeID, ArtifactRoot: root, AdapterName: adapterName,
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
			Env:      slices.Clone(offlineEnv),
			Dir:      s.workspace,
			TokenEnv: passwordEnv,
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

var listeningRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`listening on http://127\.0\.0\.1:(\d+)\s`) })

func (p *portScanner) Write(b []byte) (int, error) {
	p.mu.Lock()
	if !p.done {
		p.buf = append(p.buf, b...)
		if m := listeningRE().FindSubmatch(p.buf); m != nil {
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
		s.setPort(port)
		return nil
	case <-s.srv.Proc.Done():
		info, _ := s.srv.Proc.ExitState()
		return s.srv.Explain(adapterkit.Wrap(CodeServerExited, fmt.Errorf("opencode serve exited (%s) before it listened", info)))
	case <-ctx.Done():
		return s.srv.Explain(adapterkit.Wrap(CodeStartTimeout, fmt.Errorf("opencode serve did not listen within startup_timeout_seconds (%s)", s.set.StartupTimeout)))
	}
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
	req.SetBasicAuth(username, s.password)
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
	ctx, cancel := context.WithTimeout(ctx, serverharness.ProbeTimeout)
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

// createSession creates the runtime's one OpenCode session, the last step
// of start.
func (s *session) createSession(ctx context.Context) error {
	if err := s.newOpenCodeSession(ctx); err != nil {
		return s.srv.Explain(adapterkit.Wrap(CodeStartFailed, err))
	}
	s.log.Info("opencode: server ready", "runtime_id", s.runtimeID, "port", s.srv.Port, "pid", s.srv.Proc.Pid(), "session", s.sessionID,
		"web", s.set.Web != nil, "terminal", s.set.Terminal != nil)
	return nil
}

func (s *session) newOpenCodeSession(ctx context.Context) error {
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
// the key under keyEnv (C1). The password is added by the caller (or
// harnessui).
func (s *session) env(base []string, key string) []string {
	set := append(s.dirs.Env(), s.marker)
	set = append(set, offlineEnv...)
	set = append(set, keyEnv+"="+key)
	return adapterkit.ChildEnv(base, []string{"OPENCODE_*", s.model.APIKeyEnv, keyEnv, envBinary}, set...)
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
	return s.srv.Health(ctx, level, s.health, func(ctx context.Context) error {
		return s.request(ctx, http.MethodGet, "/session/"+s.sessionID, nil, nil)
	}), nil
}

// Interfaces reports the runtime's interfaces for its handle: where they
// are and where their password is stored, never the password.
func (s *session) Interfaces() []contract.InterfaceInfo { return s.srv.Interfaces() }

// CheckInterface reports one interface's health (L4).
func (s *session) CheckInterface(ctx context.Context, name, level string) (adapterkit.Health, error) {
	runs := (name == Web && s.set.Web != nil) || (name == Terminal && s.set.Terminal != nil)
	return s.srv.CheckInterface(ctx, name, level, runs), nil
}

// The session reports and checks its interfaces.
var _ adapterkit.InterfaceSession = (*session)(nil)

// Stop ends the server: harnessui removes the token files and markers first;
// then SIGTERM to the server's group, a grace, SIGKILL; then every process
// that left the group but carries the runtime's configuration path is
// killed and the private directories are removed.
func (s *session) Stop(ctx context.Context) error {
	s.client.CloseIdleConnections()
	return s.srv.Stop(ctx, serverharness.StopSpec{Own: s.ownSrv, Marker: s.marker, Root: s.dirs.Root})
}
