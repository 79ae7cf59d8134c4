package opencode

import (
	"context"
	"errors"
	"fmt"
	"github.com/fabric-runtime/fabric/internal/lazy"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/adapterkit/serverharness"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/proc"
)

// Start starts a runtime's server and its session: its settings, then the
// steps resolve, configure, run and createSession, under one deadline for
// all of start (L3).
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
		s.setPort(port)
		return nil
	case <-s.srv.Proc.Done():
		info, _ := s.srv.Proc.ExitState()
		return s.srv.Explain(adapterkit.Wrap(CodeServerExited, fmt.Errorf("opencode serve exited (%s) before it listened", info)))
	case <-ctx.Done():
		return s.srv.Explain(adapterkit.Wrap(CodeStartTimeout, fmt.Errorf("opencode serve did not listen within startup_timeout_seconds (%s)", s.set.StartupTimeout)))
	}
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
