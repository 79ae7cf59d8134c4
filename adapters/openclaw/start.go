package openclaw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/adapterkit/serverharness"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/proc"
)

// Start starts a runtime's Gateway: its settings, then the steps resolve,
// prepare and run, under one deadline for all of start (L3).
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
