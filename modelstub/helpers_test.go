package modelstub

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// sseEvent is one server-sent event as a strict client reads it.
type sseEvent struct {
	name string
	data string
}

// parseSSE reads an event stream strictly: only `event:` and `data:` lines,
// events separated by one blank line, no trailing partial event.
func parseSSE(r io.Reader) ([]sseEvent, error) {
	var out []sseEvent
	var cur sseEvent
	var have bool
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if !have {
				return nil, fmt.Errorf("empty event (two blank lines)")
			}
			out = append(out, cur)
			cur, have = sseEvent{}, false
		case strings.HasPrefix(line, "event: "):
			if cur.name != "" {
				return nil, fmt.Errorf("two event lines in one event")
			}
			cur.name, have = strings.TrimPrefix(line, "event: "), true
		case strings.HasPrefix(line, "data: "):
			if cur.data != "" {
				return nil, fmt.Errorf("multi-line data not expected")
			}
			cur.data, have = strings.TrimPrefix(line, "data: "), true
		default:
			return nil, fmt.Errorf("unexpected line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if have {
		return nil, fmt.Errorf("stream ended inside an event")
	}
	return out, nil
}

type jsonObj = map[string]any

func decodeObj(t *testing.T, s string) jsonObj {
	t.Helper()
	return decodeObjNamed(t, s, "not a JSON object")
}

// decodeObjNamed decodes the JSON object s, failing t with msg.
func decodeObjNamed(t *testing.T, s, msg string) jsonObj {
	t.Helper()
	var m jsonObj
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s: %v: %q", msg, err, s)
	}
	return m
}

// mustBe returns v as a T, failing t if it is not one (what names v,
// kind says what it should have been).
func mustBe[T any](t *testing.T, v any, what, kind string) T {
	t.Helper()
	x, ok := v.(T)
	if !ok {
		t.Fatalf("%s: want %s, got %T (%v)", what, kind, v, v)
	}
	return x
}

func mustObj(t *testing.T, v any, what string) jsonObj {
	t.Helper()
	return mustBe[jsonObj](t, v, what, "an object")
}

func mustArr(t *testing.T, v any, what string) []any {
	t.Helper()
	return mustBe[[]any](t, v, what, "an array")
}

func mustStr(t *testing.T, v any, what string) string {
	t.Helper()
	return mustBe[string](t, v, what, "a string")
}

func mustNum(t *testing.T, v any, what string) int {
	t.Helper()
	return int(mustBe[float64](t, v, what, "a number"))
}

// toolCall is a parsed tool call from any API.
type parsedCall struct {
	id   string
	name string
	args jsonObj
}

// result is what a strict client makes of one answer.
type result struct {
	text  string
	calls []parsedCall
	stop  string // finish/stop reason as the API says it
	usage jsonObj
	// deltas counts the non-empty text pieces a stream delivered.
	deltas int
}

func decodeArgs(t *testing.T, s string) jsonObj {
	t.Helper()
	return decodeObjNamed(t, s, "tool arguments are not a JSON object")
}

// readChatStream validates an OpenAI chat.completion.chunk stream.
func readChatStream(t *testing.T, body io.Reader, wantUsage bool) result {
	t.Helper()
	events, err := parseSSE(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) < 3 {
		t.Fatalf("too few events: %d", len(events))
	}
	if last := events[len(events)-1]; last.data != "[DONE]" || last.name != "" {
		t.Fatalf("stream must end with data: [DONE], got %+v", last)
	}
	var res result
	var id string
	calls := map[int]*parsedCall{}
	argBuf := map[int]*strings.Builder{}
	finished := false
	sawUsage := false
	for i, ev := range events[:len(events)-1] {
		if ev.name != "" {
			t.Fatalf("chat chunks carry no event names, got %q", ev.name)
		}
		c := decodeObj(t, ev.data)
		if c["object"] != "chat.completion.chunk" {
			t.Fatalf("chunk %d: object %v", i, c["object"])
		}
		cid := mustStr(t, c["id"], "id")
		if id == "" {
			id = cid
		} else if cid != id {
			t.Fatalf("chunk ids differ: %s vs %s", cid, id)
		}
		mustNum(t, c["created"], "created")
		mustStr(t, c["model"], "model")
		u, hasUsage := c["usage"]
		if wantUsage && !hasUsage {
			t.Fatalf("chunk %d: with include_usage every chunk has a usage key", i)
		}
		choices := mustArr(t, c["choices"], "choices")
		if len(choices) == 0 {
			if !finished || u == nil {
				t.Fatalf("chunk %d: an empty choices list is only for the final usage chunk", i)
			}
			res.usage = mustObj(t, u, "usage")
			sawUsage = true
			continue
		}
		if u != nil {
			t.Fatalf("chunk %d: usage before the usage chunk", i)
		}
		if finished {
			t.Fatalf("chunk %d after the finish_reason chunk", i)
		}
		ch := mustObj(t, choices[0], "choice")
		if mustNum(t, ch["index"], "index") != 0 {
			t.Fatal("choice index")
		}
		delta := mustObj(t, ch["delta"], "delta")
		if i == 0 && delta["role"] != "assistant" {
			t.Fatalf("first delta must carry role assistant: %v", delta)
		}
		if s, ok := delta["content"].(string); ok {
			res.text += s
			if s != "" {
				res.deltas++
			}
		}
		for _, tc := range arrOrNil(delta["tool_calls"]) {
			tcm := mustObj(t, tc, "tool_call")
			idx := mustNum(t, tcm["index"], "tool_call.index")
			if calls[idx] == nil {
				calls[idx] = &parsedCall{id: mustStr(t, tcm["id"], "tool_call.id")}
				argBuf[idx] = &strings.Builder{}
				if tcm["type"] != "function" {
					t.Fatalf("tool_call type %v", tcm["type"])
				}
			}
			if f, ok := tcm["function"].(map[string]any); ok {
				if n, ok := f["name"].(string); ok {
					calls[idx].name += n
				}
				if a, ok := f["arguments"].(string); ok {
					argBuf[idx].WriteString(a)
				}
			}
		}
		if fr, ok := ch["finish_reason"].(string); ok {
			res.stop, finished = fr, true
		}
	}
	if !finished {
		t.Fatal("no finish_reason chunk")
	}
	if wantUsage && !sawUsage {
		t.Fatal("include_usage set but no usage chunk")
	}
	for i := 0; i < len(calls); i++ {
		c := calls[i]
		c.args = decodeArgs(t, argBuf[i].String())
		res.calls = append(res.calls, *c)
	}
	return res
}

func arrOrNil(v any) []any {
	a, _ := v.([]any)
	return a
}

// readChat validates a non-streaming chat.completion.
func readChat(t *testing.T, body io.Reader) result {
	t.Helper()
	b, _ := io.ReadAll(body)
	c := decodeObj(t, string(b))
	if c["object"] != "chat.completion" {
		t.Fatalf("object %v", c["object"])
	}
	ch := mustObj(t, mustArr(t, c["choices"], "choices")[0], "choice")
	msg := mustObj(t, ch["message"], "message")
	if msg["role"] != "assistant" {
		t.Fatalf("role %v", msg["role"])
	}
	res := result{stop: mustStr(t, ch["finish_reason"], "finish_reason"), usage: mustObj(t, c["usage"], "usage")}
	if s, ok := msg["content"].(string); ok {
		res.text = s
	}
	for _, tc := range arrOrNil(msg["tool_calls"]) {
		tcm := mustObj(t, tc, "tool_call")
		f := mustObj(t, tcm["function"], "function")
		res.calls = append(res.calls, parsedCall{
			id: mustStr(t, tcm["id"], "id"), name: mustStr(t, f["name"], "name"),
			args: decodeArgs(t, mustStr(t, f["arguments"], "arguments")),
		})
	}
	for _, k := range []string{"prompt_tokens", "completion_tokens", "total_tokens"} {
		mustNum(t, res.usage[k], "usage."+k)
	}
	return res
}

// checkResponsesUsage checks the usage fields Codex requires.
func checkResponsesUsage(t *testing.T, u jsonObj) {
	t.Helper()
	in := mustNum(t, u["input_tokens"], "input_tokens")
	out := mustNum(t, u["output_tokens"], "output_tokens")
	if mustNum(t, u["total_tokens"], "total_tokens") != in+out {
		t.Fatal("total_tokens != input + output")
	}
	mustNum(t, mustObj(t, u["input_tokens_details"], "input_tokens_details")["cached_tokens"], "cached_tokens")
	mustNum(t, mustObj(t, u["output_tokens_details"], "output_tokens_details")["reasoning_tokens"], "reasoning_tokens")
}

// responsesOutput reads the output items of a completed response.
func responsesOutput(t *testing.T, resp jsonObj) result {
	t.Helper()
	var res result
	for _, it := range mustArr(t, resp["output"], "output") {
		item := mustObj(t, it, "item")
		mustStr(t, item["id"], "item.id")
		switch item["type"] {
		case "message":
			for _, p := range mustArr(t, item["content"], "content") {
				pm := mustObj(t, p, "part")
				if pm["type"] != "output_text" {
					t.Fatalf("part type %v", pm["type"])
				}
				res.text += mustStr(t, pm["text"], "text")
			}
		case "function_call":
			res.calls = append(res.calls, parsedCall{
				id: mustStr(t, item["call_id"], "call_id"), name: mustStr(t, item["name"], "name"),
				args: decodeArgs(t, mustStr(t, item["arguments"], "arguments")),
			})
		case "local_shell_call":
			action := mustObj(t, item["action"], "action")
			res.calls = append(res.calls, parsedCall{id: mustStr(t, item["call_id"], "call_id"), name: "local_shell", args: action})
		default:
			t.Fatalf("unexpected item type %v", item["type"])
		}
	}
	res.stop = mustStr(t, resp["status"], "status")
	return res
}

// readResponsesStream validates a Responses SSE stream the way Codex and
// the OpenAI SDK read it.
func readResponsesStream(t *testing.T, body io.Reader) result {
	t.Helper()
	events, err := parseSSE(body)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var completed jsonObj
	deltas := 0
	text := map[string]*strings.Builder{}
	args := map[string]*strings.Builder{}
	open := map[int]string{}
	for i, ev := range events {
		d := decodeObj(t, ev.data)
		if d["type"] != ev.name {
			t.Fatalf("event %d: name %q but type %v", i, ev.name, d["type"])
		}
		if seq := mustNum(t, d["sequence_number"], "sequence_number"); seq != i {
			t.Fatalf("event %d: sequence_number %d", i, seq)
		}
		names = append(names, ev.name)
		switch ev.name {
		case "response.created", "response.in_progress":
			r := mustObj(t, d["response"], "response")
			if r["object"] != "response" || r["status"] != "in_progress" {
				t.Fatalf("%s: %v", ev.name, r)
			}
		case "response.output_item.added":
			oi := mustNum(t, d["output_index"], "output_index")
			item := mustObj(t, d["item"], "item")
			open[oi] = mustStr(t, item["id"], "item.id")
			if item["status"] != "in_progress" {
				t.Fatalf("added item status %v", item["status"])
			}
		case "response.output_text.delta":
			id := mustStr(t, d["item_id"], "item_id")
			if text[id] == nil {
				text[id] = &strings.Builder{}
			}
			text[id].WriteString(mustStr(t, d["delta"], "delta"))
			deltas++
		case "response.output_text.done":
			id := mustStr(t, d["item_id"], "item_id")
			if got := mustStr(t, d["text"], "text"); text[id] == nil || text[id].String() != got {
				t.Fatalf("output_text.done text %q != deltas", got)
			}
		case "response.function_call_arguments.delta":
			id := mustStr(t, d["item_id"], "item_id")
			if args[id] == nil {
				args[id] = &strings.Builder{}
			}
			args[id].WriteString(mustStr(t, d["delta"], "delta"))
		case "response.function_call_arguments.done":
			id := mustStr(t, d["item_id"], "item_id")
			if got := mustStr(t, d["arguments"], "arguments"); args[id] == nil || args[id].String() != got {
				t.Fatalf("arguments.done %q != deltas", got)
			}
		case "response.output_item.done":
			oi := mustNum(t, d["output_index"], "output_index")
			item := mustObj(t, d["item"], "item")
			if open[oi] != item["id"] {
				t.Fatalf("output_item.done for an item never added: %v", item["id"])
			}
			if item["status"] != "completed" {
				t.Fatalf("done item status %v", item["status"])
			}
			delete(open, oi)
		case "response.completed":
			if i != len(events)-1 {
				t.Fatal("response.completed must be the last event")
			}
			completed = mustObj(t, d["response"], "response")
		}
	}
	if len(names) < 3 || names[0] != "response.created" || names[1] != "response.in_progress" {
		t.Fatalf("stream must start with created, in_progress: %v", names)
	}
	if completed == nil {
		t.Fatalf("no response.completed: %v", names)
	}
	if len(open) != 0 {
		t.Fatalf("items never done: %v", open)
	}
	mustStr(t, completed["id"], "response.id")
	checkResponsesUsage(t, mustObj(t, completed["usage"], "usage"))
	res := responsesOutput(t, completed)
	res.usage = completed["usage"].(map[string]any)
	res.deltas = deltas
	return res
}

func readResponses(t *testing.T, body io.Reader) result {
	t.Helper()
	b, _ := io.ReadAll(body)
	r := decodeObj(t, string(b))
	if r["object"] != "response" {
		t.Fatalf("object %v", r["object"])
	}
	checkResponsesUsage(t, mustObj(t, r["usage"], "usage"))
	res := responsesOutput(t, r)
	res.usage = r["usage"].(map[string]any)
	return res
}

// readMessagesStream validates an Anthropic Messages SSE stream.
func readMessagesStream(t *testing.T, body io.Reader) result {
	t.Helper()
	events, err := parseSSE(body)
	if err != nil {
		t.Fatal(err)
	}
	var res result
	var names []string
	type block struct {
		typ  string
		id   string
		name string
		buf  strings.Builder
	}
	var blocks []*block
	var cur *block
	state := "start"
	for i, ev := range events {
		d := decodeObj(t, ev.data)
		if d["type"] != ev.name {
			t.Fatalf("event %d: name %q but type %v", i, ev.name, d["type"])
		}
		names = append(names, ev.name)
		switch ev.name {
		case "message_start":
			if state != "start" {
				t.Fatalf("message_start at %d", i)
			}
			m := mustObj(t, d["message"], "message")
			if m["type"] != "message" || m["role"] != "assistant" || m["stop_reason"] != nil {
				t.Fatalf("message_start message %v", m)
			}
			mustStr(t, m["id"], "id")
			mustNum(t, mustObj(t, m["usage"], "usage")["input_tokens"], "usage.input_tokens")
			state = "between"
		case "ping":
		case "content_block_start":
			if state != "between" {
				t.Fatalf("content_block_start in state %s", state)
			}
			if idx := mustNum(t, d["index"], "index"); idx != len(blocks) {
				t.Fatalf("block index %d, want %d", idx, len(blocks))
			}
			cb := mustObj(t, d["content_block"], "content_block")
			cur = &block{typ: mustStr(t, cb["type"], "type")}
			switch cur.typ {
			case "text":
				if cb["text"] != "" {
					t.Fatal("text block must start empty")
				}
			case "tool_use":
				cur.id, cur.name = mustStr(t, cb["id"], "id"), mustStr(t, cb["name"], "name")
				if len(mustObj(t, cb["input"], "input")) != 0 {
					t.Fatal("tool_use block must start with empty input")
				}
			default:
				t.Fatalf("block type %s", cur.typ)
			}
			blocks = append(blocks, cur)
			state = "block"
		case "content_block_delta":
			if state != "block" || mustNum(t, d["index"], "index") != len(blocks)-1 {
				t.Fatalf("delta outside its block at %d", i)
			}
			delta := mustObj(t, d["delta"], "delta")
			switch delta["type"] {
			case "text_delta":
				if cur.typ != "text" {
					t.Fatal("text_delta in a non-text block")
				}
				cur.buf.WriteString(mustStr(t, delta["text"], "text"))
				res.deltas++
			case "input_json_delta":
				if cur.typ != "tool_use" {
					t.Fatal("input_json_delta in a non-tool block")
				}
				cur.buf.WriteString(mustStr(t, delta["partial_json"], "partial_json"))
			default:
				t.Fatalf("delta type %v", delta["type"])
			}
		case "content_block_stop":
			if state != "block" || mustNum(t, d["index"], "index") != len(blocks)-1 {
				t.Fatalf("content_block_stop out of place at %d", i)
			}
			state = "between"
		case "message_delta":
			if state != "between" {
				t.Fatalf("message_delta in state %s", state)
			}
			res.stop = mustStr(t, mustObj(t, d["delta"], "delta")["stop_reason"], "stop_reason")
			res.usage = mustObj(t, d["usage"], "usage")
			mustNum(t, res.usage["output_tokens"], "output_tokens")
			state = "delta"
		case "message_stop":
			if state != "delta" || i != len(events)-1 {
				t.Fatalf("message_stop out of place at %d", i)
			}
			state = "done"
		default:
			t.Fatalf("unexpected event %q", ev.name)
		}
	}
	if state != "done" {
		t.Fatalf("stream incomplete: %v", names)
	}
	if len(names) < 3 || names[2] != "ping" {
		t.Fatalf("want message_start, content_block_start, ping, …: %v", names)
	}
	for _, b := range blocks {
		switch b.typ {
		case "text":
			res.text += b.buf.String()
		case "tool_use":
			res.calls = append(res.calls, parsedCall{id: b.id, name: b.name, args: decodeArgs(t, b.buf.String())})
		}
	}
	return res
}

func readMessages(t *testing.T, body io.Reader) result {
	t.Helper()
	b, _ := io.ReadAll(body)
	m := decodeObj(t, string(b))
	if m["type"] != "message" || m["role"] != "assistant" {
		t.Fatalf("message %v", m)
	}
	res := result{stop: mustStr(t, m["stop_reason"], "stop_reason"), usage: mustObj(t, m["usage"], "usage")}
	for _, c := range mustArr(t, m["content"], "content") {
		cm := mustObj(t, c, "content block")
		switch cm["type"] {
		case "text":
			res.text += mustStr(t, cm["text"], "text")
		case "tool_use":
			res.calls = append(res.calls, parsedCall{id: mustStr(t, cm["id"], "id"), name: mustStr(t, cm["name"], "name"), args: mustObj(t, cm["input"], "input")})
		default:
			t.Fatalf("block type %v", cm["type"])
		}
	}
	return res
}

// geminiCandidate reads one GenerateContentResponse.
func geminiCandidate(t *testing.T, r jsonObj, res *result) (finish string) {
	t.Helper()
	cands := mustArr(t, r["candidates"], "candidates")
	if len(cands) != 1 {
		t.Fatalf("want one candidate, got %d", len(cands))
	}
	c := mustObj(t, cands[0], "candidate")
	content := mustObj(t, c["content"], "content")
	if content["role"] != "model" {
		t.Fatalf("content role %v", content["role"])
	}
	for _, p := range mustArr(t, content["parts"], "parts") {
		pm := mustObj(t, p, "part")
		if s, ok := pm["text"].(string); ok {
			res.text += s
		}
		if fc, ok := pm["functionCall"].(map[string]any); ok {
			res.calls = append(res.calls, parsedCall{name: mustStr(t, fc["name"], "name"), args: mustObj(t, fc["args"], "args")})
		}
	}
	u := mustObj(t, r["usageMetadata"], "usageMetadata")
	mustNum(t, u["promptTokenCount"], "promptTokenCount")
	if f, ok := c["finishReason"].(string); ok {
		return f
	}
	return ""
}

func readGeminiStream(t *testing.T, body io.Reader) result {
	t.Helper()
	events, err := parseSSE(body)
	if err != nil {
		t.Fatal(err)
	}
	var res result
	for i, ev := range events {
		if ev.name != "" {
			t.Fatalf("gemini SSE carries no event names")
		}
		before := res.text
		f := geminiCandidate(t, decodeObj(t, ev.data), &res)
		if res.text != before {
			res.deltas++
		}
		if last := i == len(events)-1; last != (f != "") {
			t.Fatalf("chunk %d: finishReason %q (only the last chunk has one)", i, f)
		}
		if f != "" {
			res.stop = f
			res.usage = decodeObj(t, ev.data)["usageMetadata"].(map[string]any)
			mustNum(t, res.usage["candidatesTokenCount"], "candidatesTokenCount")
		}
	}
	if res.stop == "" {
		t.Fatal("no finishReason")
	}
	return res
}

func readGemini(t *testing.T, body io.Reader) result {
	t.Helper()
	b, _ := io.ReadAll(body)
	var res result
	res.stop = geminiCandidate(t, decodeObj(t, string(b)), &res)
	if res.stop == "" {
		t.Fatal("no finishReason")
	}
	return res
}

// post sends a JSON body and returns the response; the caller closes it.
func post(t *testing.T, s *Server, path, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func newServer(t *testing.T, script string, opts ...Option) *Server {
	t.Helper()
	var sc *Script
	if script != "" {
		var err error
		sc, err = ParseScript([]byte(script))
		if err != nil {
			t.Fatal(err)
		}
	}
	s := New(sc, opts...)
	t.Cleanup(s.Close)
	return s
}

var _ = bytes.NewReader
