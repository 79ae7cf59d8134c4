package modelstub

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// convo is one request, described independently of its API.
type convo struct {
	prompt     string
	system     string
	toolName   string
	toolSchema jsonObj
	toolResult bool // history holds a call to the tool and its result
	stream     bool
	model      string
}

// apiCase knows how one API spells a convo and how a strict client reads
// the answer.
type apiCase struct {
	api      API
	path     func(c convo) string
	body     func(c convo) string
	read     func(t *testing.T, body io.Reader, c convo) result
	stopText string
	stopTool string
}

var apiCases = []apiCase{
	{
		api:  APIChat,
		path: func(convo) string { return "/v1/chat/completions" },
		body: func(c convo) string {
			var msgs []any
			if c.system != "" {
				msgs = append(msgs, jsonObj{"role": "system", "content": c.system})
			}
			msgs = append(msgs, jsonObj{"role": "user", "content": []any{jsonObj{"type": "text", "text": c.prompt}}})
			if c.toolResult {
				msgs = append(msgs,
					jsonObj{"role": "assistant", "content": nil, "tool_calls": []any{jsonObj{"id": "c1", "type": "function", "function": jsonObj{"name": c.toolName, "arguments": "{}"}}}},
					jsonObj{"role": "tool", "tool_call_id": "c1", "content": "TOOL OUTPUT"})
			}
			b := jsonObj{"model": c.model, "messages": msgs, "stream": c.stream}
			if c.stream {
				b["stream_options"] = jsonObj{"include_usage": true}
			}
			if c.toolName != "" {
				b["tools"] = []any{jsonObj{"type": "function", "function": jsonObj{"name": c.toolName, "parameters": c.toolSchema}}}
			}
			return mustJSON(b)
		},
		read: func(t *testing.T, body io.Reader, c convo) result {
			if c.stream {
				return readChatStream(t, body, true)
			}
			return readChat(t, body)
		},
		stopText: "stop", stopTool: "tool_calls",
	},
	{
		api:  APIResponses,
		path: func(convo) string { return "/v1/responses" },
		body: func(c convo) string {
			input := []any{jsonObj{"type": "message", "role": "user", "content": []any{jsonObj{"type": "input_text", "text": c.prompt}}}}
			if c.toolResult {
				input = append(input,
					jsonObj{"type": "function_call", "call_id": "c1", "name": c.toolName, "arguments": "{}"},
					jsonObj{"type": "function_call_output", "call_id": "c1", "output": "TOOL OUTPUT"})
			}
			b := jsonObj{"model": c.model, "input": input, "stream": c.stream, "instructions": c.system, "store": false}
			if c.toolName != "" {
				b["tools"] = []any{jsonObj{"type": "function", "name": c.toolName, "parameters": c.toolSchema, "strict": false}}
			}
			return mustJSON(b)
		},
		read: func(t *testing.T, body io.Reader, c convo) result {
			if c.stream {
				return readResponsesStream(t, body)
			}
			return readResponses(t, body)
		},
		stopText: "completed", stopTool: "completed",
	},
	{
		api:  APIMessages,
		path: func(convo) string { return "/v1/messages?beta=true" },
		body: func(c convo) string {
			msgs := []any{jsonObj{"role": "user", "content": []any{jsonObj{"type": "text", "text": c.prompt}}}}
			if c.toolResult {
				msgs = append(msgs,
					jsonObj{"role": "assistant", "content": []any{jsonObj{"type": "tool_use", "id": "t1", "name": c.toolName, "input": jsonObj{}}}},
					jsonObj{"role": "user", "content": []any{jsonObj{"type": "tool_result", "tool_use_id": "t1", "content": "TOOL OUTPUT"}}})
			}
			b := jsonObj{"model": c.model, "max_tokens": 1024, "messages": msgs, "stream": c.stream}
			if c.system != "" {
				b["system"] = []any{jsonObj{"type": "text", "text": c.system}}
			}
			if c.toolName != "" {
				b["tools"] = []any{jsonObj{"name": c.toolName, "input_schema": c.toolSchema}}
			}
			return mustJSON(b)
		},
		read: func(t *testing.T, body io.Reader, c convo) result {
			if c.stream {
				return readMessagesStream(t, body)
			}
			return readMessages(t, body)
		},
		stopText: "end_turn", stopTool: "tool_use",
	},
	{
		api: APIGemini,
		path: func(c convo) string {
			if c.stream {
				return "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
			}
			return "/v1beta/models/gemini-2.5-pro:generateContent"
		},
		body: func(c convo) string {
			contents := []any{jsonObj{"role": "user", "parts": []any{jsonObj{"text": c.prompt}}}}
			if c.toolResult {
				contents = append(contents,
					jsonObj{"role": "model", "parts": []any{jsonObj{"functionCall": jsonObj{"name": c.toolName, "args": jsonObj{}}}}},
					jsonObj{"role": "user", "parts": []any{jsonObj{"functionResponse": jsonObj{"name": c.toolName, "response": jsonObj{"output": "TOOL OUTPUT"}}}}})
			}
			b := jsonObj{"contents": contents}
			if c.system != "" {
				b["systemInstruction"] = jsonObj{"parts": []any{jsonObj{"text": c.system}}}
			}
			if c.toolName != "" {
				b["tools"] = []any{jsonObj{"functionDeclarations": []any{jsonObj{"name": c.toolName, "parametersJsonSchema": c.toolSchema}}}}
			}
			return mustJSON(b)
		},
		read: func(t *testing.T, body io.Reader, c convo) result {
			if c.stream {
				return readGeminiStream(t, body)
			}
			return readGemini(t, body)
		},
		stopText: "STOP", stopTool: "STOP",
	},
}

func (ac apiCase) name(stream bool) string {
	if stream {
		return string(ac.api) + "/stream"
	}
	return string(ac.api)
}

// do sends c through API ac and reads the answer strictly.
func (ac apiCase) do(t *testing.T, s *Server, c convo) result {
	t.Helper()
	if c.model == "" {
		c.model = "stub-model"
	}
	resp := post(t, s, ac.path(c), ac.body(c), "Authorization", "Bearer k", "x-api-key", "k", "x-goog-api-key", "k")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if c.stream && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream content type %q", resp.Header.Get("Content-Type"))
	}
	return ac.read(t, resp.Body, c)
}

func TestDefaultTextEveryAPI(t *testing.T) {
	s := newServer(t, "")
	for _, ac := range apiCases {
		for _, stream := range []bool{false, true} {
			t.Run(ac.name(stream), func(t *testing.T) {
				res := ac.do(t, s, convo{prompt: "What is 2+2?", stream: stream})
				if res.text != DefaultText || res.stop != ac.stopText || len(res.calls) != 0 {
					t.Fatalf("got %+v", res)
				}
			})
		}
	}
}

func TestChunkedTextEveryAPI(t *testing.T) {
	s := newServer(t, `
rules:
  - match: {contains: SLOW}
    reply: {text: "one two three four five", chunks: 5, interval_ms: 1}
`)
	for _, ac := range apiCases {
		for _, stream := range []bool{false, true} {
			t.Run(ac.name(stream), func(t *testing.T) {
				res := ac.do(t, s, convo{prompt: "be SLOW", stream: stream})
				if res.text != "one two three four five" {
					t.Fatalf("text %q", res.text)
				}
				if want := map[bool]int{false: 0, true: 5}[stream]; res.deltas != want {
					t.Fatalf("deltas %d, want %d", res.deltas, want)
				}
			})
		}
	}
}

// Tool schemas as harnesses send them.
var (
	schemaStringCommand = jsonObj{"type": "object", "properties": jsonObj{"command": jsonObj{"type": "string"}, "timeout": jsonObj{"type": "number"}}, "required": []any{"command"}}
	schemaArrayCommand  = jsonObj{"type": "object", "properties": jsonObj{"command": jsonObj{"type": "array", "items": jsonObj{"type": "string"}}, "workdir": jsonObj{"type": "string"}}, "required": []any{"command"}}
	schemaCodexExec     = jsonObj{"type": "object", "properties": jsonObj{"cmd": jsonObj{"type": "string"}, "workdir": jsonObj{"type": "string"}, "yield_time_ms": jsonObj{"type": "number"}}, "required": []any{"cmd"}}
	schemaOpenCodeBash  = jsonObj{"type": "object", "properties": jsonObj{"command": jsonObj{"type": "string"}, "description": jsonObj{"type": "string"}, "workdir": jsonObj{"type": "string"}}, "required": []any{"command", "description"}}
	schemaQwenShell     = jsonObj{"type": "object", "properties": jsonObj{"command": jsonObj{"type": "string"}, "is_background": jsonObj{"type": "boolean"}, "description": jsonObj{"type": "string"}}, "required": []any{"command", "is_background"}}
	// Droid's Execute: a sentence-cased summary (pattern), a risk level it
	// trusts (low runs unasked) and the reason for it, all required.
	schemaDroidExecute = jsonObj{"type": "object", "properties": jsonObj{
		"summary":         jsonObj{"type": "string", "pattern": `^[A-Z]\S*(?:\s+\S+){2,7}$`},
		"command":         jsonObj{"type": "string"},
		"timeout":         jsonObj{"type": "number"},
		"riskLevelReason": jsonObj{"type": "string"},
		"riskLevel":       jsonObj{"type": "string", "enum": []any{"high", "medium", "low"}},
	}, "required": []any{"summary", "command", "riskLevelReason", "riskLevel"}}
	schemaGeminiUpper = jsonObj{"type": "OBJECT", "properties": jsonObj{"command": jsonObj{"type": "ARRAY", "items": jsonObj{"type": "STRING"}}}, "required": []any{"command"}}
)

func TestToolCallShapesEveryAPI(t *testing.T) {
	s := newServer(t, `
rules:
  - match: {contains: STUBTOOL}
    reply: {tool_call: {command: "echo STUB_TOOL_OK"}}
`)
	const cmdline = "echo STUB_TOOL_OK"
	argv := []any{"bash", "-lc", cmdline}
	shapes := []struct {
		tool   string
		schema jsonObj
		want   jsonObj
	}{
		{"Bash", schemaStringCommand, jsonObj{"command": cmdline}},
		{"execute", schemaStringCommand, jsonObj{"command": cmdline}}, // Deep Agents (LocalShellBackend)
		{"shell", schemaArrayCommand, jsonObj{"command": argv}},
		{"exec_command", schemaCodexExec, jsonObj{"cmd": cmdline}},
		{"bash", schemaOpenCodeBash, jsonObj{"command": cmdline, "description": "Requested by the Fabric model stub script"}},
		{"run_shell_command", schemaQwenShell, jsonObj{"command": cmdline, "is_background": false}},
		{"exec", schemaGeminiUpper, jsonObj{"command": argv}},
		{"exec", nil, jsonObj{"command": cmdline}},
		{"Execute", schemaDroidExecute, jsonObj{"command": cmdline, "summary": "Run the scripted stub command", "riskLevel": "low", "riskLevelReason": "Requested by the Fabric model stub script"}},
	}
	for _, ac := range apiCases {
		for _, stream := range []bool{false, true} {
			for _, sh := range shapes {
				t.Run(fmt.Sprintf("%s/%s/%d", ac.name(stream), sh.tool, len(sh.want)), func(t *testing.T) {
					res := ac.do(t, s, convo{prompt: "please STUBTOOL", toolName: sh.tool, toolSchema: sh.schema, stream: stream})
					if res.stop != ac.stopTool || len(res.calls) != 1 {
						t.Fatalf("want one tool call, got %+v", res)
					}
					c := res.calls[0]
					if c.name != sh.tool {
						t.Fatalf("called %q, want %q", c.name, sh.tool)
					}
					if diff := cmp.Diff(sh.want, c.args); diff != "" {
						t.Fatalf("arguments (-want +got):\n%s", diff)
					}
					if ac.api != APIGemini && c.id == "" {
						t.Fatal("call without an id")
					}
				})
			}
		}
	}
}

func TestToolCallFallsThroughOnceResultPresent(t *testing.T) {
	s := newServer(t, `
rules:
  - match: {contains: STUBTOOL}
    reply: {tool_call: {command: "echo hi"}}
  - match: {contains: STUBTOOL}
    reply: {text: "the command ran"}
`)
	for _, ac := range apiCases {
		for _, stream := range []bool{false, true} {
			t.Run(ac.name(stream), func(t *testing.T) {
				c := convo{prompt: "STUBTOOL now", toolName: "bash", toolSchema: schemaStringCommand, stream: stream}
				if res := ac.do(t, s, c); len(res.calls) != 1 {
					t.Fatalf("first request: want a call, got %+v", res)
				}
				c.toolResult = true
				res := ac.do(t, s, c)
				if len(res.calls) != 0 || res.text != "the command ran" || res.stop != ac.stopText {
					t.Fatalf("after the tool result: got %+v", res)
				}
			})
		}
	}
	recs := s.Requests()
	for i, r := range recs {
		wantRule := i % 2
		if r.Rule != wantRule || r.ToolResult != (i%2 == 1) {
			t.Fatalf("record %d: rule %d tool_result %v", i, r.Rule, r.ToolResult)
		}
	}
}

func TestToolCallWithoutShellToolFallsThrough(t *testing.T) {
	s := newServer(t, `
rules:
  - match: {contains: STUBTOOL}
    reply: {tool_call: {command: "echo hi"}}
`)
	for _, ac := range apiCases {
		res := ac.do(t, s, convo{prompt: "STUBTOOL", toolName: "read_file", toolSchema: jsonObj{"type": "object"}})
		if len(res.calls) != 0 || res.text != DefaultText {
			t.Fatalf("%s: got %+v", ac.api, res)
		}
	}
}

func TestToolCallTextAndNamedTool(t *testing.T) {
	s := newServer(t, `
rules:
  - match: {contains: WRITE}
    reply:
      text: "Writing it."
      tool_call: {tool: write_file, args: {path: a.txt, content: hello}}
`)
	for _, ac := range apiCases {
		for _, stream := range []bool{false, true} {
			t.Run(ac.name(stream), func(t *testing.T) {
				res := ac.do(t, s, convo{prompt: "WRITE", toolName: "write_file", toolSchema: jsonObj{"type": "object", "properties": jsonObj{"path": jsonObj{"type": "string"}, "content": jsonObj{"type": "string"}}, "required": []any{"path", "content"}}, stream: stream})
				if res.text != "Writing it." || len(res.calls) != 1 || res.calls[0].name != "write_file" {
					t.Fatalf("got %+v", res)
				}
				if diff := cmp.Diff(jsonObj{"path": "a.txt", "content": "hello"}, res.calls[0].args); diff != "" {
					t.Fatal(diff)
				}
			})
		}
	}
}

func TestResponsesLocalShell(t *testing.T) {
	s := newServer(t, `
rules:
  - match: {contains: STUBTOOL}
    reply: {tool_call: {command: "ls", workdir: /tmp}}
`)
	for _, stream := range []bool{false, true} {
		body := mustJSON(jsonObj{"model": "m", "input": "STUBTOOL", "stream": stream, "tools": []any{jsonObj{"type": "local_shell"}}})
		resp := post(t, s, "/v1/responses", body)
		var res result
		if stream {
			res = readResponsesStream(t, resp.Body)
		} else {
			res = readResponses(t, resp.Body)
		}
		resp.Body.Close()
		if len(res.calls) != 1 {
			t.Fatalf("got %+v", res)
		}
		want := jsonObj{"type": "exec", "command": []any{"bash", "-lc", "ls"}, "env": jsonObj{}, "working_directory": "/tmp"}
		if diff := cmp.Diff(want, res.calls[0].args); diff != "" {
			t.Fatal(diff)
		}
	}
}

func TestResponsesStringInputAndToolResultOnly(t *testing.T) {
	s := newServer(t, `
rules:
  - match: {api: responses}
    reply: {tool_call: {command: "true"}}
`)
	// A continuation that carries only the tool output gets text.
	body := mustJSON(jsonObj{"model": "m", "previous_response_id": "resp_1", "input": []any{
		jsonObj{"type": "function_call_output", "call_id": "c1", "output": "ok"},
	}, "tools": []any{jsonObj{"type": "function", "name": "shell", "parameters": schemaArrayCommand}}})
	resp := post(t, s, "/v1/responses", body)
	res := readResponses(t, resp.Body)
	resp.Body.Close()
	if len(res.calls) != 0 || res.text != DefaultText {
		t.Fatalf("got %+v", res)
	}
}

func TestGeminiStreamWithoutSSE(t *testing.T) {
	s := newServer(t, `
rules:
  - reply: {text: "abcd", chunks: 2}
    match: {api: gemini}
`)
	resp := post(t, s, "/v1beta/models/g:streamGenerateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	b := readAll(t, resp)
	var chunks []jsonObj
	if err := json.Unmarshal(b, &chunks); err != nil || len(chunks) != 2 {
		t.Fatalf("want a JSON array of 2 chunks: %v %s", err, b)
	}
	var res result
	if f := geminiCandidate(t, chunks[0], &res); f != "" {
		t.Fatal("first chunk must not finish")
	}
	if f := geminiCandidate(t, chunks[1], &res); f != "STOP" || res.text != "abcd" {
		t.Fatalf("got %q %q", f, res.text)
	}
}

func TestCountTokens(t *testing.T) {
	s := newServer(t, `
rules:
  - match: {contains: hi}
    reply: {text: never}
`)
	resp := post(t, s, "/v1/messages/count_tokens?beta=true", `{"model":"c","messages":[{"role":"user","content":"hi"}]}`)
	m := decodeObj(t, string(readAll(t, resp)))
	if n := mustNum(t, m["input_tokens"], "input_tokens"); n < 1 || len(m) != 1 {
		t.Fatalf("got %v", m)
	}
	resp = post(t, s, "/v1beta/models/g:countTokens", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	m = decodeObj(t, string(readAll(t, resp)))
	if n := mustNum(t, m["totalTokens"], "totalTokens"); n < 1 {
		t.Fatalf("got %v", m)
	}
	for _, r := range s.Requests() {
		if !r.Side || r.Rule != -1 || r.Reply != "count" {
			t.Fatalf("count request recorded as %+v", r)
		}
	}
}

func TestModelsHeadHealth(t *testing.T) {
	s := newServer(t, "rules:\n  - {match: {model: special}, reply: {text: x}}\n")
	get := func(path string) jsonObj {
		resp, err := s.Client().Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		return decodeObj(t, string(readAll(t, resp)))
	}
	m := get("/v1/models")
	if m["object"] != "list" {
		t.Fatalf("%v", m)
	}
	var ids []string
	for _, d := range mustArr(t, m["data"], "data") {
		dm := mustObj(t, d, "model")
		ids = append(ids, mustStr(t, dm["id"], "id"))
		if dm["object"] != "model" || dm["type"] != "model" {
			t.Fatalf("model entry %v", dm)
		}
	}
	if diff := cmp.Diff([]string{"stub-model", "special"}, ids); diff != "" {
		t.Fatal(diff)
	}
	if one := get("/v1/models/special"); one["id"] != "special" {
		t.Fatalf("%v", one)
	}
	if g := get("/v1beta/models"); len(mustArr(t, g["models"], "models")) != 2 {
		t.Fatalf("%v", g)
	}
	if h := get("/health"); h["status"] != "ok" {
		t.Fatalf("%v", h)
	}
	for _, p := range []string{"/api/hello", "/", "/v1/messages"} {
		req, _ := http.NewRequest(http.MethodHead, s.URL()+p, nil)
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("HEAD %s: %d", p, resp.StatusCode)
		}
	}
	resp, err := s.Client().Get(s.URL() + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	if b := readAll(t, resp); resp.StatusCode != 404 || !strings.Contains(string(b), `"error"`) {
		t.Fatalf("unknown path: %d %s", resp.StatusCode, b)
	}
	resp, err = s.Client().Get(s.URL() + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, resp); resp.StatusCode != 405 {
		t.Fatalf("GET chat: %d", resp.StatusCode)
	}
}
