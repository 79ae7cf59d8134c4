package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/proc"
)

// Timing of the adapter's waits.
const (
	// interruptWait bounds the wait for turn/completed after turn/interrupt.
	// It stays under the core's cancel grace (2 s), after which the host
	// would be killed.
	interruptWait = 1500 * time.Millisecond
	// callTimeout bounds requests that codex answers at once (turn/start,
	// turn/interrupt).
	callTimeout = 30 * time.Second
	// writeTimeout bounds one write to codex's stdin (as claude's and pi's).
	writeTimeout = 5 * time.Second
	// exitWait is how long Stop waits for codex to exit on stdin EOF before
	// it stops the process group.
	exitWait = time.Second
	// killGrace is the SIGTERM-to-SIGKILL grace of the process group.
	killGrace = 500 * time.Millisecond
	// sweepWait bounds the killing of processes that left the group.
	sweepWait = time.Second
)

// clientVersion is what the adapter reports as its client version.
const clientVersion = "0.1.0"

// New returns the Codex adapter.
func New() adapterkit.Adapter { return adapter{} }

type adapter struct{}

func (adapter) Start(ctx context.Context, in adapterkit.StartInput) (adapterkit.Session, error) {
	log := in.Log().With("adapter", ID)
	set, err := parseSettings(in.Config.Harness)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidSettings, err)
	}
	model, err := selectModel(in.Config.Models)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidConfig, err)
	}
	if _, err := adapterkit.ModelKey(model.APIKeyEnv, "models."+model.Role+".api_key_env"); err != nil {
		return nil, adapterkit.Wrap(CodeAPIKeyMissing, err)
	}
	args, err := serverArgs(model, set)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidSettings, err)
	}
	mcp, err := mcpConfig(in.Config.MCP)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidConfig, err)
	}
	bin, err := resolveBinary(os.Getenv, os.Getenv("PATH"))
	if err != nil {
		return nil, adapterkit.Wrap(CodeBinaryNotFound, err)
	}
	workspace, err := adapterkit.Workspace(in)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidWorkspace, err)
	}

	s := &session{set: set, log: log}
	ok := false
	defer func() {
		if !ok {
			s.teardown(context.WithoutCancel(ctx))
		}
	}()
	if s.dirs, err = adapterkit.MakeDirs(in.Home, "codex", codexHomeRel); err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, err)
	}
	s.codexHome = filepath.Join(s.dirs.Root, codexHomeRel)
	if mcp != nil {
		if err := os.WriteFile(filepath.Join(s.codexHome, "config.toml"), mcp, 0o600); err != nil {
			return nil, adapterkit.Wrap(CodeStartFailed, err)
		}
	}
	if in.Config.Skills != nil {
		if _, err := linkSkills(filepath.Join(s.codexHome, "skills"), in.Config.Skills.Paths); err != nil {
			return nil, adapterkit.Wrap(CodeInvalidConfig, err)
		}
	}
	if err := s.launch(ctx, bin, args, workspace); err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, err)
	}
	if err := s.handshake(ctx, threadParams(workspace, set, in.Config.Instructions)); err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, s.explain(err))
	}
	ok = true
	return s, nil
}

// session is one runtime: one codex app-server process and one thread.
type session struct {
	set Settings
	log *slog.Logger

	// Private directories: HOME (with CODEX_HOME inside) and TMPDIR; all
	// of it is removed at stop.
	dirs      adapterkit.Dirs
	codexHome string

	proc   *proc.Process
	conn   *rpcConn
	stdout *os.File // read end of codex's stdout, closed by teardown

	initialized atomic.Bool
	// threadID is written once by the handshake, before Start returns;
	// the reading goroutine reads it under mu.
	threadID string

	mu      sync.Mutex
	current *turn       // the turn notifications go to, nil between turns
	total   tokenCounts // the thread's cumulative usage

	busy     atomic.Bool
	stopOnce sync.Once
	stopErr  error
}

// codexHomeRel is CODEX_HOME, relative to the private root.
const codexHomeRel = "home/.codex"

// serverEnv returns codex's environment: the host's, without the host protocol's
// own variables, with HOME, CODEX_HOME, TMPDIR and the XDG directories
// pointed into the runtime's private directories.
func serverEnv(base []string, home, codexHome, tmp string) []string {
	set := append(adapterkit.Dirs{Home: home, Tmp: tmp}.Env(), "CODEX_HOME="+codexHome)
	return adapterkit.ChildEnv(base, []string{envBinary}, set...)
}

// launch starts codex app-server in its own process group, wired to a
// JSON-RPC client.
func (s *session) launch(ctx context.Context, bin string, args []string, workspace string) error {
	p, inW, outR, err := adapterkit.StartPiped(ctx, proc.Spec{
		Path: bin, Args: args, Dir: workspace,
		Env:    serverEnv(os.Environ(), s.dirs.Home, s.codexHome, s.dirs.Tmp),
		Stderr: os.Stderr,
		Grace:  killGrace,
	})
	if err != nil {
		return err
	}
	s.proc, s.stdout = p, outR
	s.conn = newConn(adapterkit.NewLineWriter(inW, writeTimeout), outR, s, s.log)
	go s.conn.run() // joined by teardown
	return nil
}

// handshake runs initialize, initialized and thread/start.
func (s *session) handshake(ctx context.Context, threadParams map[string]any) error {
	init := map[string]any{
		"clientInfo": map[string]any{"name": "fabric", "title": "Fabric", "version": clientVersion},
	}
	if err := s.conn.Call(ctx, "initialize", init, nil); err != nil {
		return err
	}
	if err := s.conn.Notify("initialized", nil); err != nil {
		return err
	}
	s.initialized.Store(true)
	var res struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := s.conn.Call(ctx, "thread/start", threadParams, &res); err != nil {
		return err
	}
	if res.Thread.ID == "" {
		return errors.New("codex: thread/start returned no thread id")
	}
	s.mu.Lock()
	s.threadID = res.Thread.ID
	s.mu.Unlock()
	return nil
}

// explain adds how codex exited to an error caused by its exit.
func (s *session) explain(err error) error {
	if st, ok := adapterkit.ExitNote(s.proc, 200*time.Millisecond); ok {
		return fmt.Errorf("%w (codex app-server exited: %s; its stderr is in the host's diagnostics)", err, st)
	}
	return err
}

// alive reports whether codex runs and its output is open.
func (s *session) alive() bool {
	if s.proc == nil || s.conn == nil {
		return false
	}
	select {
	case <-s.proc.Done():
		return false
	case <-s.conn.Done():
		return false
	default:
		return true
	}
}

// notify routes a notification of our thread to the running turn; the
// others are dropped (warnings between turns, other threads' traffic).
func (s *session) notify(method string, raw json.RawMessage) {
	var p notification
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p); err != nil {
			s.log.Debug("codex: undecodable notification", "method", method, "err", err)
			return
		}
	}
	s.mu.Lock()
	if p.ThreadID != "" && p.ThreadID != s.threadID {
		s.mu.Unlock()
		return
	}
	if method == "thread/tokenUsage/updated" && p.TokenUsage != nil {
		s.total = p.TokenUsage.Total
	}
	t := s.current
	s.mu.Unlock()
	if t == nil {
		return
	}
	turnID := p.TurnID
	if turnID == "" && p.Turn != nil {
		turnID = p.Turn.ID
	}
	if !t.accepts(turnID) {
		return
	}
	t.handle(method, p)
}

// request answers codex's server-to-client requests so that a turn never
// waits on a human: approvals are declined (approval_mode deny_all and
// auto_review both route real approvals through codex itself), questions
// get no answers, elicitations are declined, and what Fabric does not
// provide (dynamic tools, ChatGPT tokens, attestation) is an error.
func (s *session) request(method string, params json.RawMessage) (any, *rpcError) {
	s.log.Info("codex: declining a request", "method", method)
	switch method {
	case "item/commandExecution/requestApproval", "item/fileChange/requestApproval":
		return map[string]any{"decision": "decline"}, nil
	case "execCommandApproval", "applyPatchApproval":
		return map[string]any{"decision": "denied"}, nil
	case "item/permissions/requestApproval":
		return map[string]any{"permissions": map[string]any{}, "scope": "turn"}, nil
	case "item/tool/requestUserInput":
		return map[string]any{"answers": map[string]any{}}, nil
	case "mcpServer/elicitation/request":
		return map[string]any{"action": "decline"}, nil
	case "item/tool/call":
		return map[string]any{"success": false, "contentItems": []any{
			map[string]any{"type": "inputText", "text": "Fabric provides no dynamic tools"},
		}}, nil
	}
	return nil, &rpcError{Code: rpcMethodNotFound, Message: "not supported by the Fabric Codex adapter: " + method}
}

func (s *session) Invoke(ctx context.Context, inv adapterkit.Invocation) (contract.AgentRunResult, error) {
	s.busy.Store(true)
	defer s.busy.Store(false)
	if !s.alive() {
		return contract.AgentRunResult{}, adapterkit.Wrap(CodeExited, s.explain(errors.New("codex app-server is not running")))
	}
	if err := s.settlePrevious(); err != nil {
		return contract.AgentRunResult{Status: contract.StatusFailed, Output: "", Error: &contract.AgentRunError{
			Code: CodeTurnStillRunning, Message: err.Error(), Retryable: true,
		}}, nil
	}
	if ctx.Err() != nil {
		return contract.AgentRunResult{Status: contract.StatusCancelled, Output: ""}, nil
	}
	s.mu.Lock()
	t := newTurn(inv.Events, s.total)
	s.current = t
	s.mu.Unlock()

	var res struct {
		Turn struct {
			ID string `json:"id"`
		} `json:"turn"`
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	err := s.conn.Call(cctx, "turn/start", turnParams(s.threadID, adapterkit.InputText(inv.Request.Input), s.set), &res)
	cancel()
	if err != nil {
		s.clearTurn(t)
		if !s.alive() {
			return contract.AgentRunResult{}, adapterkit.Wrap(CodeExited, s.explain(err))
		}
		var re *rpcError
		if errors.As(err, &re) {
			return contract.AgentRunResult{Status: contract.StatusFailed, Output: "", Error: &contract.AgentRunError{
				Code: CodeTurnFailed, Message: err.Error(), Extensions: map[string]any{"jsonrpc_code": re.Code},
			}}, nil
		}
		return contract.AgentRunResult{}, adapterkit.Wrap(CodeProtocol, err)
	}
	t.setID(res.Turn.ID)

	select {
	case <-t.done:
		s.clearTurn(t)
		return t.result(s.set.OutputSchema != nil), nil
	case <-s.conn.Done():
		s.clearTurn(t)
		return contract.AgentRunResult{}, adapterkit.Wrap(CodeExited, s.explain(errors.New("codex app-server exited during the turn")))
	case <-ctx.Done():
	}
	return s.interrupt(t), nil
}

// interrupt sends turn/interrupt and waits briefly for turn/completed. A
// turn that does not end in time stays current; the next Invoke settles it.
func (s *session) interrupt(t *turn) contract.AgentRunResult {
	deadline := time.NewTimer(interruptWait)
	defer deadline.Stop()
	ictx, cancel := context.WithTimeout(context.Background(), interruptWait)
	defer cancel()
	if err := s.conn.Call(ictx, "turn/interrupt", map[string]any{"threadId": s.threadID, "turnId": t.ID()}, nil); err != nil {
		s.log.Warn("codex: turn/interrupt failed", "err", err)
	}
	select {
	case <-t.done:
		s.clearTurn(t)
		res := t.result(s.set.OutputSchema != nil)
		if res.Status != contract.StatusSucceeded {
			res.Status, res.Error = contract.StatusCancelled, nil
		}
		return res
	case <-deadline.C:
		return t.partial()
	case <-s.conn.Done():
		return t.partial()
	}
}

// settlePrevious waits for a turn a cancel left running (interrupting it
// again), so that two turns never overlap on the thread.
func (s *session) settlePrevious() error {
	s.mu.Lock()
	t := s.current
	s.mu.Unlock()
	if t == nil {
		return nil
	}
	if !t.isDone() {
		ictx, cancel := context.WithTimeout(context.Background(), interruptWait)
		_ = s.conn.Call(ictx, "turn/interrupt", map[string]any{"threadId": s.threadID, "turnId": t.ID()}, nil)
		cancel()
		select {
		case <-t.done:
		case <-time.After(interruptWait):
			return errors.New("the previous Codex turn is still running after turn/interrupt")
		}
	}
	s.clearTurn(t)
	return nil
}

func (s *session) clearTurn(t *turn) {
	s.mu.Lock()
	if s.current == t {
		s.current = nil
	}
	s.mu.Unlock()
}

// Health: live while app-server runs and its output is open, active once
// it completed initialize, ready once the thread started.
func (s *session) Health(ctx context.Context, level string) (adapterkit.Health, error) {
	alive := s.alive()
	var md map[string]any
	if s.proc != nil {
		md = map[string]any{"codex_pid": s.proc.Pid(), "thread_id": s.threadID}
	}
	return adapterkit.HarnessHealth{Source: "codex app-server", Busy: s.busy.Load(), Exited: !alive, Metadata: md, Rungs: []adapterkit.HealthRung{
		{Level: contract.LevelLive, Failed: !alive, Reason: contract.ReasonHealthFailed, Message: "codex app-server is not running"},
		{Level: contract.LevelActive, Failed: !s.initialized.Load(), Reason: contract.ReasonHealthFailed, Message: "codex app-server has not completed initialize"},
		{Level: contract.LevelReady, Failed: s.threadID == "", Reason: contract.ReasonHealthFailed, Message: "no Codex thread has been started"},
	}}.Check(level), nil
}

// Stop closes codex's stdin (app-server exits on EOF), waits briefly, stops
// the process group (SIGTERM, then SIGKILL), kills what escaped the group
// but still carries the runtime's private CODEX_HOME in its environment
// (codex runs commands in process groups of their own, and a command may
// detach with setsid), and removes the private directories.
func (s *session) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.teardown(ctx) })
	return s.stopErr
}

// teardown is Stop, and the undoing of a Start that failed part way.
func (s *session) teardown(ctx context.Context) error {
	st := adapterkit.HarnessStop{Proc: s.proc, ExitWait: exitWait, Sweep: "CODEX_HOME=" + s.codexHome, SweepWait: sweepWait,
		Log: s.log, Remove: s.dirs.Root}
	if s.conn != nil {
		// Once the group is gone codex's stdout is at EOF, unless a process
		// that left the group still holds it: then closing our end ends
		// the reader.
		st.CloseInput = func() { _ = s.conn.CloseWrite() }
		st.Output, st.OutputDone, st.OutputWait = s.stdout, s.conn.Done(), exitWait
	}
	return st.Run(ctx)
}

// PrivateDirs returns the session's private HOME, CODEX_HOME and TMPDIR
// (for tests and diagnostics).
func (s *session) PrivateDirs() (home, codexHome, tmp string) {
	return s.dirs.Home, s.codexHome, s.dirs.Tmp
}
