package access

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
)

// Fabric event kinds the gateway maps (adapters emit them; see docs/access-gateway.md).
const (
	kindOutputDelta    = "output_delta"
	kindReasoningDelta = "reasoning_delta"
	kindToolCall       = "tool_call"
	kindToolResult     = "tool_result"
)

// fabricItemKinds are the other Fabric event kinds a client sees, as
// "fabric:<kind>" output items; the rest (logs, usage, progress) stay inside.
var fabricItemKinds = map[string]bool{"file_change": true, "warning": true, "model_retry": true, "artifact": true}

// Response statuses.
const (
	statusQueued     = "queued"
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusFailed     = "failed"
	statusCancelled  = "cancelled"
)

// Codes of failures the gateway reports inside a response.
const (
	codeOutcomeUnknown   = "outcome_unknown"
	codeAgentBusy        = "agent_busy"
	codeAgentUnavailable = "agent_unavailable"
	codeAgentStartFailed = "agent_start_failed"
	msgOutcomeUnknown    = "The turn may or may not have run; it will not be re-sent."
)

type respError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type convRef struct {
	ID string `json:"id"`
}

type usageTokens struct {
	InputTokens         uint64         `json:"input_tokens"`
	InputTokensDetails  map[string]int `json:"input_tokens_details"`
	OutputTokens        uint64         `json:"output_tokens"`
	OutputTokensDetails map[string]int `json:"output_tokens_details"`
	TotalTokens         uint64         `json:"total_tokens"`
}

// responseObject is the Responses API's Response, as every client accepts it.
type responseObject struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Background         bool              `json:"background"`
	Error              *respError        `json:"error"`
	IncompleteDetails  any               `json:"incomplete_details"`
	Instructions       any               `json:"instructions"`
	Metadata           map[string]string `json:"metadata"`
	Model              string            `json:"model"`
	Output             []map[string]any  `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Conversation       *convRef          `json:"conversation"`
	Store              bool              `json:"store"`
	Temperature        any               `json:"temperature"`
	TopP               any               `json:"top_p"`
	Text               map[string]any    `json:"text"`
	ToolChoice         string            `json:"tool_choice"`
	Tools              []any             `json:"tools"`
	Truncation         string            `json:"truncation"`
	Usage              *usageTokens      `json:"usage"`
}

func (r *responseObject) clone() *responseObject {
	c := *r
	c.Output = make([]map[string]any, len(r.Output))
	for i, it := range r.Output {
		c.Output[i] = cloneItem(it)
	}
	return &c
}

func cloneItem(it map[string]any) map[string]any {
	c := make(map[string]any, len(it))
	for k, v := range it {
		if vs, ok := v.([]any); ok {
			// An empty list stays an empty list: clients iterate it (the
			// openai SDK's stream helper throws on content: null).
			v = append(make([]any, 0, len(vs)), vs...)
		}
		c[k] = v
	}
	return c
}

// standard is the response as a non-streaming body: Fabric's own
// "fabric:" items are left out, because clients validate a non-stream
// output against the standard item types (the AI SDK's generateText
// rejects the whole response otherwise); streams keep them, where
// clients skip unknown items.
func (r *responseObject) standard() *responseObject {
	c := *r
	c.Output = make([]map[string]any, 0, len(r.Output))
	for _, it := range r.Output {
		if typ, _ := it["type"].(string); !strings.HasPrefix(typ, "fabric:") {
			c.Output = append(c.Output, it)
		}
	}
	return &c
}

// outputText is the concatenated text of the response's message items.
func (r *responseObject) outputText() string {
	var b strings.Builder
	for _, it := range r.Output {
		if it["type"] != "message" {
			continue
		}
		for _, p := range asList(it["content"]) {
			if m, ok := p.(map[string]any); ok {
				s, _ := m["text"].(string)
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// event is one Responses stream event, as sent (data is its JSON).
type event struct {
	typ  string
	data []byte
}

// translator turns one turn's Fabric events into Responses events. It is
// deterministic: the same Fabric events give the same bytes, so a turn
// adopted from Fabric's record after a crash replays what was streamed.
type translator struct {
	resp   *responseObject
	seq    int
	n      int // item counter, for ids
	emit   func(event)
	text   *run // open message item
	reason *run // open reasoning item
	tools  map[string]int
	sawOut bool // some text was streamed
}

type run struct {
	index int
	id    string
	b     strings.Builder
}

func newTranslator(resp *responseObject, emit func(event)) *translator {
	return &translator{resp: resp, emit: emit, tools: map[string]int{}}
}

func (t *translator) send(typ string, fields map[string]any) {
	fields["type"] = typ
	fields["sequence_number"] = t.seq
	t.seq++
	b, err := json.Marshal(fields)
	if err != nil { // unreachable: only maps, strings, numbers and the Response
		b = []byte(fmt.Sprintf(`{"type":%q,"sequence_number":%d}`, typ, t.seq-1))
	}
	t.emit(event{typ: typ, data: b})
}

// created is the first event of every response.
func (t *translator) created() {
	t.send("response.created", map[string]any{"response": t.resp.clone()})
}

func (t *translator) itemID(prefix string) string {
	t.n++
	return fmt.Sprintf("%s_%s_%d", prefix, strings.TrimPrefix(t.resp.ID, "resp_"), t.n)
}

func (t *translator) addItem(it map[string]any) int {
	idx := len(t.resp.Output)
	t.resp.Output = append(t.resp.Output, it)
	t.send("response.output_item.added", map[string]any{"output_index": idx, "item": cloneItem(it)})
	return idx
}

// fabric handles one Fabric event.
func (t *translator) fabric(ev contract.FabricEvent) {
	switch ev.Kind {
	case contract.EventInvocationStart:
		t.resp.Status = statusInProgress // a queued turn (its runtime was starting) runs now
		t.send("response.in_progress", map[string]any{"response": t.resp.clone()})
	case kindOutputDelta:
		t.textDelta(ev.Message)
	case kindReasoningDelta:
		t.reasoningDelta(ev.Message)
	case kindToolCall:
		t.toolCall(ev)
	case kindToolResult:
		t.toolResult(ev)
	default:
		if fabricItemKinds[ev.Kind] {
			t.closeRuns()
			it := map[string]any{"id": t.itemID("fab"), "type": "fabric:" + ev.Kind, "status": "completed", "message": ev.Message}
			idx := t.addItem(it)
			t.send("response.output_item.done", map[string]any{"output_index": idx, "item": cloneItem(it)})
		}
	}
}

func (t *translator) textDelta(s string) {
	if s == "" {
		return
	}
	t.sawOut = true
	if t.reason != nil {
		t.closeReasoning()
	}
	if t.text == nil {
		r := &run{id: t.itemID("msg")}
		r.index = t.addItem(map[string]any{"id": r.id, "type": "message", "role": "assistant", "status": "in_progress", "content": []any{}})
		t.send("response.content_part.added", map[string]any{"item_id": r.id, "output_index": r.index, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		t.text = r
	}
	t.text.b.WriteString(s)
	t.send("response.output_text.delta", map[string]any{"item_id": t.text.id, "output_index": t.text.index, "content_index": 0, "delta": s, "logprobs": []any{}})
}

func (t *translator) closeText() {
	r := t.text
	t.text = nil
	text := r.b.String()
	part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
	t.send("response.output_text.done", map[string]any{"item_id": r.id, "output_index": r.index, "content_index": 0, "text": text, "logprobs": []any{}})
	t.send("response.content_part.done", map[string]any{"item_id": r.id, "output_index": r.index, "content_index": 0, "part": part})
	it := map[string]any{"id": r.id, "type": "message", "role": "assistant", "status": "completed", "content": []any{part}}
	t.resp.Output[r.index] = it
	t.send("response.output_item.done", map[string]any{"output_index": r.index, "item": cloneItem(it)})
}

func (t *translator) reasoningDelta(s string) {
	if s == "" {
		return
	}
	if t.text != nil {
		t.closeText()
	}
	if t.reason == nil {
		r := &run{id: t.itemID("rs")}
		r.index = t.addItem(map[string]any{"id": r.id, "type": "reasoning", "summary": []any{}})
		t.send("response.reasoning_summary_part.added", map[string]any{"item_id": r.id, "output_index": r.index, "summary_index": 0,
			"part": map[string]any{"type": "summary_text", "text": ""}})
		t.reason = r
	}
	t.reason.b.WriteString(s)
	t.send("response.reasoning_summary_text.delta", map[string]any{"item_id": t.reason.id, "output_index": t.reason.index, "summary_index": 0, "delta": s})
}

func (t *translator) closeReasoning() {
	r := t.reason
	t.reason = nil
	text := r.b.String()
	part := map[string]any{"type": "summary_text", "text": text}
	t.send("response.reasoning_summary_text.done", map[string]any{"item_id": r.id, "output_index": r.index, "summary_index": 0, "text": text})
	t.send("response.reasoning_summary_part.done", map[string]any{"item_id": r.id, "output_index": r.index, "summary_index": 0, "part": part})
	it := map[string]any{"id": r.id, "type": "reasoning", "summary": []any{part}}
	t.resp.Output[r.index] = it
	t.send("response.output_item.done", map[string]any{"output_index": r.index, "item": cloneItem(it)})
}

func (t *translator) closeRuns() {
	if t.text != nil {
		t.closeText()
	}
	if t.reason != nil {
		t.closeReasoning()
	}
}

func metaString(md map[string]any, key string) string {
	switch v := md[key].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// toolCall opens an mcp_call item for an agent-internal tool.
func (t *translator) toolCall(ev contract.FabricEvent) {
	t.closeRuns()
	name := metaString(ev.Metadata, "tool")
	if name == "" {
		name = ev.Message
	}
	args := metaString(ev.Metadata, "arguments")
	if args == "" {
		if c := metaString(ev.Metadata, "command"); c != "" {
			b, _ := json.Marshal(map[string]string{"command": c})
			args = string(b)
		} else {
			args = "{}"
		}
	}
	id := t.itemID("mcp")
	it := map[string]any{"id": id, "type": "mcp_call", "server_label": "fabric", "name": name, "arguments": "", "status": "in_progress"}
	idx := t.addItem(it)
	t.send("response.mcp_call.in_progress", map[string]any{"item_id": id, "output_index": idx})
	t.send("response.mcp_call_arguments.delta", map[string]any{"item_id": id, "output_index": idx, "delta": args})
	t.send("response.mcp_call_arguments.done", map[string]any{"item_id": id, "output_index": idx, "arguments": args})
	it["arguments"] = args
	native := metaString(ev.Metadata, "item_id")
	if native == "" {
		native = "#" + name
	}
	t.tools[native] = idx
}

func (t *translator) toolResult(ev contract.FabricEvent) {
	native := metaString(ev.Metadata, "item_id")
	if native == "" {
		native = "#" + metaString(ev.Metadata, "tool")
	}
	idx, ok := t.tools[native]
	if !ok {
		return // a result without its call: nothing to attach it to
	}
	delete(t.tools, native)
	t.closeRuns()
	it := t.resp.Output[idx]
	out := metaString(ev.Metadata, "output")
	if out == "" {
		out = ev.Message
	}
	errText := metaString(ev.Metadata, "error")
	it["output"] = out
	if errText != "" {
		it["error"], it["status"] = errText, "failed"
		t.send("response.mcp_call.failed", map[string]any{"item_id": it["id"], "output_index": idx})
	} else {
		it["error"], it["status"] = nil, "completed"
		t.send("response.mcp_call.completed", map[string]any{"item_id": it["id"], "output_index": idx})
	}
	t.send("response.output_item.done", map[string]any{"output_index": idx, "item": cloneItem(it)})
}

// outcome is how a turn ended, from the gateway's point of view.
type outcome struct {
	status string // completed, failed, cancelled
	err    *respError
	output string // the result's output, used when no text was streamed
	usage  *contract.RunUsage
}

// outcomeOf reads a RunResult.
func outcomeOf(res *contract.RunResult) outcome {
	o := outcome{usage: res.Usage}
	switch v := res.Output.(type) {
	case string:
		o.output = v
	case nil:
	default:
		b, _ := json.Marshal(v)
		o.output = string(b)
	}
	switch res.Status {
	case contract.StatusSucceeded:
		o.status = statusCompleted
	case contract.StatusCancelled:
		o.status = statusCancelled
	default:
		o.status = statusFailed
		o.err = &respError{Code: "turn_failed", Message: "the turn failed"}
		if res.Error != nil {
			o.err = &respError{Code: res.Error.Code, Message: res.Error.Message}
		}
	}
	return o
}

// finish closes open items and sends the terminal event.
func (t *translator) finish(o outcome) {
	if !t.sawOut && o.output != "" && o.status == statusCompleted {
		t.textDelta(o.output)
	}
	t.closeRuns()
	open := make([]int, 0, len(t.tools))
	for _, idx := range t.tools {
		open = append(open, idx)
	}
	slices.Sort(open)
	for _, idx := range open {
		it := t.resp.Output[idx]
		it["status"] = "incomplete"
		t.send("response.output_item.done", map[string]any{"output_index": idx, "item": cloneItem(it)})
	}
	clear(t.tools)
	t.resp.Status = o.status
	t.resp.Error = o.err
	t.resp.Usage = usageOf(o.usage)
	typ := "response.completed"
	switch o.status {
	case statusFailed:
		typ = "response.failed"
	case statusCancelled:
		typ = "response.incomplete"
	}
	t.send(typ, map[string]any{"response": t.resp.clone()})
}

func usageOf(u *contract.RunUsage) *usageTokens {
	out := &usageTokens{InputTokensDetails: map[string]int{"cached_tokens": 0}, OutputTokensDetails: map[string]int{"reasoning_tokens": 0}}
	if u == nil {
		return out
	}
	if u.InputTokens != nil {
		out.InputTokens = *u.InputTokens
	}
	if u.OutputTokens != nil {
		out.OutputTokens = *u.OutputTokens
	}
	out.TotalTokens = out.InputTokens + out.OutputTokens
	if u.TotalTokens != nil {
		out.TotalTokens = *u.TotalTokens
	}
	return out
}
