package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
)

// turn is the state of one session/prompt.
type turn struct {
	events  adapterkit.Emitter
	ctx     context.Context
	policy  string
	timeout time.Duration

	mu    sync.Mutex
	text  strings.Builder
	tools map[string]string // tool call id -> title
}

func (t *turn) result(status string, e *contract.AgentRunError, u *sdk.Usage) contract.AgentRunResult {
	t.mu.Lock()
	out := t.text.String()
	t.mu.Unlock()
	r := contract.AgentRunResult{Status: status, Output: out, Error: e}
	if u != nil {
		in, outT := uint64(u.InputTokens), uint64(u.OutputTokens)
		tot := uint64(u.TotalTokens)
		r.Usage = &contract.RunUsage{InputTokens: &in, OutputTokens: &outT, TotalTokens: &tot}
		t.events.Emit(adapterkit.Event{Kind: eventUsage, Metadata: map[string]any{
			"input_tokens": in, "output_tokens": outT, "total_tokens": tot,
		}})
	}
	return r
}

// client answers the agent's requests and notifications.
type client struct{ s *session }

func (c *client) turn() *turn {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.current
}

func text(cb sdk.ContentBlock) string {
	if cb.Text != nil {
		return cb.Text.Text
	}
	return ""
}

func toolContentText(cs []sdk.ToolCallContent) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Content != nil {
			b.WriteString(text(c.Content.Content))
		}
	}
	return b.String()
}

func raw(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) > 8<<10 {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// SessionUpdate maps session/update to Fabric events.
func (c *client) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	t := c.turn()
	if t == nil || n.SessionId != c.s.sessionID {
		return nil
	}
	u := n.Update
	switch {
	case u.AgentMessageChunk != nil:
		d := text(u.AgentMessageChunk.Content)
		if d == "" {
			return nil
		}
		t.mu.Lock()
		t.text.WriteString(d)
		t.mu.Unlock()
		t.events.Emit(adapterkit.Event{Kind: eventOutputDelta, Message: d})
	case u.AgentThoughtChunk != nil:
		if d := text(u.AgentThoughtChunk.Content); d != "" {
			t.events.Emit(adapterkit.Event{Kind: eventReasoningDelta, Message: d})
		}
	case u.ToolCall != nil:
		tc := u.ToolCall
		t.mu.Lock()
		t.tools[string(tc.ToolCallId)] = tc.Title
		t.mu.Unlock()
		md := map[string]any{"tool_call_id": string(tc.ToolCallId), "title": tc.Title, "kind": string(tc.Kind), "status": string(tc.Status)}
		if in := raw(tc.RawInput); in != nil {
			md["input"] = in
		}
		t.events.Emit(adapterkit.Event{Kind: eventToolCall, Message: tc.Title, Metadata: md})
		if tc.Status == sdk.ToolCallStatusCompleted || tc.Status == sdk.ToolCallStatusFailed {
			t.events.Emit(adapterkit.Event{Kind: eventToolResult, Message: toolContentText(tc.Content), Metadata: map[string]any{
				"tool_call_id": string(tc.ToolCallId), "status": string(tc.Status)}})
		}
	case u.ToolCallUpdate != nil:
		tu := u.ToolCallUpdate
		md := map[string]any{"tool_call_id": string(tu.ToolCallId)}
		status := ""
		if tu.Status != nil {
			status = string(*tu.Status)
			md["status"] = status
		}
		if out := raw(tu.RawOutput); out != nil {
			md["output"] = out
		}
		msg := toolContentText(tu.Content)
		t.mu.Lock()
		_, seen := t.tools[string(tu.ToolCallId)]
		if !seen {
			t.tools[string(tu.ToolCallId)] = ""
		}
		t.mu.Unlock()
		if !seen { // some agents (Gemini CLI) announce a call only by updates
			cm := map[string]any{"tool_call_id": string(tu.ToolCallId), "status": "pending"}
			title := ""
			if tu.Title != nil {
				title = *tu.Title
				cm["title"] = title
			}
			if tu.Kind != nil {
				cm["kind"] = string(*tu.Kind)
			}
			if in := raw(tu.RawInput); in != nil {
				cm["input"] = in
			}
			t.events.Emit(adapterkit.Event{Kind: eventToolCall, Message: title, Metadata: cm})
		}
		kind := eventToolCall
		if status == string(sdk.ToolCallStatusCompleted) || status == string(sdk.ToolCallStatusFailed) {
			kind = eventToolResult
		}
		t.events.Emit(adapterkit.Event{Kind: kind, Message: msg, Metadata: md})
	case u.Plan != nil:
		entries := make([]any, 0, len(u.Plan.Entries))
		for _, e := range u.Plan.Entries {
			entries = append(entries, map[string]any{"content": e.Content, "status": string(e.Status), "priority": string(e.Priority)})
		}
		t.events.Emit(adapterkit.Event{Kind: eventPlan, Metadata: map[string]any{"entries": entries}})
	case u.UsageUpdate != nil:
		t.events.Emit(adapterkit.Event{Kind: eventUsage, Metadata: map[string]any{"usage": raw(u.UsageUpdate)}})
	}
	return nil
}

// inWorkspace resolves p and reports an error unless it lies inside the
// workspace (symlinks resolved as far as they exist).
func (c *client) inWorkspace(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("path must be absolute: %s", p)
	}
	clean := filepath.Clean(p)
	// Resolve the longest existing prefix, so a symlink cannot lead out.
	dir, rest := clean, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			clean = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
	ws := c.s.workspace
	if clean != ws && !strings.HasPrefix(clean, ws+string(filepath.Separator)) {
		return "", fmt.Errorf("path %s is outside the workspace", p)
	}
	return clean, nil
}

// ReadTextFile reads a file inside the workspace.
func (c *client) ReadTextFile(ctx context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	path, err := c.inWorkspace(p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, err
	}
	content := string(b)
	if p.Line != nil || p.Limit != nil {
		lines := strings.SplitAfter(content, "\n")
		start := 0
		if p.Line != nil && *p.Line > 1 {
			start = min(*p.Line-1, len(lines))
		}
		end := len(lines)
		if p.Limit != nil && *p.Limit >= 0 {
			end = min(start+*p.Limit, len(lines))
		}
		content = strings.Join(lines[start:end], "")
	}
	return sdk.ReadTextFileResponse{Content: content}, nil
}

// WriteTextFile writes a file inside the workspace.
func (c *client) WriteTextFile(ctx context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	path, err := c.inWorkspace(p.Path)
	if err != nil {
		return sdk.WriteTextFileResponse{}, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return sdk.WriteTextFileResponse{}, err
	}
	return sdk.WriteTextFileResponse{}, os.WriteFile(path, []byte(p.Content), 0o644)
}

// pick returns the first option of one of the kinds, in order.
func pick(opts []sdk.PermissionOption, kinds ...sdk.PermissionOptionKind) (sdk.PermissionOptionId, bool) {
	for _, k := range kinds {
		for _, o := range opts {
			if o.Kind == k {
				return o.OptionId, true
			}
		}
	}
	return "", false
}

// RequestPermission answers by policy; "ask" raises a permission_request
// event and waits for a decision, denying when none comes in time.
func (c *client) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	t := c.turn()
	title := ""
	if p.ToolCall.Title != nil {
		title = *p.ToolCall.Title
	}
	md := map[string]any{"tool_call_id": string(p.ToolCall.ToolCallId)}
	if p.ToolCall.Kind != nil {
		md["kind"] = string(*p.ToolCall.Kind)
	}
	if in := raw(p.ToolCall.RawInput); in != nil {
		md["input"] = in
	}
	opts := make([]any, 0, len(p.Options))
	for _, o := range p.Options {
		opts = append(opts, map[string]any{"option_id": string(o.OptionId), "kind": string(o.Kind), "name": o.Name})
	}
	md["options"] = opts
	d := adapterkit.PermissionDecision{Decision: adapterkit.PermissionDeny, Source: "policy"}
	switch {
	case t == nil:
		d.Source = "no_turn"
	case t.policy == PolicyAllow:
		d.Decision = adapterkit.PermissionAllow
	case t.policy == PolicyAsk:
		d = adapterkit.AskPermission(t.ctx, t.events, adapterkit.PermissionRequest{Title: title, Metadata: md, Timeout: t.timeout})
	}
	if t != nil && t.policy != PolicyAsk {
		adapterkit.EmitPermissionDecision(t.events, d, md)
	}
	if d.Allowed() {
		if id, ok := pick(p.Options, sdk.PermissionOptionKindAllowOnce, sdk.PermissionOptionKindAllowAlways); ok {
			return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: id}}}, nil
		}
	} else if id, ok := pick(p.Options, sdk.PermissionOptionKindRejectOnce, sdk.PermissionOptionKindRejectAlways); ok {
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: id}}}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
}

var errNoTerminal = errors.New("fabric's ACP client does not offer terminals")

func (c *client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errNoTerminal
}
func (c *client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errNoTerminal
}
func (c *client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errNoTerminal
}
func (c *client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errNoTerminal
}
func (c *client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errNoTerminal
}
