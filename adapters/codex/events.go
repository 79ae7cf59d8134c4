package codex

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
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
	eventFileChange     = "file_change"
	eventUsage          = "usage"
	eventWarning        = "warning"
	eventModelRetry     = "model_retry"
)

// Error codes of failed results.
const (
	CodeModelRateLimited = "model_rate_limited"
	CodeModelError       = "model_error"
	CodeModelAuth        = "model_auth_failed"
	CodeContextExceeded  = "model_context_exceeded"
	CodeTurnFailed       = "codex_turn_failed"
	CodeTurnStillRunning = "codex_turn_still_running"
	CodeInvalidSettings  = "codex_invalid_settings"
	CodeInvalidConfig    = "codex_invalid_config"
	CodeAPIKeyMissing    = "codex_api_key_missing"
	CodeBinaryNotFound   = "codex_not_found"
	CodeStartFailed      = "codex_start_failed"
	CodeExited           = "codex_exited"
	CodeProtocol         = "codex_protocol_error"
	CodeInvalidWorkspace = "codex_invalid_workspace"
)

// maxOutputMetadata bounds the command output carried in a tool_result
// event; longer output ends with truncatedOutputMarker.
const (
	maxOutputMetadata     = 4 << 10
	truncatedOutputMarker = "\n[... truncated]"
)

// tokenCounts is Codex's TokenUsageBreakdown.
type tokenCounts struct {
	TotalTokens           uint64 `json:"totalTokens"`
	InputTokens           uint64 `json:"inputTokens"`
	CachedInputTokens     uint64 `json:"cachedInputTokens"`
	OutputTokens          uint64 `json:"outputTokens"`
	ReasoningOutputTokens uint64 `json:"reasoningOutputTokens"`
}

func (a tokenCounts) minus(b tokenCounts) tokenCounts {
	sub := func(x, y uint64) uint64 {
		if x < y {
			return 0
		}
		return x - y
	}
	return tokenCounts{
		TotalTokens: sub(a.TotalTokens, b.TotalTokens), InputTokens: sub(a.InputTokens, b.InputTokens),
		CachedInputTokens: sub(a.CachedInputTokens, b.CachedInputTokens), OutputTokens: sub(a.OutputTokens, b.OutputTokens),
		ReasoningOutputTokens: sub(a.ReasoningOutputTokens, b.ReasoningOutputTokens),
	}
}

// turnError is Codex's TurnError.
type turnError struct {
	Message           string          `json:"message"`
	CodexErrorInfo    json.RawMessage `json:"codexErrorInfo,omitempty"`
	AdditionalDetails *string         `json:"additionalDetails,omitempty"`
}

// turn is the state of one turn/start, fed by notifications on the reading
// goroutine and read by Invoke once done is closed.
type turn struct {
	events adapterkit.Emitter
	// baseline is the thread's cumulative token usage before the turn.
	baseline tokenCounts

	mu        sync.Mutex
	id        string
	text      strings.Builder // agent message deltas, for a partial answer
	final     string          // text of the last completed agent message
	hasFinal  bool
	usage     *tokenCounts // cumulative total at the last update
	status    string
	err       *turnError
	lastError *turnError // last error notification
	done      chan struct{}
	finished  bool
}

func newTurn(events adapterkit.Emitter, baseline tokenCounts) *turn {
	return &turn{events: events, baseline: baseline, done: make(chan struct{})}
}

func (t *turn) setID(id string) {
	t.mu.Lock()
	if t.id == "" {
		t.id = id
	}
	t.mu.Unlock()
}

func (t *turn) ID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.id
}

// isDone reports whether turn/completed has arrived.
func (t *turn) isDone() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// accepts reports whether a notification for turnID belongs to this turn.
func (t *turn) accepts(turnID string) bool {
	if turnID == "" {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.id == "" {
		t.id = turnID
		return true
	}
	return t.id == turnID
}

// item is the subset of Codex's ThreadItem the adapter reads.
type item struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Text             string          `json:"text"`
	Command          string          `json:"command"`
	Cwd              string          `json:"cwd"`
	Status           string          `json:"status"`
	ExitCode         *int            `json:"exitCode"`
	AggregatedOutput *string         `json:"aggregatedOutput"`
	DurationMs       *int64          `json:"durationMs"`
	Changes          []fileChange    `json:"changes"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Error            json.RawMessage `json:"error"`
	Query            string          `json:"query"`
}

type fileChange struct {
	Path string `json:"path"`
	Kind struct {
		Type     string  `json:"type"`
		MovePath *string `json:"move_path"`
	} `json:"kind"`
}

// handle maps one notification of this turn to events and state. It runs
// on the reading goroutine.
func (t *turn) handle(method string, p notification) {
	switch method {
	case "turn/started":
		if p.Turn != nil {
			t.setID(p.Turn.ID)
		}
	case "item/agentMessage/delta":
		t.mu.Lock()
		t.text.WriteString(p.Delta)
		t.mu.Unlock()
		t.emit(eventOutputDelta, p.Delta, map[string]any{"item_id": p.ItemID})
	case "item/reasoning/summaryTextDelta", "item/reasoning/textDelta":
		t.emit(eventReasoningDelta, p.Delta, map[string]any{"item_id": p.ItemID})
	case "item/started":
		if p.Item != nil {
			t.itemStarted(p.Item)
		}
	case "item/completed":
		if p.Item != nil {
			t.itemCompleted(p.Item)
		}
	case "thread/tokenUsage/updated":
		if p.TokenUsage != nil {
			total := p.TokenUsage.Total
			t.mu.Lock()
			t.usage = &total
			t.mu.Unlock()
			d := total.minus(t.baseline)
			t.emit(eventUsage, "", map[string]any{
				"input_tokens": d.InputTokens, "output_tokens": d.OutputTokens, "total_tokens": d.TotalTokens,
				"cached_input_tokens": d.CachedInputTokens, "reasoning_output_tokens": d.ReasoningOutputTokens,
			})
		}
	case "error":
		if p.Error != nil {
			t.mu.Lock()
			t.lastError = p.Error
			t.mu.Unlock()
			if p.WillRetry {
				md := map[string]any{}
				if s := httpStatus(p.Error.CodexErrorInfo); s > 0 {
					md["http_status"] = s
				}
				t.emit(eventModelRetry, p.Error.Message, md)
			}
		}
	case "warning":
		t.emit(eventWarning, p.Message, nil)
	case "turn/completed":
		if p.Turn == nil {
			return
		}
		t.mu.Lock()
		t.status = p.Turn.Status
		t.err = p.Turn.Error
		if !t.finished {
			t.finished = true
			close(t.done)
		}
		t.mu.Unlock()
	}
}

func (t *turn) itemStarted(it *item) {
	switch it.Type {
	case "commandExecution":
		t.emit(eventToolCall, it.Command, map[string]any{
			"item_id": it.ID, "tool": "shell", "command": it.Command, "cwd": it.Cwd,
		})
	case "mcpToolCall":
		md := map[string]any{"item_id": it.ID, "tool": it.Tool, "server": it.Server}
		if len(it.Arguments) > 0 && string(it.Arguments) != "null" {
			md["arguments"] = truncate(string(it.Arguments))
		}
		t.emit(eventToolCall, it.Server+"/"+it.Tool, md)
	case "webSearch":
		t.emit(eventToolCall, it.Query, map[string]any{"item_id": it.ID, "tool": "web_search", "query": it.Query})
	}
}

func (t *turn) itemCompleted(it *item) {
	switch it.Type {
	case "agentMessage":
		t.mu.Lock()
		t.final, t.hasFinal = it.Text, true
		t.mu.Unlock()
	case "commandExecution":
		md := map[string]any{"item_id": it.ID, "tool": "shell", "command": it.Command, "status": it.Status}
		if it.ExitCode != nil {
			md["exit_code"] = *it.ExitCode
		}
		if it.AggregatedOutput != nil {
			md["output"] = truncate(*it.AggregatedOutput)
		}
		if it.DurationMs != nil {
			md["duration_ms"] = *it.DurationMs
		}
		t.emit(eventToolResult, it.Command, md)
	case "fileChange":
		changes := make([]any, 0, len(it.Changes))
		paths := make([]string, 0, len(it.Changes))
		for _, c := range it.Changes {
			ch := map[string]any{"path": c.Path, "kind": c.Kind.Type}
			if c.Kind.MovePath != nil {
				ch["move_path"] = *c.Kind.MovePath
			}
			changes = append(changes, ch)
			paths = append(paths, c.Path)
		}
		t.emit(eventFileChange, strings.Join(paths, ", "), map[string]any{"item_id": it.ID, "status": it.Status, "changes": changes})
	case "mcpToolCall":
		md := map[string]any{"item_id": it.ID, "tool": it.Tool, "server": it.Server, "status": it.Status}
		if len(it.Error) > 0 && string(it.Error) != "null" {
			md["error"] = truncate(string(it.Error))
		}
		t.emit(eventToolResult, it.Server+"/"+it.Tool, md)
	case "webSearch":
		t.emit(eventToolResult, it.Query, map[string]any{"item_id": it.ID, "tool": "web_search", "query": it.Query})
	}
}

func (t *turn) emit(kind, msg string, md map[string]any) {
	t.events.Emit(adapterkit.Event{Kind: kind, Message: msg, Metadata: md})
}

// truncate keeps at most maxOutputMetadata bytes of s, on a rune boundary.
func truncate(s string) string {
	if len(s) <= maxOutputMetadata {
		return s
	}
	cut := maxOutputMetadata
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + truncatedOutputMarker
}

// notification is the union of the notification params the adapter reads.
type notification struct {
	ThreadID   string          `json:"threadId"`
	TurnID     string          `json:"turnId"`
	ItemID     string          `json:"itemId"`
	Delta      string          `json:"delta"`
	Message    string          `json:"message"`
	Item       *item           `json:"item"`
	Turn       *turnInfo       `json:"turn"`
	TokenUsage *threadUsage    `json:"tokenUsage"`
	Error      *turnError      `json:"error"`
	WillRetry  bool            `json:"willRetry"`
	Thread     json.RawMessage `json:"thread"`
}

type turnInfo struct {
	ID     string     `json:"id"`
	Status string     `json:"status"`
	Error  *turnError `json:"error"`
}

type threadUsage struct {
	Total tokenCounts `json:"total"`
	Last  tokenCounts `json:"last"`
}

// result builds the turn's result once it is done. structured makes a
// final answer that is JSON the output value (output_schema).
func (t *turn) result(structured bool) contract.AgentRunResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	var usage *contract.RunUsage
	if t.usage != nil {
		d := t.usage.minus(t.baseline)
		usage = &contract.RunUsage{InputTokens: &d.InputTokens, OutputTokens: &d.OutputTokens, TotalTokens: &d.TotalTokens}
	}
	text := t.final
	if !t.hasFinal {
		text = t.text.String()
	}
	switch t.status {
	case "completed":
		var out any = text
		if structured {
			var v any
			if json.Unmarshal([]byte(text), &v) == nil {
				out = v
			}
		}
		return contract.AgentRunResult{Status: contract.StatusSucceeded, Output: out, Usage: usage}
	case "interrupted":
		return contract.AgentRunResult{Status: contract.StatusCancelled, Output: text, Usage: usage}
	}
	e := t.err
	if e == nil {
		e = t.lastError
	}
	return contract.AgentRunResult{Status: contract.StatusFailed, Output: text, Usage: usage, Error: runError(t.status, e)}
}

// partial is the result of a turn that did not complete in time after an
// interrupt: cancelled, with what was streamed so far.
func (t *turn) partial() contract.AgentRunResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	text := t.final
	if !t.hasFinal {
		text = t.text.String()
	}
	return contract.AgentRunResult{Status: contract.StatusCancelled, Output: text}
}

// runError maps a failed turn's error to a Fabric error code.
func runError(turnStatus string, e *turnError) *contract.AgentRunError {
	if e == nil {
		return &contract.AgentRunError{Code: CodeTurnFailed, Message: fmt.Sprintf("the Codex turn ended with status %q and no error", turnStatus)}
	}
	msg := e.Message
	if e.AdditionalDetails != nil && *e.AdditionalDetails != "" && !strings.Contains(msg, *e.AdditionalDetails) {
		msg += ": " + *e.AdditionalDetails
	}
	if strings.TrimSpace(msg) == "" {
		msg = "the Codex turn failed"
	}
	info, status := errorKind(e.CodexErrorInfo), httpStatus(e.CodexErrorInfo)
	ext := map[string]any{}
	if len(e.CodexErrorInfo) > 0 && string(e.CodexErrorInfo) != "null" {
		var v any
		if json.Unmarshal(e.CodexErrorInfo, &v) == nil {
			ext["codex_error_info"] = v
		}
	}
	if status > 0 {
		ext["http_status"] = status
	}
	re := &contract.AgentRunError{Message: msg}
	if len(ext) > 0 {
		re.Extensions = ext
	}
	switch {
	case status == 429 || info == "rateLimitExceeded":
		re.Code, re.Retryable = CodeModelRateLimited, true
	case info == "usageLimitExceeded":
		re.Code = CodeModelRateLimited
	case status == 401 || status == 403 || info == "unauthorized":
		re.Code = CodeModelAuth
	case info == "contextWindowExceeded":
		re.Code = CodeContextExceeded
	case status >= 500 || info == "internalServerError" || info == "serverOverloaded":
		re.Code, re.Retryable = CodeModelError, true
	case info == "httpConnectionFailed" || info == "responseStreamConnectionFailed" || info == "responseStreamDisconnected" || info == "responseTooManyFailedAttempts":
		re.Code, re.Retryable = CodeModelError, status == 0 || status == 408
	case info == "badRequest" || info == "modelNotFound" || status >= 400:
		re.Code = CodeModelError
	case connectionFailure(e.Message):
		// Codex reports transport failures without a structured kind.
		re.Code, re.Retryable = CodeModelError, true
	default:
		re.Code = CodeTurnFailed
	}
	return re
}

// connectionFailure recognizes Codex's messages for a model request that
// never got an HTTP answer.
func connectionFailure(msg string) bool {
	for _, s := range []string{"stream disconnected", "error sending request", "connection refused", "timed out"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// errorKind names a CodexErrorInfo: the string for the plain variants, the
// single key for the object variants.
func errorKind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil && len(m) == 1 {
		for k := range m {
			return k
		}
	}
	return ""
}

// httpStatus extracts httpStatusCode from an object CodexErrorInfo.
func httpStatus(raw json.RawMessage) int {
	var m map[string]struct {
		HTTPStatusCode *int `json:"httpStatusCode"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return 0
	}
	for _, v := range m {
		if v.HTTPStatusCode != nil {
			return *v.HTTPStatusCode
		}
	}
	return 0
}
