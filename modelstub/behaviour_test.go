package modelstub

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

func TestErrorRepliesInEachAPIFormat(t *testing.T) {
	s := newServer(t, `
rules:
  - match: {contains: RATE}
    reply: {error: {status: 429, message: "slow down"}}
  - match: {contains: BOOM, times: 1}
    reply: {error: {status: 500}}
  - match: {contains: QUOTA}
    reply: {error: {status: 429, type: insufficient_quota, retry_after: 7, headers: {x-should-retry: "false"}}}
`)
	type check func(t *testing.T, m jsonObj)
	formats := map[API]struct{ rate, boom, quota check }{
		APIChat: {
			rate: func(t *testing.T, m jsonObj) {
				e := mustObj(t, m["error"], "error")
				if e["message"] != "slow down" || e["type"] != "rate_limit_error" || e["code"] != "rate_limit_exceeded" {
					t.Fatalf("%v", e)
				}
			},
			boom: func(t *testing.T, m jsonObj) {
				if e := mustObj(t, m["error"], "error"); e["type"] != "server_error" {
					t.Fatalf("%v", e)
				}
			},
			quota: func(t *testing.T, m jsonObj) {
				if e := mustObj(t, m["error"], "error"); e["type"] != "insufficient_quota" || e["code"] != "insufficient_quota" {
					t.Fatalf("%v", e)
				}
			},
		},
		APIMessages: {
			rate: func(t *testing.T, m jsonObj) {
				e := mustObj(t, m["error"], "error")
				if m["type"] != "error" || e["type"] != "rate_limit_error" || e["message"] != "slow down" {
					t.Fatalf("%v", m)
				}
			},
			boom: func(t *testing.T, m jsonObj) {
				if e := mustObj(t, m["error"], "error"); m["type"] != "error" || e["type"] != "api_error" {
					t.Fatalf("%v", m)
				}
			},
			quota: func(t *testing.T, m jsonObj) {
				if e := mustObj(t, m["error"], "error"); e["type"] != "insufficient_quota" {
					t.Fatalf("%v", m)
				}
			},
		},
		APIGemini: {
			rate: func(t *testing.T, m jsonObj) {
				e := mustObj(t, m["error"], "error")
				if mustNum(t, e["code"], "code") != 429 || e["status"] != "RESOURCE_EXHAUSTED" || e["message"] != "slow down" {
					t.Fatalf("%v", e)
				}
			},
			boom: func(t *testing.T, m jsonObj) {
				if e := mustObj(t, m["error"], "error"); e["status"] != "INTERNAL" || mustNum(t, e["code"], "code") != 500 {
					t.Fatalf("%v", e)
				}
			},
			quota: func(t *testing.T, m jsonObj) {
				if e := mustObj(t, m["error"], "error"); e["status"] != "insufficient_quota" {
					t.Fatalf("%v", e)
				}
			},
		},
	}
	formats[APIResponses] = formats[APIChat]
	for _, ac := range apiCases {
		f := formats[ac.api]
		for _, stream := range []bool{false, true} {
			t.Run(ac.name(stream), func(t *testing.T) {
				c := convo{prompt: "RATE", stream: stream, model: "m"}
				resp := post(t, s, ac.path(c), ac.body(c))
				if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
					t.Fatalf("429: status %d retry-after %q", resp.StatusCode, resp.Header.Get("Retry-After"))
				}
				f.rate(t, decodeObj(t, string(readAll(t, resp))))

				c.prompt = "QUOTA"
				resp = post(t, s, ac.path(c), ac.body(c))
				if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || resp.Header.Get("X-Should-Retry") != "false" {
					t.Fatalf("quota: status %d retry-after %q", resp.StatusCode, resp.Header.Get("Retry-After"))
				}
				f.quota(t, decodeObj(t, string(readAll(t, resp))))
			})
		}
	}
	// times: 1 — the first BOOM fails, later ones get the default text.
	for i, ac := range apiCases {
		c := convo{prompt: "BOOM", model: "m"}
		resp := post(t, s, ac.path(c), ac.body(c))
		if i == 0 {
			if resp.StatusCode != 500 || resp.Header.Get("Retry-After") != "" {
				t.Fatalf("500: status %d retry-after %q", resp.StatusCode, resp.Header.Get("Retry-After"))
			}
			formats[ac.api].boom(t, decodeObj(t, string(readAll(t, resp))))
			continue
		}
		if resp.StatusCode != 200 {
			t.Fatalf("%s after times exhausted: %d", ac.api, resp.StatusCode)
		}
		resp.Body.Close()
	}
}

func TestStallReleasedWhenClientCancels(t *testing.T) {
	s := newServer(t, `
rules:
  - match: {contains: HANG}
    reply: {stall: true}
`)
	for _, ac := range apiCases {
		for _, stream := range []bool{false, true} {
			t.Run(ac.name(stream), func(t *testing.T) {
				s.ClearRequests()
				c := convo{prompt: "HANG", stream: stream, model: "m"}
				ctx, cancel := context.WithCancel(context.Background())
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+ac.path(c), strings.NewReader(ac.body(c)))
				done := make(chan error, 1)
				go func() {
					resp, err := s.Client().Do(req)
					if err == nil {
						resp.Body.Close()
						err = errors.New("got a response from a stall")
					}
					done <- err
				}()
				testproc.Eventually(t, 5*time.Second, "the stalled request to be recorded", func() bool { return len(s.Requests()) == 1 })
				select {
				case err := <-done:
					t.Fatalf("stall answered early: %v", err)
				case <-time.After(50 * time.Millisecond):
				}
				cancel()
				if err := <-done; !errors.Is(err, context.Canceled) {
					t.Fatalf("want context.Canceled, got %v", err)
				}
				testproc.Eventually(t, 5*time.Second, "the handler to see the client go", func() bool {
					r := s.Requests()[0]
					return r.Outcome == "client_gone" && r.Status == 0
				})
			})
		}
	}
}

func TestStallMSThenAnswers(t *testing.T) {
	s := newServer(t, `
rules:
  - match: {contains: WAIT}
    reply: {stall_ms: 80, text: late}
`)
	start := time.Now()
	res := apiCases[0].do(t, s, convo{prompt: "WAIT"})
	if d := time.Since(start); d < 80*time.Millisecond || res.text != "late" {
		t.Fatalf("after %v: %+v", d, res)
	}
}

func TestCloseReleasesStalls(t *testing.T) {
	sc, _ := ParseScript([]byte("rules:\n  - {match: {contains: HANG}, reply: {stall: true}}\n"))
	s := New(sc)
	c := convo{prompt: "HANG", model: "m"}
	done := make(chan error, 1)
	go func() {
		resp, err := s.Client().Post(s.URL()+apiCases[2].path(c), "application/json", strings.NewReader(apiCases[2].body(c)))
		if err == nil {
			resp.Body.Close()
			err = errors.New("got a response")
		}
		done <- err
	}()
	testproc.Eventually(t, 5*time.Second, "the stall", func() bool { return len(s.Requests()) == 1 })
	start := time.Now()
	s.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Close took %v", d)
	}
	if err := <-done; err == nil {
		t.Fatal("want an error from a stall cut by Close")
	}
	if r := s.Requests()[0]; r.Outcome != "server_closed" {
		t.Fatalf("outcome %q", r.Outcome)
	}
}

func TestSlowStreamCancelledMidway(t *testing.T) {
	s := newServer(t, `
rules:
  - match: {contains: SLOW}
    reply: {text: "0123456789abcdefghij", chunks: 20, interval_ms: 200}
`)
	for _, ac := range apiCases {
		t.Run(string(ac.api), func(t *testing.T) {
			s.ClearRequests()
			c := convo{prompt: "SLOW", stream: true, model: "m"}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+ac.path(c), strings.NewReader(ac.body(c)))
			resp, err := s.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 256)
			if _, err := resp.Body.Read(buf); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			cancel()
			resp.Body.Close()
			testproc.Eventually(t, 5*time.Second, "the stream to stop", func() bool { return s.Requests()[0].Outcome == "client_gone" })
			if d := time.Since(start); d > time.Second {
				t.Fatalf("stream kept going for %v after the cancel", d)
			}
			if r := s.Requests()[0]; r.Status != 200 {
				t.Fatalf("status %d", r.Status)
			}
		})
	}
}

func TestNonStreamingWaitsTheChunkIntervals(t *testing.T) {
	s := newServer(t, "rules:\n  - {match: {contains: SLOW}, reply: {text: abcd, chunks: 4, interval_ms: 30}}\n")
	start := time.Now()
	res := apiCases[2].do(t, s, convo{prompt: "SLOW"})
	if d := time.Since(start); d < 90*time.Millisecond || res.text != "abcd" {
		t.Fatalf("after %v: %+v", d, res)
	}
}

func TestChunkedAndGzipRequestBodies(t *testing.T) {
	s := newServer(t, "rules:\n  - {match: {contains: CHUNKED}, reply: {text: got it}}\n")
	body := apiCases[0].body(convo{prompt: "CHUNKED " + strings.Repeat("x", 100_000), model: "m"})
	pr, pw := io.Pipe()
	go func() {
		for i := 0; i < len(body); i += 1000 {
			_, _ = pw.Write([]byte(body[i:min(i+1000, len(body))]))
		}
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/chat/completions", pr)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res := readChat(t, resp.Body); res.text != "got it" {
		t.Fatalf("%+v", res)
	}
	resp.Body.Close()
	if r := s.Requests()[0]; r.BodyBytes != len(body) {
		t.Fatalf("recorded %d bytes of %d", r.BodyBytes, len(body))
	}

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(body))
	zw.Close()
	req, _ = http.NewRequest(http.MethodPost, s.URL()+"/v1/chat/completions", &gz)
	req.Header.Set("Content-Encoding", "gzip")
	resp, err = s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res := readChat(t, resp.Body); res.text != "got it" {
		t.Fatalf("%+v", res)
	}
	resp.Body.Close()
}

func TestBadBodies(t *testing.T) {
	s := newServer(t, "", WithMaxBodyBytes(1024))
	big := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}]}`
	cases := []struct {
		path, body string
		status     int
		format     func(jsonObj) bool
	}{
		{"/v1/chat/completions", big, 413, func(m jsonObj) bool { return obj(m["error"])["code"] == "request_too_large" }},
		{"/v1/messages", big, 413, func(m jsonObj) bool { return m["type"] == "error" && obj(m["error"])["type"] == "request_too_large" }},
		{"/v1beta/models/g:generateContent", big, 413, func(m jsonObj) bool { return obj(m["error"])["status"] == "INVALID_ARGUMENT" }},
		{"/v1/responses", `{not json`, 400, func(m jsonObj) bool { return obj(m["error"])["type"] == "invalid_request_error" }},
		{"/v1/messages", `[1,2]`, 400, func(m jsonObj) bool { return obj(m["error"])["type"] == "invalid_request_error" }},
		{"/v1/messages", ``, 400, func(m jsonObj) bool { return m["type"] == "error" }},
	}
	for _, c := range cases {
		resp := post(t, s, c.path, c.body)
		b := readAll(t, resp)
		if resp.StatusCode != c.status || !c.format(decodeObj(t, string(b))) {
			t.Errorf("%s %.20q: %d %s", c.path, c.body, resp.StatusCode, b)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", strings.NewReader("{}"))
	req.Header.Set("Content-Encoding", "zstd")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, resp); resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("zstd: %d", resp.StatusCode)
	}
}

const secretKey = "sk-fabric-secret-0123456789"

func TestRecordingNeverHoldsTheKey(t *testing.T) {
	s := newServer(t, "rules:\n  - {name: tooly, match: {contains: STUBTOOL}, reply: {tool_call: {command: ls}}}\n", WithExpectKey(secretKey))
	c := convo{prompt: "STUBTOOL", toolName: "Bash", toolSchema: schemaStringCommand, model: "claude-x"}
	resp := post(t, s, "/v1/messages?beta=true", apiCases[2].body(c),
		"x-api-key", secretKey, "anthropic-version", "2023-06-01", "User-Agent", "claude-cli/2.1.332 (external, sdk-cli)",
		"X-Custom-Token", secretKey)
	readAll(t, resp)
	// The key in the query (older Gemini clients) and even in the body.
	resp = post(t, s, "/v1beta/models/gemini-2.5-pro:generateContent?key="+secretKey,
		`{"contents":[{"role":"user","parts":[{"text":"my key is `+secretKey+`"}]}]}`)
	readAll(t, resp)
	resp = post(t, s, "/v1/chat/completions", apiCases[0].body(convo{prompt: "hi", model: "m"}), "Authorization", "Bearer "+secretKey)
	readAll(t, resp)

	hresp, err := s.Client().Get(s.URL() + "/_requests")
	if err != nil {
		t.Fatal(err)
	}
	raw := readAll(t, hresp)
	if bytes.Contains(raw, []byte(secretKey)) || bytes.Contains(raw, []byte("0123456789")) {
		t.Fatalf("the key leaked into /_requests: %s", raw)
	}
	var recs []Request
	if err := json.Unmarshal(raw, &recs); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.Requests(), recs); diff != "" {
		t.Fatalf("/_requests differs from Requests(): %s", diff)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	a := recs[0]
	if a.Seq != 1 || a.Method != "POST" || a.Path != "/v1/messages" || a.Query != "beta=true" || a.API != APIMessages ||
		a.Endpoint != "messages" || a.Model != "claude-x" || a.AuthHeader != "x-api-key" || !a.AuthPresent ||
		!a.KeyChecked || !a.KeyOK || a.Rule != 0 || a.RuleName != "tooly" || a.Reply != "tool_call" || a.Status != 200 ||
		a.Outcome != "completed" || a.UserAgent != "claude-cli/2.1.332 (external, sdk-cli)" || a.UserText != "STUBTOOL" ||
		a.Headers["anthropic-version"] != "2023-06-01" || a.Headers["x-api-key"] != "[redacted]" ||
		a.Headers["x-custom-token"] != "[redacted]" || len(a.Body) == 0 || !cmp.Equal(a.Tools, []string{"Bash"}) {
		t.Fatalf("record: %+v", a)
	}
	g := recs[1]
	if g.AuthHeader != "query:key" || !g.KeyOK || g.Model != "gemini-2.5-pro" || !strings.Contains(g.Query, "redacted") ||
		!strings.Contains(string(g.Body), "[redacted]") || !strings.Contains(g.UserText, "[redacted]") {
		t.Fatalf("gemini record: %+v", g)
	}
	if c := recs[2]; c.AuthHeader != "authorization" || c.Headers["authorization"] != "[redacted]" {
		t.Fatalf("chat record: %+v", c)
	}

	// since and DELETE.
	hresp, _ = s.Client().Get(s.URL() + "/_requests?since=2")
	var tail []Request
	json.Unmarshal(readAll(t, hresp), &tail)
	if len(tail) != 1 || tail[0].Seq != 3 {
		t.Fatalf("since=2: %+v", tail)
	}
	req, _ := http.NewRequest(http.MethodDelete, s.URL()+"/_requests", nil)
	dresp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, dresp)
	if dresp.StatusCode != 204 || len(s.Requests()) != 0 {
		t.Fatalf("DELETE: %d, %d left", dresp.StatusCode, len(s.Requests()))
	}
}

func TestExpectKey(t *testing.T) {
	s := newServer(t, "", WithExpectKey(secretKey))
	cases := []struct {
		ac        apiCase
		hdr       []string
		ok        bool
		where     string
		errFormat func(jsonObj) bool
	}{
		{apiCases[0], nil, false, "", func(m jsonObj) bool { return obj(m["error"])["code"] == "invalid_api_key" }},
		{apiCases[0], []string{"Authorization", "Bearer wrong"}, false, "authorization", nil},
		{apiCases[0], []string{"x-goog-api-key", secretKey}, false, "x-goog-api-key", nil},
		{apiCases[0], []string{"Authorization", "Bearer " + secretKey}, true, "authorization", nil},
		{apiCases[1], []string{"api-key", secretKey}, true, "api-key", nil},
		{apiCases[2], []string{"Authorization", "Bearer " + secretKey}, true, "authorization", nil},
		{apiCases[2], []string{"x-api-key", "nope"}, false, "x-api-key", func(m jsonObj) bool {
			return m["type"] == "error" && obj(m["error"])["type"] == "authentication_error"
		}},
		{apiCases[3], []string{"x-goog-api-key", secretKey}, true, "x-goog-api-key", nil},
		{apiCases[3], []string{"Authorization", "Bearer " + secretKey}, false, "authorization", func(m jsonObj) bool {
			return obj(m["error"])["status"] == "UNAUTHENTICATED"
		}},
	}
	for i, c := range cases {
		s.ClearRequests()
		cv := convo{prompt: "hi", model: "m"}
		resp := post(t, s, c.ac.path(cv), c.ac.body(cv), c.hdr...)
		b := readAll(t, resp)
		if (resp.StatusCode == 200) != c.ok {
			t.Fatalf("case %d: status %d: %s", i, resp.StatusCode, b)
		}
		if !c.ok && resp.StatusCode != 401 {
			t.Fatalf("case %d: status %d", i, resp.StatusCode)
		}
		if c.errFormat != nil && !c.errFormat(decodeObj(t, string(b))) {
			t.Fatalf("case %d: error body %s", i, b)
		}
		r := s.Requests()[0]
		if r.KeyOK != c.ok || !r.KeyChecked || r.AuthHeader != c.where || r.AuthPresent != (c.where != "") {
			t.Fatalf("case %d: record %+v", i, r)
		}
		if !c.ok && len(r.Body) == 0 {
			t.Fatalf("case %d: a rejected request's body is still recorded", i)
		}
	}
	// HEAD and health need no key.
	req, _ := http.NewRequest(http.MethodHead, s.URL()+"/api/hello", nil)
	resp, err := s.Client().Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("HEAD: %v %v", err, resp)
	}
	resp.Body.Close()
}

func TestSideRequestsDoNotConsumeRules(t *testing.T) {
	s := newServer(t, `
rules:
  - name: first-turn
    match: {nth: 1}
    reply: {text: "main answer"}
  - name: titles
    match: {side: true, contains: TITLEME}
    reply: {text: "Scripted title"}
`)
	titleSystem := "You are a title generator. You output ONLY a thread title. Nothing else."
	// OpenCode asks for a title first, with no tools.
	res := apiCases[0].do(t, s, convo{system: titleSystem, prompt: "What is 2+2?"})
	if res.text != DefaultSideText {
		t.Fatalf("title request: %+v", res)
	}
	// The main request still gets the nth: 1 rule.
	res = apiCases[0].do(t, s, convo{prompt: "What is 2+2?", toolName: "bash", toolSchema: schemaStringCommand})
	if res.text != "main answer" {
		t.Fatalf("main request: %+v", res)
	}
	// A side rule answers a side request.
	res = apiCases[2].do(t, s, convo{system: "Summarize this conversation in a title", prompt: "TITLEME"})
	if res.text != "Scripted title" {
		t.Fatalf("side rule: %+v", res)
	}
	// Gemini's router: structured output answered with a schema-valid value.
	routerBody := mustJSON(jsonObj{
		"contents":         []any{jsonObj{"role": "user", "parts": []any{jsonObj{"text": "route: What is 2+2?"}}}},
		"generationConfig": jsonObj{"responseMimeType": "application/json", "responseJsonSchema": jsonObj{"type": "object", "properties": jsonObj{"reasoning": jsonObj{"type": "string"}, "model_choice": jsonObj{"type": "string", "enum": []any{"flash", "pro"}}}, "required": []any{"reasoning", "model_choice"}}},
	})
	resp := post(t, s, "/v1beta/models/gemini-2.5-flash-lite:generateContent", routerBody)
	res = readGemini(t, resp.Body)
	resp.Body.Close()
	var routed jsonObj
	if err := json.Unmarshal([]byte(res.text), &routed); err != nil || routed["model_choice"] != "flash" || routed["reasoning"] == "" {
		t.Fatalf("router answer %q", res.text)
	}
	// Qwen's respond_in_schema side query: one forced tool.
	qwen := mustJSON(jsonObj{
		"model":       "qwen",
		"messages":    []any{jsonObj{"role": "system", "content": "You maintain durable managed memory"}, jsonObj{"role": "user", "content": "Transcript slice: What is 2+2?"}},
		"tools":       []any{jsonObj{"type": "function", "function": jsonObj{"name": "respond_in_schema", "parameters": jsonObj{"type": "object", "properties": jsonObj{"patches": jsonObj{"type": "array"}}, "required": []any{"patches"}}}}},
		"tool_choice": "required",
	})
	resp = post(t, s, "/v1/chat/completions", qwen)
	res = readChat(t, resp.Body)
	resp.Body.Close()
	if len(res.calls) != 1 || res.calls[0].name != "respond_in_schema" || !cmp.Equal(res.calls[0].args, jsonObj{"patches": []any{}}) {
		t.Fatalf("respond_in_schema: %+v", res)
	}
	// Structured output over Chat Completions and Responses.
	resp = post(t, s, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}}`)
	if res = readChat(t, resp.Body); res.text != "{}" {
		t.Fatalf("json_object: %q", res.text)
	}
	resp.Body.Close()
	resp = post(t, s, "/v1/responses", `{"model":"m","input":"x","text":{"format":{"type":"json_schema","name":"t","schema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}}}}`)
	if res = readResponses(t, resp.Body); res.text != `{"title":"Fabric model stub"}` {
		t.Fatalf("json_schema: %q", res.text)
	}
	resp.Body.Close()
	// A quota probe.
	resp = post(t, s, "/v1/messages", `{"model":"c","max_tokens":1,"messages":[{"role":"user","content":"quota"}]}`)
	readAll(t, resp)

	var reasons []string
	for _, r := range s.Requests() {
		reasons = append(reasons, r.SideReason)
	}
	want := []string{"system_prompt:title", "", "system_prompt:title", "structured_output", "forced_tool:respond_in_schema", "structured_output", "structured_output", "max_tokens_1"}
	if diff := cmp.Diff(want, reasons); diff != "" {
		t.Fatalf("side reasons (-want +got):\n%s", diff)
	}
	recs := s.Requests()
	if recs[0].Rule != -1 || recs[1].Rule != 0 || recs[2].Rule != 1 || !recs[0].Side || recs[1].Side {
		t.Fatalf("rules: %+v", recs[:3])
	}
}

func TestSideRequestHeuristicKeepsMainRequests(t *testing.T) {
	v := func(body string, api API) *view {
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		return inspect(api, m)
	}
	main := []struct {
		api  API
		body string
	}{
		// Tools offered: a conversation even if the prompt talks about titles.
		{APIChat, `{"messages":[{"role":"system","content":"Summarize titles"},{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"bash"}}]}`},
		// No tools and no side words.
		{APIMessages, `{"system":"You are a helpful assistant.","messages":[{"role":"user","content":"What is 2+2?"}],"max_tokens":100}`},
		// A forced shell tool is not a side request.
		{APIResponses, `{"input":"x","tools":[{"type":"function","name":"shell"}],"tool_choice":"required"}`},
		// Two tools, forced: not the one-tool structured pattern.
		{APIGemini, `{"contents":[{"role":"user","parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"a"},{"name":"b"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}}`},
	}
	for i, c := range main {
		if r := v(c.body, c.api).sideReason(); r != "" {
			t.Errorf("case %d: detected as side (%s)", i, r)
		}
	}
	s := newServer(t, "side_detection: off\nrules:\n  - {match: {nth: 1}, reply: {text: first}}\n")
	res := apiCases[0].do(t, s, convo{system: "You are a title generator.", prompt: "x"})
	if res.text != "first" {
		t.Fatalf("side_detection off: %+v", res)
	}
}

func TestPathRulesSeeSideRequests(t *testing.T) {
	s := newServer(t, `
rules:
  - match: {path: count_tokens}
    reply: {error: {status: 500}}
  - match: {path: /v1/messages, side: false}
    reply: {text: main only}
`)
	resp := post(t, s, "/v1/messages/count_tokens", `{"messages":[{"role":"user","content":"x"}]}`)
	if readAll(t, resp); resp.StatusCode != 500 {
		t.Fatalf("count_tokens: %d", resp.StatusCode)
	}
	if res := apiCases[2].do(t, s, convo{system: "Generate a title", prompt: "x"}); res.text != DefaultSideText {
		t.Fatalf("side: %+v", res)
	}
	if res := apiCases[2].do(t, s, convo{prompt: "x"}); res.text != "main only" {
		t.Fatalf("main: %+v", res)
	}
}

func TestNthTimesAndMatchers(t *testing.T) {
	s := newServer(t, `
default: {text: fallback}
rules:
  - match: {api: responses, nth: 2}
    reply: {text: second responses request}
  - match: {model: gpt-x, times: 2}
    reply: {text: gpt-x twice}
  - match: {path: /openai/}
    reply: {text: via path}
`)
	ask := func(ac apiCase, model string) string {
		return ac.do(t, s, convo{prompt: "p", model: model}).text
	}
	got := []string{
		ask(apiCases[1], "m"),     // responses #1
		ask(apiCases[1], "m"),     // responses #2
		ask(apiCases[1], "m"),     // responses #3
		ask(apiCases[0], "gpt-x"), // gpt-x #1
		ask(apiCases[1], "gpt-x"), // responses #4, gpt-x #2
		ask(apiCases[0], "gpt-x"), // gpt-x exhausted
	}
	resp := post(t, s, "/openai/v1/chat/completions", apiCases[0].body(convo{prompt: "p", model: "m"}))
	got = append(got, readChat(t, resp.Body).text)
	resp.Body.Close()
	want := []string{"fallback", "second responses request", "fallback", "gpt-x twice", "gpt-x twice", "fallback", "via path"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestSetScriptResetsCounters(t *testing.T) {
	s := newServer(t, "rules:\n  - {match: {nth: 1}, reply: {text: one}}\n")
	if r := apiCases[0].do(t, s, convo{prompt: "p"}); r.text != "one" {
		t.Fatal(r.text)
	}
	if r := apiCases[0].do(t, s, convo{prompt: "p"}); r.text != DefaultText {
		t.Fatal(r.text)
	}
	sc, _ := ParseScript([]byte("rules:\n  - {match: {nth: 1}, reply: {text: again}}\n"))
	if err := s.SetScript(sc); err != nil {
		t.Fatal(err)
	}
	if r := apiCases[0].do(t, s, convo{prompt: "p"}); r.text != "again" {
		t.Fatal(r.text)
	}
	if err := s.SetScript(&Script{Rules: []Rule{{Reply: Reply{Chunks: -1}}}}); err == nil {
		t.Fatal("invalid script accepted")
	}
}

func TestConcurrentRequests(t *testing.T) {
	s := newServer(t, "rules:\n  - {match: {times: 10}, reply: {text: limited, chunks: 3}}\n")
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ac := apiCases[i%len(apiCases)]
			res := ac.do(t, s, convo{prompt: "p", stream: i%2 == 0})
			mu.Lock()
			counts[res.text]++
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	if counts["limited"] != 10 || counts[DefaultText] != 30 {
		t.Fatalf("%v", counts)
	}
	seen := map[int]bool{}
	for _, r := range s.Requests() {
		seen[r.Seq] = true
	}
	if len(seen) != 40 {
		t.Fatalf("%d distinct seqs", len(seen))
	}
}

func TestMaxRecords(t *testing.T) {
	s := newServer(t, "", Options{MaxRecords: 3})
	for i := 0; i < 5; i++ {
		apiCases[0].do(t, s, convo{prompt: "p"})
	}
	recs := s.Requests()
	if len(recs) != 3 || recs[0].Seq != 3 || recs[2].Seq != 5 {
		t.Fatalf("%+v", recs)
	}
}

func TestMaxRecordBytes(t *testing.T) {
	s := newServer(t, "", Options{MaxRecordBytes: 10})
	for i := 0; i < 3; i++ {
		apiCases[0].do(t, s, convo{prompt: "p"})
	}
	if recs := s.Requests(); len(recs) != 1 || recs[0].Seq != 3 {
		t.Fatalf("%+v", recs)
	}
}

func TestNewServerErrors(t *testing.T) {
	if _, err := NewServer("127.0.0.1:0", &Script{Rules: []Rule{{Match: Match{API: "soap"}}}}); err == nil || !strings.Contains(err.Error(), "rules[0].match.api") {
		t.Fatalf("got %v", err)
	}
	if _, err := NewServer("256.0.0.1:0", nil); err == nil {
		t.Fatal("bad address accepted")
	}
	s, err := NewServer("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || s.OpenAIBaseURL() != s.URL()+"/v1" ||
		s.AnthropicBaseURL() != s.URL() || s.GeminiBaseURL() != s.URL() || s.Addr().String() != strings.TrimPrefix(s.URL(), "http://") {
		t.Fatalf("urls: %s %s", s.URL(), s.OpenAIBaseURL())
	}
	s.Close() // twice is fine
}
