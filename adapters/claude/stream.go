package claude

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
)

// Event kinds the adapter emits.
const (
	eventOutputDelta    = "output_delta"
	eventReasoningDelta = "reasoning_delta"
	eventToolCall       = "tool_call"
	eventToolResult     = "tool_result"
	eventStatus         = "status"
)

// maxEventText bounds the text of a tool_result event (the full result
// stays in the harness's transcript).
const maxEventText = 8 << 10

// message is one line of claude's stream-json output. Only the fields the
// adapter reads are decoded.
type message struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype,omitempty"`

	// control_request (from claude) and control_response.
	RequestID string          `json:"request_id,omitempty"`
	Request   json.RawMessage `json:"request,omitempty"`
	Response  *controlReply   `json:"response,omitempty"`

	// stream_event.
	Event json.RawMessage `json:"event,omitempty"`
	// assistant and user.
	Message         json.RawMessage `json:"message,omitempty"`
	ParentToolUseID *string         `json:"parent_tool_use_id,omitempty"`
	IsReplay        bool            `json:"isReplay,omitempty"`

	// command_lifecycle.
	CommandUUID string `json:"command_uuid,omitempty"`
	State       string `json:"state,omitempty"`

	// system.
	SessionID      string   `json:"session_id,omitempty"`
	Model          string   `json:"model,omitempty"`
	PermissionMode string   `json:"permissionMode,omitempty"`
	Status         string   `json:"status,omitempty"`
	ToolName       string   `json:"tool_name,omitempty"`
	ToolUseID      string   `json:"tool_use_id,omitempty"`
	Version        string   `json:"claude_code_version,omitempty"`
	Skills         []string `json:"skills,omitempty"`
	MCPServers     []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"mcp_servers,omitempty"`

	// result.
	Result         string          `json:"result,omitempty"`
	IsError        bool            `json:"is_error,omitempty"`
	NumTurns       int             `json:"num_turns,omitempty"`
	TotalCostUSD   *float64        `json:"total_cost_usd,omitempty"`
	Usage          *usage          `json:"usage,omitempty"`
	Errors         []string        `json:"errors,omitempty"`
	APIErrorStatus *int            `json:"api_error_status,omitempty"`
	APIErrorType   string          `json:"api_error_type,omitempty"`
	TerminalReason string          `json:"terminal_reason,omitempty"`
	StopReason     *string         `json:"stop_reason,omitempty"`
	DurationMS     int64           `json:"duration_ms,omitempty"`
	Denials        json.RawMessage `json:"permission_denials,omitempty"`
}

// controlReply is the "response" of a control_response.
type controlReply struct {
	Subtype   string          `json:"subtype"`
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response,omitempty"`
	Error     string          `json:"error,omitempty"`
}

type usage struct {
	InputTokens              uint64 `json:"input_tokens"`
	OutputTokens             uint64 `json:"output_tokens"`
	CacheCreationInputTokens uint64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     uint64 `json:"cache_read_input_tokens"`
}

// streamEvent is the raw Anthropic SSE event inside a stream_event line.
type streamEvent struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	Delta *struct {
		Type     string `json:"type"`
		Text     string `json:"text,omitempty"`
		Thinking string `json:"thinking,omitempty"`
	} `json:"delta,omitempty"`
}

// contentMessage is the "message" of assistant and user lines.
type contentMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// blocks decodes a message's content: a string is one text block.
func (m contentMessage) blocks() []contentBlock {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []contentBlock{{Type: "text", Text: s}}
	}
	var bs []contentBlock
	_ = json.Unmarshal(m.Content, &bs)
	return bs
}

// scrubber replaces a secret value in text shown to the caller.
type scrubber struct{ secret string }

func (s scrubber) text(t string) string {
	if len(s.secret) < 4 || !strings.Contains(t, s.secret) {
		return t
	}
	return strings.ReplaceAll(t, s.secret, contract.Redacted)
}

func (s scrubber) value(v any) any {
	if len(s.secret) < 4 {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil || !strings.Contains(string(b), s.secret) {
		return v
	}
	var out any
	if json.Unmarshal([]byte(strings.ReplaceAll(string(b), s.secret, contract.Redacted)), &out) != nil {
		return contract.Redacted
	}
	return out
}

// events maps one output line to Fabric events. It returns the text a
// top-level assistant message carried (the fallback output) as well.
func (sc scrubber) events(m *message) (evs []adapterkit.Event, assistantText string) {
	meta := func(kv ...any) map[string]any {
		md := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			md[kv[i].(string)] = kv[i+1]
		}
		if m.ParentToolUseID != nil && *m.ParentToolUseID != "" {
			md["parent_tool_use_id"] = *m.ParentToolUseID
		}
		return md
	}
	switch m.Type {
	case "stream_event":
		var ev streamEvent
		if json.Unmarshal(m.Event, &ev) != nil || ev.Type != "content_block_delta" || ev.Delta == nil {
			return nil, ""
		}
		switch ev.Delta.Type {
		case "text_delta":
			if ev.Delta.Text != "" {
				evs = append(evs, adapterkit.Event{Kind: eventOutputDelta, Message: sc.text(ev.Delta.Text), Metadata: meta("index", ev.Index)})
			}
		case "thinking_delta":
			if ev.Delta.Thinking != "" {
				evs = append(evs, adapterkit.Event{Kind: eventReasoningDelta, Message: sc.text(ev.Delta.Thinking), Metadata: meta("index", ev.Index)})
			}
		}
	case "assistant":
		var cm contentMessage
		if json.Unmarshal(m.Message, &cm) != nil {
			return nil, ""
		}
		var text strings.Builder
		for _, b := range cm.blocks() {
			switch b.Type {
			case "text":
				text.WriteString(b.Text)
			case "tool_use", "server_tool_use", "mcp_tool_use":
				var input any
				_ = json.Unmarshal(b.Input, &input)
				evs = append(evs, adapterkit.Event{Kind: eventToolCall, Message: b.Name,
					Metadata: meta("name", b.Name, "id", b.ID, "input", sc.value(input))})
			}
		}
		if m.ParentToolUseID == nil || *m.ParentToolUseID == "" {
			assistantText = text.String()
		}
	case "user":
		if m.IsReplay {
			return nil, ""
		}
		var cm contentMessage
		if json.Unmarshal(m.Message, &cm) != nil {
			return nil, ""
		}
		for _, b := range cm.blocks() {
			if b.Type != "tool_result" {
				continue
			}
			out := truncate(sc.text(toolResultText(b.Content)), maxEventText)
			evs = append(evs, adapterkit.Event{Kind: eventToolResult, Message: out,
				Metadata: meta("tool_use_id", b.ToolUseID, "is_error", b.IsError)})
		}
	case "system":
		md := meta("subtype", m.Subtype)
		msg := m.Subtype
		switch m.Subtype {
		case "init":
			md["session_id"] = m.SessionID
			md["model"] = m.Model
			md["permission_mode"] = m.PermissionMode
			if m.Version != "" {
				md["claude_code_version"] = m.Version
			}
			if len(m.Skills) > 0 {
				md["skills"] = m.Skills
			}
			if len(m.MCPServers) > 0 {
				servers := map[string]any{}
				for _, srv := range m.MCPServers {
					servers[srv.Name] = srv.Status
				}
				md["mcp_servers"] = servers
			}
		case "status":
			if m.Status != "" {
				md["status"] = m.Status
				msg = m.Status
			}
			if m.PermissionMode != "" {
				md["permission_mode"] = m.PermissionMode
			}
		case "permission_denied":
			md["tool_name"] = m.ToolName
			md["tool_use_id"] = m.ToolUseID
			var reason string
			if json.Unmarshal(m.Message, &reason) == nil && reason != "" {
				md["reason"] = sc.text(reason)
			}
			msg = "permission denied: " + m.ToolName
		}
		evs = append(evs, adapterkit.Event{Kind: eventStatus, Message: msg, Metadata: md})
	}
	return evs, assistantText
}

// toolResultText flattens a tool_result's content (a string or blocks).
func toolResultText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []contentBlock
	if json.Unmarshal(raw, &bs) == nil {
		var parts []string
		for _, b := range bs {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			} else {
				parts = append(parts, "["+b.Type+"]")
			}
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// runUsage maps a result's usage and cost. Input tokens include the
// prompt-cache reads and writes (Anthropic reports them apart).
func runUsage(m *message) *contract.RunUsage {
	if m.Usage == nil && m.TotalCostUSD == nil {
		return nil
	}
	u := &contract.RunUsage{}
	if m.Usage != nil {
		in := m.Usage.InputTokens + m.Usage.CacheCreationInputTokens + m.Usage.CacheReadInputTokens
		out := m.Usage.OutputTokens
		total := in + out
		u.InputTokens, u.OutputTokens, u.TotalTokens = &in, &out, &total
		if m.Usage.CacheReadInputTokens > 0 || m.Usage.CacheCreationInputTokens > 0 {
			u.Extensions = map[string]any{
				"cache_read_input_tokens":     m.Usage.CacheReadInputTokens,
				"cache_creation_input_tokens": m.Usage.CacheCreationInputTokens,
			}
		}
	}
	if m.TotalCostUSD != nil && *m.TotalCostUSD >= 0 {
		c := *m.TotalCostUSD
		u.CostUSD = &c
	}
	return u
}

// turnResult maps a result message to the turn's result. interrupted says
// the adapter sent an interrupt for this turn; fallback is the text of the
// turn's last top-level assistant message.
func (sc scrubber) turnResult(m *message, interrupted bool, fallback string) contract.AgentRunResult {
	output := m.Result
	if output == "" {
		output = fallback
	}
	res := contract.AgentRunResult{Output: sc.text(output), Usage: runUsage(m)}
	ext := map[string]any{"subtype": m.Subtype}
	if m.SessionID != "" {
		ext["session_id"] = m.SessionID
	}
	if m.NumTurns > 0 {
		ext["num_turns"] = m.NumTurns
	}
	if m.TerminalReason != "" {
		ext["terminal_reason"] = m.TerminalReason
	}
	if len(m.Denials) > 0 && string(m.Denials) != "[]" && string(m.Denials) != "null" {
		var d any
		if json.Unmarshal(m.Denials, &d) == nil {
			ext["permission_denials"] = sc.value(d)
		}
	}
	res.Extensions = ext

	fail := func(code, msg string, retryable bool) contract.AgentRunResult {
		res.Status = contract.StatusFailed
		if strings.TrimSpace(msg) == "" {
			msg = code
		}
		res.Error = &contract.AgentRunError{Code: code, Message: sc.text(msg), Retryable: retryable}
		return res
	}
	errText := func() string {
		if len(m.Errors) > 0 {
			return strings.Join(m.Errors, "; ")
		}
		return m.Result
	}

	switch {
	case interrupted && (m.Subtype != "success" || m.IsError):
		res.Status = contract.StatusCancelled
		return res
	case m.APIErrorStatus != nil && (m.IsError || m.Subtype != "success"):
		st := *m.APIErrorStatus
		r := fail(CodeModelError, errText(), retryableStatus(st))
		switch st {
		case 429:
			r.Error.Code = CodeModelRateLimited
		case 401, 403:
			r.Error.Code = CodeModelAuth
		}
		r.Error.Extensions = map[string]any{"status": st}
		if m.APIErrorType != "" {
			r.Error.Extensions["type"] = m.APIErrorType
		}
		return r
	case m.Subtype == "success" && !m.IsError:
		res.Status = contract.StatusSucceeded
		return res
	case m.Subtype == "error_max_turns":
		return fail(CodeMaxTurns, fmt.Sprintf("the turn reached runtime.max_turns after %d model turns", m.NumTurns), false)
	case m.Subtype == "error_max_budget_usd":
		return fail(CodeBudgetExceeded, "the turn reached settings.max_budget_usd", false)
	case m.Subtype == "error_max_structured_output_retries":
		return fail(CodeStructuredOutput, errText(), false)
	case m.Subtype == "error_during_execution":
		return fail(CodeExecutionError, errText(), false)
	}
	return fail(CodeClaudeError, errText(), false)
}

// retryableStatus: rate limits, timeouts, conflicts, overload and server
// errors are worth retrying.
func retryableStatus(st int) bool {
	return st == 408 || st == 409 || st == 429 || st >= 500
}
