package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/proc"
)

// ID is the builtin name every ACP descriptor's runner uses.
const ID = "nvidia.fabric.acp"

// Error codes.
const (
	CodeInvalidSettings = "acp_invalid_settings"
	CodeInvalidConfig   = "acp_invalid_config"
	CodeAPIKeyMissing   = "acp_api_key_missing"
	CodeBinaryNotFound  = "acp_agent_not_found"
	CodeStartFailed     = "acp_start_failed"
	CodeExited          = "acp_agent_exited"
	CodeTurnFailed      = "acp_turn_failed"
	CodeRefusal         = "acp_refusal"
	CodeMaxTokens       = "acp_max_tokens"
	CodeMaxTurns        = "acp_max_turn_requests"
)

// Event kinds.
const (
	eventOutputDelta    = "output_delta"
	eventReasoningDelta = "reasoning_delta"
	eventToolCall       = "tool_call"
	eventToolResult     = "tool_result"
	eventPlan           = "plan"
	eventUsage          = "usage"
)

// Permission policies.
const (
	PolicyAllow = "allow"
	PolicyDeny  = "deny"
	PolicyAsk   = "ask"
)

const (
	cancelWait = 1500 * time.Millisecond
	exitWait   = 300 * time.Millisecond
	killGrace  = 300 * time.Millisecond
)

// Settings are the adapter's harness.settings.
type Settings struct {
	Command                  string   `json:"command,omitempty"`
	PermissionPolicy         string   `json:"permission_policy,omitempty"`
	PermissionTimeoutSeconds float64  `json:"permission_timeout_seconds,omitempty"`
	ExtraArgs                []string `json:"extra_args,omitempty"`
}

// New returns the ACP adapter; the profile comes from $FABRIC_ACP_PROFILE.
func New() adapterkit.Adapter { return adapter{} }

type adapter struct{}

// parseSettings decodes harness.settings: the adapter's own keys into
// Settings, the keys the profile declares (prof.Settings) into the
// returned map, anything else is an error.
func parseSettings(h *contract.AgentHarnessConfig, prof Profile) (Settings, map[string]any, error) {
	var s Settings
	own := map[string]any{}
	if h != nil && len(h.Settings) > 0 {
		rest := map[string]any{}
		for k, v := range h.Settings {
			if _, ok := prof.Settings[k]; ok {
				own[k] = v
			} else {
				rest[k] = v
			}
		}
		b, err := json.Marshal(rest)
		if err != nil {
			return s, nil, err
		}
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return s, nil, err
		}
	}
	switch s.PermissionPolicy {
	case "":
		s.PermissionPolicy = PolicyAllow
	case PolicyAllow, PolicyDeny, PolicyAsk:
	default:
		return s, nil, fmt.Errorf("permission_policy %q: want allow, deny or ask", s.PermissionPolicy)
	}
	if s.PermissionTimeoutSeconds < 0 {
		return s, nil, errors.New("permission_timeout_seconds must not be negative")
	}
	return s, own, nil
}

func (adapter) Start(ctx context.Context, in adapterkit.StartInput) (adapterkit.Session, error) {
	prof, err := loadProfile(os.Getenv)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidConfig, err)
	}
	set, own, err := parseSettings(in.Config.Harness, prof)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidSettings, err)
	}
	ownVars, err := prof.resolveSettings(own, os.LookupEnv)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidSettings, err)
	}
	workspace, err := workspaceDir(in)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidConfig, err)
	}
	s := &session{set: set, prof: prof, workspace: workspace}
	ok := false
	defer func() {
		if !ok {
			_ = s.Stop(context.WithoutCancel(ctx))
		}
	}()
	if s.dirs, err = adapterkit.MakeDirs(in.Home, "acp"); err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, err)
	}
	vars := map[string]string{"home": s.dirs.Home, "workspace": workspace}
	for k, v := range ownVars {
		vars[k] = v
	}
	role, m, err := adapterkit.Model(in.Config)
	if err != nil && !errors.Is(err, adapterkit.ErrNoModel) {
		return nil, adapterkit.Wrap(CodeInvalidConfig, err)
	}
	if role != "" {
		vars["model"] = m.Model
		if m.BaseURL != nil {
			vars["base_url"] = strings.TrimRight(*m.BaseURL, "/")
		}
		if m.APIKeyEnv != nil && *m.APIKeyEnv != "" {
			v, err := adapterkit.ModelKey(*m.APIKeyEnv, "models."+role+".api_key_env")
			if err != nil {
				return nil, adapterkit.Wrap(CodeAPIKeyMissing, err)
			}
			vars["api_key_env"], vars["api_key"] = *m.APIKeyEnv, v
		}
	}
	if set.Command != "" {
		prof.Command = set.Command
	}
	bin, err := lookPath(prof.Command, os.Getenv("PATH"))
	if err != nil {
		return nil, adapterkit.Wrap(CodeBinaryNotFound, err)
	}
	seed, work := s.seedHome(in.Log(), bin)
	args, extra, err := prepareHome(prof, set, vars)
	if err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, err)
	}
	if err := s.launch(ctx, bin, args, extra, prof.DropEnv); err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, err)
	}
	if err := s.handshake(ctx, in.Config.MCP); err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, s.explain(err))
	}
	if work != seedNothing {
		s.seedInBackground(in.Log(), seed, work, func(ctx context.Context, home string) error { return s.scratchStart(ctx, bin, vars, home) })
	}
	ok = true
	return s, nil
}

// prepareHome writes the profile's files under vars["home"], makes the
// private directories its environment names there, and returns the
// agent's arguments and the variables the profile adds.
func prepareHome(prof Profile, set Settings, vars map[string]string) ([]string, map[string]string, error) {
	home := vars["home"]
	for rel, content := range prof.Files {
		p := filepath.Join(home, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(p, []byte(expand(content, vars)), 0o600); err != nil {
			return nil, nil, err
		}
	}
	extra := prof.env(vars)
	for k, v := range prof.Env {
		// A private directory the agent expects to exist (unless it names
		// one of the profile's files, e.g. a configuration file).
		_, isFile := prof.Files[strings.TrimPrefix(v, "{home}/")]
		if _, ok := extra[k]; ok && strings.HasPrefix(v, "{home}/") && !isFile {
			if err := os.MkdirAll(extra[k], 0o700); err != nil {
				return nil, nil, err
			}
		}
	}
	return prof.argv(vars, set.PermissionPolicy, set.ExtraArgs), extra, nil
}

// seedWork is what a runtime does for the seed once it is ready.
type seedWork int

const (
	seedNothing seedWork = iota
	seedBuild            // build the seed, then a spare copy of it
	seedRefill           // make a spare copy of the seed for the next start
)

// seedHome fills the runtime's private home from the profile's seed
// (seed.go) when there is one: a spare copy moved into place when one
// waits (seeds and home on one filesystem), else the seed's files copied.
// It never builds and never waits: with no seed the agent starts
// unseeded. It returns the work for the background once the runtime is
// ready: a build when the binary has been started on this machine before
// (and no build failed lately), a spare for the next start after a seeded
// one. It never fails a start: a seed it cannot use is logged.
func (s *session) seedHome(log *slog.Logger, bin string) (homeSeed, seedWork) {
	seed, ok, err := newHomeSeed(bin, s.prof)
	if err != nil {
		log.Warn("acp: no home seed", "profile", s.prof.Name, "err", err)
	}
	if !ok {
		return seed, seedNothing
	}
	if !seed.exists() {
		again, err := seed.noteStart()
		if err != nil {
			log.Warn("acp: home seeds off", "dir", seed.cache, "err", err)
			return seed, seedNothing
		}
		if again && !seed.failedLately() {
			return seed, seedBuild
		}
		return seed, seedNothing
	}
	spares := sameDevice(seed.cache, s.dirs.Home)
	if spares && seed.takeSpare(s.dirs.Home) {
		return seed, seedRefill
	}
	if _, err := seed.copyInto(s.dirs.Home); err != nil {
		log.Warn("acp: home seed not used; starting unseeded", "seed", seed.name, "err", err)
	}
	if spares {
		return seed, seedRefill
	}
	return seed, seedNothing
}

// seedStopWait is how long Stop lets the background seed work finish
// before it cancels it (a build takes one start of the agent).
const seedStopWait = 2 * time.Second

// seedInBackground does work for seed (seedHome) while the runtime runs:
// a build by scratch (scratchStart: one start of the agent, at a lower CPU
// priority, bounded by seedBuildTimeout), then a spare copy when the
// seeds share the home's filesystem. Stop waits for it (seedStopWait at
// most, then cancels it); a scratch agent dies with the host (Pdeathsig).
func (s *session) seedInBackground(log *slog.Logger, seed homeSeed, work seedWork, scratch func(ctx context.Context, home string) error) {
	ctx, cancel := context.WithTimeout(context.Background(), seedBuildTimeout)
	done := make(chan struct{})
	s.seedCancel, s.seedDone = cancel, done
	go func() {
		defer close(done)
		defer cancel()
		if work == seedBuild {
			err := seed.buildOnce(ctx, scratch)
			switch {
			case errors.Is(err, errSeedBusy):
				return
			case err != nil:
				log.Warn("acp: home seed not built", "seed", seed.name, "err", err)
				return
			}
			log.Info("acp: home seed ready", "seed", seed.dir())
			if !sameDevice(seed.cache, s.dirs.Home) {
				return
			}
		}
		if err := seed.prepareSpare(ctx); err != nil {
			log.Warn("acp: no spare home seed", "seed", seed.name, "err", err)
		}
	}()
}

// stopSeedWork waits for the background seed work, cancelling it after
// seedStopWait or when ctx ends.
func (s *session) stopSeedWork(ctx context.Context) {
	if s.seedDone == nil {
		return
	}
	t := time.NewTimer(seedStopWait)
	defer t.Stop()
	select {
	case <-s.seedDone:
		return
	case <-t.C:
	case <-ctx.Done():
	}
	s.seedCancel()
	<-s.seedDone
}

// scratchStart starts the agent as this runtime would (command,
// arguments, environment) but with its private HOME at home (and its
// working directory there), waits for its answer to initialize, by which
// the agent has done its first-run work, and kills it.
func (s *session) scratchStart(ctx context.Context, bin string, vars map[string]string, home string) error {
	sv := maps.Clone(vars)
	sv["home"] = home
	args, extra, err := prepareHome(s.prof, s.set, sv)
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(home), "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	sc := &session{set: s.set, prof: s.prof, workspace: home, dirs: adapterkit.Dirs{Home: home, Tmp: tmp}}
	defer sc.Stop(context.WithoutCancel(ctx)) // nothing to remove: dirs.Root is empty
	if err := sc.launch(ctx, bin, args, extra, s.prof.DropEnv); err != nil {
		return err
	}
	_ = setNice(sc.proc.Pid(), scratchNice)
	_, err = sc.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	// Killed, not asked to stop: the seed is copied from what it left.
	_ = sc.proc.Kill()
	select {
	case <-sc.proc.Done():
	case <-ctx.Done():
	}
	if err != nil {
		return sc.explain(fmt.Errorf("initialize: %w", err))
	}
	return nil
}

// workspaceDir is the runtime's workspace with symlinks resolved, so that
// the fs methods' confinement compares real paths.
func workspaceDir(in adapterkit.StartInput) (string, error) {
	ws, err := adapterkit.Workspace(in)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(ws)
}

func lookPath(name, path string) (string, error) {
	if strings.ContainsRune(name, '/') {
		if st, err := os.Stat(name); err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("ACP agent %s is not an executable file", name)
		}
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("ACP agent %q not found on PATH", name)
}

// session is one runtime: one agent process, one ACP session.
type session struct {
	set       Settings
	prof      Profile
	workspace string

	dirs adapterkit.Dirs // removed at stop

	proc      *proc.Process
	conn      agentConn
	stdinW    *os.File
	stdoutR   *os.File
	sessionID sdk.SessionId

	mu      sync.Mutex
	current *turn

	// background work for the home seed (seedInBackground); nil when none
	seedCancel context.CancelFunc
	seedDone   <-chan struct{}

	busy     atomic.Bool
	stopOnce sync.Once
	stopErr  error
}

// agentEnv is the host's environment without the host protocol's
// variables, the profile variable and dropEnv, with HOME, TMPDIR and XDG
// dirs private to the runtime, plus extra (sorted by name).
func agentEnv(base []string, home, tmp string, extra map[string]string, dropEnv []string) []string {
	set := append(adapterkit.Dirs{Home: home, Tmp: tmp}.Env(), envRuntimeHome+"="+home)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		set = append(set, k+"="+extra[k])
	}
	return adapterkit.ChildEnv(base, append([]string{envProfile}, dropEnv...), set...)
}

// envRuntimeHome marks the agent and its descendants with the runtime's
// private HOME, so that Stop finds the ones that left the process group.
const envRuntimeHome = "FABRIC_ACP_RUNTIME_HOME"

func (s *session) launch(ctx context.Context, bin string, args []string, extra map[string]string, dropEnv []string) error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	// The host is the subreaper of the agent's tree (bundled.ServeHost):
	// what leaves the agent's group is adopted by the host and killed when
	// it exits; Stop kills what carries envRuntimeHome.
	p, err := proc.Start(ctx, proc.Spec{
		Path: bin, Args: args, Dir: s.workspace,
		Env:   agentEnv(os.Environ(), s.dirs.Home, s.dirs.Tmp, extra, dropEnv),
		Stdin: inR, Stdout: outW, Stderr: os.Stderr,
		Grace: killGrace,
	})
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return err
	}
	s.proc, s.stdinW, s.stdoutR = p, inW, outR
	s.conn = dial(&client{s: s}, inW, outR)
	return nil
}

func (s *session) handshake(ctx context.Context, mcp *contract.AgentMCPConfig) error {
	if _, err := s.conn.Initialize(ctx, sdk.InitializeRequest{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{
			Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
		},
		ClientInfo: &sdk.Implementation{Name: "fabric", Title: ptr("Fabric"), Version: "0.1.0"},
	}); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	servers, err := mcpServers(mcp)
	if err != nil {
		return err
	}
	res, err := s.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: s.workspace, McpServers: servers})
	if err != nil {
		return fmt.Errorf("session/new: %w", err)
	}
	s.sessionID = res.SessionId
	return nil
}

func ptr[T any](v T) *T { return &v }

// mcpServers maps FabricConfig's MCP servers to ACP's.
func mcpServers(mcp *contract.AgentMCPConfig) ([]sdk.McpServer, error) {
	out := []sdk.McpServer{}
	if mcp == nil {
		return out, nil
	}
	names := make([]string, 0, len(mcp.Servers))
	for n := range mcp.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		m := mcp.Servers[n]
		switch m.Transport {
		case "stdio":
			env := []sdk.EnvVariable{}
			for _, k := range sortedKeys(m.Env) {
				env = append(env, sdk.EnvVariable{Name: k, Value: m.Env[k]})
			}
			out = append(out, sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: n, Command: m.URL, Args: append([]string{}, m.Args...), Env: env}})
		case "sse", "streamable-http":
			hs := []sdk.HttpHeader{}
			for _, k := range sortedKeys(m.CustomHeaders) {
				hs = append(hs, sdk.HttpHeader{Name: k, Value: m.CustomHeaders[k]})
			}
			if m.Transport == "sse" {
				out = append(out, sdk.McpServer{Sse: &sdk.McpServerSseInline{Name: n, Url: m.URL, Headers: hs, Type: "sse"}})
			} else {
				out = append(out, sdk.McpServer{Http: &sdk.McpServerHttpInline{Name: n, Url: m.URL, Headers: hs, Type: "http"}})
			}
		default:
			return nil, fmt.Errorf("mcp server %s: transport %q is not supported", n, m.Transport)
		}
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (s *session) explain(err error) error {
	if s.proc == nil {
		return err
	}
	select {
	case <-s.proc.Done():
	case <-time.After(200 * time.Millisecond):
	}
	if st, ok := s.proc.ExitState(); ok {
		return fmt.Errorf("%w (%s exited: %s; its stderr is in the host's diagnostics)", err, s.prof.Command, st)
	}
	return err
}

// Invoke runs one session/prompt.
func (s *session) Invoke(ctx context.Context, inv adapterkit.Invocation) (contract.AgentRunResult, error) {
	if !s.busy.CompareAndSwap(false, true) {
		return contract.AgentRunResult{}, adapterkit.Errorf("runtime_busy", "a turn is already running")
	}
	defer s.busy.Store(false)
	t := &turn{events: inv.Events, ctx: ctx, policy: s.set.PermissionPolicy,
		timeout: time.Duration(s.set.PermissionTimeoutSeconds * float64(time.Second)), tools: map[string]string{}}
	s.mu.Lock()
	s.current = t
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.current = nil
		s.mu.Unlock()
	}()
	type answer struct {
		res sdk.PromptResponse
		err error
	}
	pctx, pcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer pcancel()
	done := make(chan answer, 1)
	go func() {
		r, err := s.conn.Prompt(pctx, sdk.PromptRequest{SessionId: s.sessionID, Prompt: []sdk.ContentBlock{sdk.TextBlock(adapterkit.InputText(inv.Request.Input))}})
		done <- answer{r, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		_ = s.conn.Cancel(context.WithoutCancel(ctx), sdk.CancelNotification{SessionId: s.sessionID})
		select {
		case a = <-done:
		case <-time.After(cancelWait):
			pcancel()
			<-done
		}
		return t.result(contract.StatusCancelled, nil, a.res.Usage), nil
	case <-s.proc.Done():
		return contract.AgentRunResult{}, adapterkit.Wrap(CodeExited, s.explain(errors.New("the agent exited during the turn")))
	}
	if a.err != nil {
		if s.exited() {
			return contract.AgentRunResult{}, adapterkit.Wrap(CodeExited, s.explain(a.err))
		}
		return t.result(contract.StatusFailed, &contract.AgentRunError{Code: CodeTurnFailed, Message: a.err.Error()}, nil), nil
	}
	switch a.res.StopReason {
	case sdk.StopReasonCancelled:
		return t.result(contract.StatusCancelled, nil, a.res.Usage), nil
	case sdk.StopReasonRefusal:
		return t.result(contract.StatusFailed, &contract.AgentRunError{Code: CodeRefusal, Message: "the agent refused the prompt"}, a.res.Usage), nil
	case sdk.StopReasonMaxTokens:
		return t.result(contract.StatusFailed, &contract.AgentRunError{Code: CodeMaxTokens, Message: "the model hit its token limit"}, a.res.Usage), nil
	case sdk.StopReasonMaxTurnRequests:
		return t.result(contract.StatusFailed, &contract.AgentRunError{Code: CodeMaxTurns, Message: "the turn hit its request limit"}, a.res.Usage), nil
	}
	return t.result(contract.StatusSucceeded, nil, a.res.Usage), nil
}

// exited reports whether the agent has exited. When the connection is
// already closed (the agent's stdout ended, e.g. "peer disconnected" on a
// pending prompt) the exit is moments away: it waits up to exitWait for
// it, so that a turn whose agent died is never classed as a turn failure
// (Droid exits with code 0 on SIGTERM, before or after its stdout closes).
func (s *session) exited() bool {
	select {
	case <-s.proc.Done():
		return true
	case <-s.conn.Done():
	default:
		return false
	}
	select {
	case <-s.proc.Done():
		return true
	case <-time.After(exitWait):
		return false
	}
}

// Health reports whether the agent process and the connection are up
// (live and active) and the ACP session exists (ready).
func (s *session) Health(ctx context.Context, level string) (adapterkit.Health, error) {
	alive := s.proc != nil && s.conn != nil
	if alive {
		select {
		case <-s.proc.Done():
			alive = false
		case <-s.conn.Done():
			alive = false
		default:
		}
	}
	return adapterkit.HarnessHealth{Source: "acp " + s.prof.Name, Busy: s.busy.Load(), Exited: !alive, Rungs: []adapterkit.HealthRung{
		{Level: contract.LevelLive, Failed: !alive, Reason: contract.ReasonHealthFailed, Message: "the ACP agent is not running"},
		{Level: contract.LevelReady, Failed: s.sessionID == "", Reason: contract.ReasonHealthFailed, Message: "no ACP session"},
	}}.Check(level), nil
}

// Stop closes the agent's stdin, waits briefly, then ends its whole process
// group (several agents ignore EOF or orphan workers), and removes the
// private directories.
func (s *session) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		st := adapterkit.HarnessStop{Proc: s.proc, ExitWait: exitWait, Sweep: envRuntimeHome + "=" + s.dirs.Home, SweepWait: time.Second}
		if s.stdinW != nil {
			st.CloseInput = func() { s.stdinW.Close() }
		}
		if s.stdoutR != nil {
			st.Output = s.stdoutR // closed at once: the connection's reader ends on it
		}
		if s.conn != nil {
			st.OutputDone, st.ClosedWait = s.conn.Done(), 500*time.Millisecond
		}
		s.stopErr = st.Run(ctx)
		s.stopSeedWork(ctx)
		if s.dirs.Root != "" {
			_ = os.RemoveAll(s.dirs.Root)
		}
	})
	return s.stopErr
}
