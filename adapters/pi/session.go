package pi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/proc"
)

// Timing of the session.
const (
	// cancelWait bounds the wait for agent_end after abort; it stays below
	// the core's cancel grace so that the turn ends as cancelled.
	cancelWait = 1500 * time.Millisecond
	// exitWait is how long Stop waits for pi to exit on end of stdin.
	exitWait   = time.Second
	termGrace  = 500 * time.Millisecond
	readerWait = time.Second
	// writeTimeout bounds one write to pi's stdin.
	writeTimeout = 5 * time.Second
	// maxLine bounds one RPC line.
	maxLine = 64 << 20
	// maxEventText cuts the text carried by one event.
	maxEventText = 8 << 10
)

// Event kinds the adapter emits.
const (
	eventOutputDelta    = "output_delta"
	eventReasoningDelta = "reasoning_delta"
	eventToolCall       = "tool_call"
	eventToolResult     = "tool_result"
	eventStatus         = "status"
)

// New returns the Pi adapter.
func New() adapterkit.Adapter { return adapter{} }

type adapter struct{}

// Start writes models.json into a private agent dir, starts `pi --mode
// rpc` in the workspace and waits until it answers get_state.
func (adapter) Start(ctx context.Context, in adapterkit.StartInput) (adapterkit.Session, error) {
	log := in.Log()
	set, err := parseSettings(in.Config.Harness)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidSettings, err)
	}
	if in.Home == "" {
		return nil, adapterkit.Errorf(CodeStartFailed, "no runtime home (FABRIC_HOME) to hold the private agent dir")
	}
	environ := os.Environ()
	bin, err := resolveBinary(os.Getenv, os.Getenv("PATH"))
	if err != nil {
		return nil, adapterkit.Wrap(CodeBinaryNotFound, err)
	}
	dirs := newPrivateDirs(in.Home)
	l, err := buildLaunch(in.Config, set, dirs, environ)
	if err != nil {
		return nil, err
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
	if _, err := s.command(ctx, map[string]any{"type": "get_state"}); err != nil {
		return nil, adapterkit.HandshakeFailed(CodeStartFailed, "pi", "get_state", err, s.Stop, s.proc)
	}
	s.ready.Store(true)
	log.Info("pi started", "pid", s.proc.Pid(), "binary", bin, "model", l.Model, "key_env", l.KeyEnv)
	return s, nil
}

// rpcLine is any line pi writes: a response or an agent event.
type rpcLine struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Error   string          `json:"error"`
	Data    json.RawMessage `json:"data"`

	Message               *piMessage `json:"message"`
	AssistantMessageEvent *struct {
		Type  string `json:"type"`
		Delta string `json:"delta"`
	} `json:"assistantMessageEvent"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args"`
	Result     *struct {
		Content []piContent `json:"content"`
	} `json:"result"`
	IsError bool `json:"isError"`
}

type piMessage struct {
	Role         string      `json:"role"`
	Content      []piContent `json:"content"`
	StopReason   string      `json:"stopReason"`
	ErrorMessage string      `json:"errorMessage"`
	Usage        *struct {
		Input       uint64 `json:"input"`
		Output      uint64 `json:"output"`
		TotalTokens uint64 `json:"totalTokens"`
		Cost        struct {
			Total float64 `json:"total"`
		} `json:"cost"`
	} `json:"usage"`
}

type piContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func (m *piMessage) text() string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

type session struct {
	proc   *proc.Process
	stdin  *adapterkit.LineWriter
	stdout *os.File
	dirs   privateDirs
	key    string
	logger *slog.Logger

	calls *adapterkit.Calls[rpcLine] // our commands by id

	mu   sync.Mutex
	turn *turn

	ready      atomic.Bool
	broken     atomic.Bool
	readerDone chan struct{}
	stopOnce   sync.Once
	stopErr    error
}

// turn is one prompt in flight, ended by agent_end.
type turn struct {
	events  adapterkit.Emitter
	done    chan struct{}
	endOnce sync.Once

	mu         sync.Mutex
	text       string // the last assistant message's text
	stopReason string
	errMsg     string
	in, out    uint64
	total      uint64
	cost       float64
	usage      bool
}

func (t *turn) end() { t.endOnce.Do(func() { close(t.done) }) }

func start(ctx context.Context, bin string, l *launch, dirs privateDirs, dir string, logger *slog.Logger) (*session, error) {
	p, stdinW, stdoutR, err := adapterkit.StartPiped(ctx, proc.Spec{
		Path: bin, Args: l.Args, Dir: dir, Env: l.Env,
		Stderr: os.Stderr, Grace: termGrace,
	})
	if err != nil {
		return nil, adapterkit.Wrap(CodeStartFailed, err)
	}
	s := &session{proc: p, stdin: adapterkit.NewLineWriter(stdinW, writeTimeout), stdout: stdoutR, dirs: dirs, key: l.key, logger: logger,
		calls: adapterkit.NewCalls[rpcLine]("pi"), readerDone: make(chan struct{})}
	go s.read()
	return s, nil
}

// command sends one command with a fresh id and waits for its response.
func (s *session) command(ctx context.Context, cmd map[string]any) (rpcLine, error) {
	r, err := s.calls.Call(ctx, s.readerDone, func(id string) error {
		cmd["id"] = id
		if err := s.stdin.Send(cmd); err != nil {
			return fmt.Errorf("write %s: %w", cmd["type"], err)
		}
		return nil
	})
	if err != nil {
		return rpcLine{}, err
	}
	if !r.Success {
		return r, fmt.Errorf("%s: %s", cmd["type"], s.scrub(r.Error))
	}
	return r, nil
}

func (s *session) read() {
	defer close(s.readerDone)
	r := bufio.NewReaderSize(s.stdout, 64<<10)
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(buf) > maxLine {
				s.logger.Warn("pi: an output line is too long; dropping it")
				buf = buf[:0]
				s.skipLine(r)
			}
			continue
		}
		line := bytes.TrimRight(buf, "\r\n")
		if len(line) > 0 {
			var m rpcLine
			if jerr := json.Unmarshal(line, &m); jerr == nil && m.Type != "" {
				s.dispatch(&m)
			} else {
				s.logger.Debug("pi: ignoring a non-JSON output line", "bytes", len(line))
			}
		}
		buf = buf[:0]
		if err != nil {
			return
		}
	}
}

func (s *session) skipLine(r *bufio.Reader) {
	for {
		_, err := r.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

func (s *session) dispatch(m *rpcLine) {
	if m.Type == "response" {
		s.calls.Deliver(m.ID, *m)
		return
	}
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t == nil {
		return
	}
	switch m.Type {
	case "message_update":
		if ev := m.AssistantMessageEvent; ev != nil && ev.Delta != "" {
			switch ev.Type {
			case "text_delta":
				t.events.Emit(adapterkit.Event{Kind: eventOutputDelta, Message: s.scrub(ev.Delta)})
			case "thinking_delta":
				t.events.Emit(adapterkit.Event{Kind: eventReasoningDelta, Message: s.scrub(ev.Delta)})
			}
		}
	case "tool_execution_start":
		t.events.Emit(adapterkit.Event{Kind: eventToolCall, Message: m.ToolName, Metadata: map[string]any{
			"tool_name": m.ToolName, "call_id": m.ToolCallID, "arguments": s.scrub(cut(string(m.Args)))}})
	case "tool_execution_end":
		var out strings.Builder
		if m.Result != nil {
			for _, c := range m.Result.Content {
				if c.Type == "text" {
					out.WriteString(c.Text)
				}
			}
		}
		t.events.Emit(adapterkit.Event{Kind: eventToolResult, Message: m.ToolName, Metadata: map[string]any{
			"tool_name": m.ToolName, "call_id": m.ToolCallID, "is_error": m.IsError, "output": s.scrub(cut(out.String()))}})
	case "message_end":
		msg := m.Message
		if msg == nil || msg.Role != "assistant" {
			return
		}
		t.mu.Lock()
		t.text, t.stopReason, t.errMsg = msg.text(), msg.StopReason, msg.ErrorMessage
		if u := msg.Usage; u != nil {
			t.usage = true
			t.in += u.Input
			t.out += u.Output
			t.total += u.TotalTokens
			t.cost += u.Cost.Total
		}
		t.mu.Unlock()
	case "agent_end":
		t.end()
	}
}

func cut(s string) string {
	if len(s) > maxEventText {
		return s[:maxEventText]
	}
	return s
}

// scrub replaces the model key wherever pi echoed it.
func (s *session) scrub(v string) string {
	if s.key == "" || len(s.key) < 4 {
		return v
	}
	return strings.ReplaceAll(v, s.key, contract.Redacted)
}

func (s *session) gone() error {
	select {
	case <-s.readerDone:
		s.broken.Store(true)
		return adapterkit.ExitedError(CodeExited, "pi", s.proc, 500*time.Millisecond)
	default:
		return nil
	}
}

// Invoke sends the input as one prompt and waits for agent_end; a
// cancelled ctx aborts the turn.
func (s *session) Invoke(ctx context.Context, inv adapterkit.Invocation) (contract.AgentRunResult, error) {
	if err := s.gone(); err != nil {
		return contract.AgentRunResult{}, err
	}
	t := &turn{events: inv.Events, done: make(chan struct{})}
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
	if _, err := s.command(ctx, map[string]any{"type": "prompt", "message": adapterkit.InputText(inv.Request.Input)}); err != nil {
		if gerr := s.gone(); gerr != nil {
			return contract.AgentRunResult{}, gerr
		}
		if ctx.Err() != nil {
			s.abort(t)
			return contract.AgentRunResult{Status: contract.StatusCancelled, Output: ""}, nil
		}
		return contract.AgentRunResult{Status: contract.StatusFailed, Output: "",
			Error: &contract.AgentRunError{Code: CodePromptRejected, Message: err.Error()}}, nil
	}
	select {
	case <-t.done:
		return s.result(t, false), nil
	case <-s.readerDone:
		select {
		case <-t.done:
			return s.result(t, false), nil
		default:
		}
		return contract.AgentRunResult{}, s.gone()
	case <-ctx.Done():
	}
	s.abort(t)
	return s.result(t, true), nil
}

// abort sends abort and waits a bounded time for the turn's agent_end.
func (s *session) abort(t *turn) {
	if err := s.stdin.Send(map[string]any{"type": "abort", "id": s.calls.NewID()}); err != nil {
		s.logger.Warn("pi: sending abort failed", "err", err)
	}
	timer := time.NewTimer(cancelWait)
	defer timer.Stop()
	select {
	case <-t.done:
	case <-s.readerDone:
	case <-timer.C:
		s.logger.Warn("pi: the aborted turn did not end in time")
	}
}

func (s *session) result(t *turn, cancelled bool) contract.AgentRunResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	res := contract.AgentRunResult{Status: contract.StatusSucceeded, Output: s.scrub(t.text)}
	if t.usage {
		in, out, total, cost := t.in, t.out, t.total, t.cost
		res.Usage = &contract.RunUsage{InputTokens: &in, OutputTokens: &out, TotalTokens: &total}
		if cost > 0 {
			res.Usage.CostUSD = &cost
		}
	}
	switch {
	case cancelled || t.stopReason == "aborted":
		res.Status = contract.StatusCancelled
	case t.stopReason == "error":
		msg := s.scrub(t.errMsg)
		if strings.TrimSpace(msg) == "" {
			msg = "the model call failed"
		}
		res.Status = contract.StatusFailed
		res.Error = &contract.AgentRunError{Code: CodeModelError, Message: msg}
	}
	return res
}

// Health: live while pi runs, active and ready once it answered get_state
// and no turn found it broken.
func (s *session) Health(ctx context.Context, level string) (adapterkit.Health, error) {
	s.mu.Lock()
	busy := s.turn != nil
	s.mu.Unlock()
	_, exited := s.proc.ExitState()
	select {
	case <-s.readerDone:
		exited = true
	default:
	}
	return adapterkit.HarnessHealth{Source: "pi", Busy: busy, Exited: exited, Metadata: map[string]any{"pid": s.proc.Pid()}, Rungs: []adapterkit.HealthRung{
		{Level: contract.LevelLive, Failed: exited, Reason: contract.ReasonAgentExited, Message: "pi exited"},
		{Level: contract.LevelActive, Failed: !s.ready.Load(), Reason: contract.ReasonSessionClosed, Message: "pi has not answered get_state"},
		{Level: contract.LevelReady, Failed: s.broken.Load(), Reason: contract.ReasonHealthFailed, Message: "pi stopped taking input"},
	}}.Check(level), nil
}

// Stop closes pi's stdin, gives it a moment to exit, stops its process
// group, kills anything that escaped the group with the runtime's private
// environment, and removes the private directories.
func (s *session) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		s.stopErr = adapterkit.HarnessStop{
			CloseInput: func() { _ = s.stdin.Close() },
			Proc:       s.proc, ExitWait: exitWait,
			Sweep: "PI_CODING_AGENT_DIR=" + s.dirs.Agent, SweepWait: time.Second, Log: s.logger,
			Output: s.stdout, OutputDone: s.readerDone, OutputWait: readerWait,
			Remove: s.dirs.Root,
		}.Run(ctx)
	})
	return s.stopErr
}
