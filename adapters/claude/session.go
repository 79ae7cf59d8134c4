package claude

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/proc"
)

// Timing of the session.
const (
	// cancelWait bounds the wait for the result of an interrupted turn; it
	// stays below the core's cancel grace so that the turn ends as
	// cancelled rather than being cut off.
	cancelWait = 1500 * time.Millisecond
	// exitWait is how long Stop waits for claude to exit on end of stdin
	// before it stops the process group.
	exitWait = time.Second
	// termGrace is the SIGTERM-to-SIGKILL grace of the group.
	termGrace = 500 * time.Millisecond
	// writeTimeout bounds one write to claude's stdin.
	writeTimeout = 5 * time.Second
	// readerWait bounds the wait for stdout to reach EOF once the group is
	// gone (a process outside the group may still hold the pipe).
	readerWait = time.Second
	// maxLine bounds one stream-json line.
	maxLine = 64 << 20
)

// New returns the Claude Code adapter.
func New() adapterkit.Adapter { return adapter{} }

type adapter struct{}

// Start prepares the private directories, starts claude and waits for the
// answer to initialize.
func (adapter) Start(ctx context.Context, in adapterkit.StartInput) (adapterkit.Session, error) {
	log := in.Log()
	set, err := parseSettings(in.Config.Harness)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidSettings, err)
	}
	if in.Home == "" {
		return nil, adapterkit.Errorf(CodeStartFailed, "no runtime home (FABRIC_HOME) to hold the private config dir")
	}
	environ := os.Environ()
	var tel map[string]string
	if t := in.RuntimeContext.Telemetry; t != nil {
		tel = t.Env
	}
	dirs := newPrivateDirs(in.Home)
	l, err := buildLaunch(launchInput{Config: in.Config, Settings: set, Dirs: dirs, Environ: environ, IsRoot: os.Geteuid() == 0, TelemetryEnv: tel})
	if err != nil {
		return nil, err
	}
	bin, err := resolveBinary(os.LookupEnv, pathOf(environ))
	if err != nil {
		return nil, adapterkit.Wrap(CodeBinaryNotFound, err)
	}
	ws, err := adapterkit.Workspace(in)
	if err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, err)
	}
	if err := l.prepare(dirs); err != nil {
		_ = os.RemoveAll(dirs.Root)
		return nil, adapterkit.Errorf(CodeStartFailed, "private directories: %w", err)
	}
	s, err := start(ctx, bin, l, dirs, ws, log)
	if err != nil {
		_ = os.RemoveAll(dirs.Root)
		return nil, err
	}
	ictx, cancel := context.WithTimeout(ctx, set.initializeTimeout())
	defer cancel()
	if _, err := s.control(ictx, map[string]any{"subtype": "initialize"}); err != nil {
		return nil, adapterkit.HandshakeFailed(CodeInitializeFailed, "claude", "initialize", err, s.Stop, s.proc)
	}
	s.initialized.Store(true)
	log.Info("claude started", "pid", s.proc.Pid(), "binary", bin, "model", l.Model, "key_env", l.KeyEnv)
	return s, nil
}

// session is one running claude process.
type session struct {
	proc   *proc.Process
	stdin  *adapterkit.LineWriter
	stdout *os.File
	dirs   privateDirs
	scrub  scrubber
	logger *slog.Logger

	calls *adapterkit.Calls[controlReply] // our control requests by id

	mu        sync.Mutex
	turn      *turn  // the running turn, or nil
	activeCmd string // command uuid claude last started
	sessionID string

	initialized atomic.Bool
	broken      atomic.Bool // a turn found claude gone or unwritable
	readerDone  chan struct{}
	stopOnce    sync.Once
	stopErr     error
}

// turn is one invocation in flight.
type turn struct {
	uuid        string
	events      adapterkit.Emitter
	done        chan turnEnd // buffered 1: the first end wins
	interrupted atomic.Bool
	mu          sync.Mutex
	lastText    string
}

// turnEnd is how a turn ended: a result message, or the command's
// lifecycle end without one.
type turnEnd struct {
	result    *message
	lifecycle string
}

func (t *turn) end(e turnEnd) {
	select {
	case t.done <- e:
	default:
	}
}

func (t *turn) text() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastText
}

func start(ctx context.Context, bin string, l *launch, dirs privateDirs, dir string, logger *slog.Logger) (*session, error) {
	p, stdinW, stdoutR, err := adapterkit.StartPiped(ctx, proc.Spec{
		Path: bin, Args: l.Args, Dir: dir, Env: l.Env,
		Stderr: os.Stderr,
		Grace:  termGrace,
	})
	if err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, err)
	}
	s := &session{
		proc: p, stdin: adapterkit.NewLineWriter(stdinW, writeTimeout), stdout: stdoutR, dirs: dirs, scrub: scrubber{secret: l.key}, logger: logger,
		calls: adapterkit.NewCalls[controlReply]("claude"), readerDone: make(chan struct{}),
	}
	go s.read()
	return s, nil
}

// control sends a control request and waits for its response.
func (s *session) control(ctx context.Context, req map[string]any) (json.RawMessage, error) {
	r, err := s.calls.Call(ctx, s.readerDone, func(id string) error {
		if err := s.stdin.Send(map[string]any{"type": "control_request", "request_id": id, "request": req}); err != nil {
			return fmt.Errorf("write %s: %w", req["subtype"], err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if r.Subtype == "error" {
		return nil, fmt.Errorf("%s: %s", req["subtype"], r.Error)
	}
	return r.Response, nil
}

// read parses claude's output until it ends.
func (s *session) read() {
	defer close(s.readerDone)
	sc := bufio.NewScanner(s.stdout)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil || m.Type == "" {
			s.logger.Debug("claude: ignoring a non-JSON output line", "bytes", len(line))
			continue
		}
		s.dispatch(&m)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, os.ErrClosed) {
		s.logger.Warn("claude: reading output failed", "err", err)
	}
}

func (s *session) dispatch(m *message) {
	switch m.Type {
	case "control_response":
		if m.Response != nil {
			s.calls.Deliver(m.Response.RequestID, *m.Response)
		}
		return
	case "control_request":
		s.answer(m)
		return
	case "control_cancel_request", "keep_alive":
		return
	case "command_lifecycle":
		s.mu.Lock()
		if m.State == "started" {
			s.activeCmd = m.CommandUUID
		}
		t := s.turn
		s.mu.Unlock()
		if t != nil && m.CommandUUID == t.uuid {
			switch m.State {
			case "completed", "cancelled", "failed", "error", "discarded":
				t.end(turnEnd{lifecycle: m.State})
			}
		}
		return
	}
	s.mu.Lock()
	if m.Type == "system" && m.Subtype == "init" && m.SessionID != "" {
		s.sessionID = m.SessionID
	}
	t, active := s.turn, s.activeCmd
	s.mu.Unlock()
	if t == nil || (active != "" && active != t.uuid) {
		return // between turns, or output of an abandoned turn
	}
	if m.Type == "result" {
		t.end(turnEnd{result: m})
		return
	}
	evs, text := s.scrub.events(m)
	if text != "" {
		t.mu.Lock()
		t.lastText = text
		t.mu.Unlock()
	}
	for _, ev := range evs {
		t.events.Emit(ev)
	}
}

// answer replies to a control request from claude so that a turn never
// waits for an approver that does not exist: a tool permission prompt is
// denied (with a status event saying so), and any other request is
// answered with an error.
func (s *session) answer(m *message) {
	var req struct {
		Subtype  string          `json:"subtype"`
		ToolName string          `json:"tool_name"`
		Input    json.RawMessage `json:"input"`
	}
	_ = json.Unmarshal(m.Request, &req)
	reply := map[string]any{"request_id": m.RequestID}
	switch req.Subtype {
	case "can_use_tool":
		reply["subtype"] = "success"
		reply["response"] = map[string]any{
			"behavior": "deny",
			"message":  "Fabric runs this agent without an approver: the permission mode's prompts are denied. Configure tools.enabled or settings.permission_mode to allow the tool.",
		}
		s.mu.Lock()
		t := s.turn
		s.mu.Unlock()
		if t != nil {
			t.events.Emit(adapterkit.Event{Kind: eventStatus, Message: "permission denied: " + req.ToolName,
				Metadata: map[string]any{"subtype": "permission_denied", "tool_name": req.ToolName, "reason": "no approver"}})
		}
	default:
		reply["subtype"] = "error"
		reply["error"] = fmt.Sprintf("Fabric does not handle control request %q", req.Subtype)
	}
	if err := s.stdin.Send(map[string]any{"type": "control_response", "response": reply}); err != nil {
		s.logger.Warn("claude: answering a control request failed", "subtype", req.Subtype, "err", err)
	}
}

// newUUID returns a random version 4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (s *session) gone() error {
	select {
	case <-s.readerDone:
		s.broken.Store(true)
		return adapterkit.ExitedError(CodeExited, "claude", s.proc, 500*time.Millisecond)
	default:
		return nil
	}
}

// Invoke sends the input as one user message and waits for the turn's
// result; a cancelled ctx interrupts the turn.
func (s *session) Invoke(ctx context.Context, inv adapterkit.Invocation) (contract.AgentRunResult, error) {
	if err := s.gone(); err != nil {
		return contract.AgentRunResult{}, err
	}
	t := &turn{uuid: newUUID(), events: inv.Events, done: make(chan turnEnd, 1)}
	s.mu.Lock()
	s.turn = t
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.turn == t {
			s.turn = nil
		}
		s.mu.Unlock()
	}()
	msg := map[string]any{
		"type":               "user",
		"message":            map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": adapterkit.InputText(inv.Request.Input)}}},
		"parent_tool_use_id": nil,
		"session_id":         "",
		"uuid":               t.uuid,
	}
	if err := s.stdin.Send(msg); err != nil {
		if gerr := s.gone(); gerr != nil {
			return contract.AgentRunResult{}, gerr
		}
		s.broken.Store(true)
		return contract.AgentRunResult{}, adapterkit.Errorf(CodeIO, "send the user message: %w", err)
	}
	select {
	case e := <-t.done:
		return s.result(t, e), nil
	case <-s.readerDone:
		select {
		case e := <-t.done: // the result came just before the end
			return s.result(t, e), nil
		default:
		}
		return contract.AgentRunResult{}, s.gone()
	case <-ctx.Done():
	}

	// Cancelled: interrupt the turn and wait a bounded time for its end.
	t.interrupted.Store(true)
	if err := s.stdin.Send(map[string]any{"type": "control_request", "request_id": s.calls.NewID(),
		"request": map[string]any{"subtype": "interrupt"}}); err != nil {
		s.logger.Warn("claude: sending interrupt failed", "err", err)
	}
	timer := time.NewTimer(cancelWait)
	defer timer.Stop()
	select {
	case e := <-t.done:
		return s.result(t, e), nil
	case <-s.readerDone:
	case <-timer.C:
		s.logger.Warn("claude: the interrupted turn did not end in time; its late output will be dropped")
	}
	return contract.AgentRunResult{Status: contract.StatusCancelled, Output: s.scrub.text(t.text())}, nil
}

// result maps a turn's end.
func (s *session) result(t *turn, e turnEnd) contract.AgentRunResult {
	interrupted := t.interrupted.Load()
	if e.result != nil {
		return s.scrub.turnResult(e.result, interrupted, t.text())
	}
	if interrupted {
		return contract.AgentRunResult{Status: contract.StatusCancelled, Output: s.scrub.text(t.text())}
	}
	return contract.AgentRunResult{Status: contract.StatusFailed, Output: s.scrub.text(t.text()),
		Error: &contract.AgentRunError{Code: CodeClaudeError, Message: "the turn ended (" + e.lifecycle + ") without a result"}}
}

// Health: live while claude runs, active once it answered initialize,
// ready while active and no turn found it broken.
func (s *session) Health(ctx context.Context, level string) (adapterkit.Health, error) {
	s.mu.Lock()
	busy, sid := s.turn != nil, s.sessionID
	s.mu.Unlock()
	md := map[string]any{"pid": s.proc.Pid()}
	if sid != "" {
		md["session_id"] = sid
	}
	_, exited := s.proc.ExitState()
	select {
	case <-s.readerDone:
		exited = true
	default:
	}
	return adapterkit.HarnessHealth{Source: "claude", Busy: busy, Exited: exited, Metadata: md, Rungs: []adapterkit.HealthRung{
		{Level: contract.LevelLive, Failed: exited, Reason: contract.ReasonAgentExited, Message: "claude exited"},
		{Level: contract.LevelActive, Failed: !s.initialized.Load(), Reason: contract.ReasonSessionClosed, Message: "claude has not answered initialize"},
		{Level: contract.LevelReady, Failed: s.broken.Load(), Reason: contract.ReasonHealthFailed, Message: "claude stopped taking input"},
	}}.Check(level), nil
}

// Stop closes claude's stdin, gives it a moment to exit, stops its whole
// process group and removes the private directories.
func (s *session) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		s.stopErr = adapterkit.HarnessStop{
			CloseInput: func() { _ = s.stdin.Close() },
			Proc:       s.proc, ExitWait: exitWait,
			Output: s.stdout, OutputDone: s.readerDone, OutputWait: readerWait,
			Remove: s.dirs.Root,
		}.Run(ctx)
	})
	return s.stopErr
}
