package modelstub

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func FuzzParseScript(f *testing.F) {
	f.Add([]byte(exampleScript))
	f.Add([]byte(`{"rules":[{"match":{"api":"chat"},"reply":{"text":"x"}}]}`))
	f.Add([]byte("rules:\n  - {match: {nth: 1}, reply: {error: {status: 429}}}\n"))
	f.Add([]byte("a: &a [x]\nrules: [*a]\n"))
	f.Add([]byte("rules:\n  - reply: {tool_call: {command: x, args: {a: {b: [1, {c: d}]}}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseScript(data)
		if err != nil {
			if s != nil {
				t.Fatal("a script and an error")
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("parsed a script that does not validate: %v", err)
		}
		// A parsed script must be usable by a server.
		c := s.clone()
		if len(c.Rules) != len(s.Rules) {
			t.Fatal("clone lost rules")
		}
	})
}

// fuzzPaths are the endpoints FuzzHandle sends bodies to.
var fuzzPaths = []string{
	"/v1/chat/completions",
	"/v1/responses",
	"/v1/messages?beta=true",
	"/v1/messages/count_tokens",
	"/v1beta/models/gemini-2.5-pro:generateContent",
	"/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
	"/v1beta/models/gemini-2.5-pro:streamGenerateContent",
	"/v1beta/models/gemini-2.5-pro:countTokens",
	"/v1/models",
	"/nope",
}

// FuzzHandle sends arbitrary bodies to every endpoint: no panic, and never
// a 5xx the script did not ask for.
func FuzzHandle(f *testing.F) {
	for i, ac := range apiCases {
		for _, stream := range []bool{false, true} {
			c := convo{prompt: "STUBTOOL", toolName: "bash", toolSchema: schemaArrayCommand, stream: stream, toolResult: i%2 == 0}
			f.Add(uint8(i*2), []byte(ac.body(c)))
		}
	}
	f.Add(uint8(0), []byte(`{"messages":[{"role":"user","content":[{"type":"text","text":1}]}],"tools":[{"function":{"parameters":{"type":["array"],"properties":{"command":{"anyOf":[{}]}}}}}]}`))
	f.Add(uint8(1), []byte(`{"input":[{"type":"function_call_output"},null,3],"tools":[{"type":"local_shell"},{"type":"function","name":"shell","parameters":{"required":["x",1],"properties":{"x":{"type":"object","required":["y"],"properties":{"y":{"type":"array","minItems":3}}}}}}],"text":{"format":{"type":"json_schema","schema":{"type":"integer","minimum":1e300}}}}`))
	f.Add(uint8(4), []byte(`{"contents":[{"parts":[{"functionResponse":{}}]}],"generationConfig":{"responseMimeType":"application/json","responseSchema":{"anyOf":[{"type":"null"}]}}}`))
	f.Add(uint8(2), []byte(`[]`))
	f.Add(uint8(3), []byte(``))
	sc, err := ParseScript([]byte(`
rules:
  - match: {contains: STUBTOOL}
    reply: {tool_call: {command: "echo hi"}}
  - match: {contains: CHUNKS}
    reply: {text: "a b c", chunks: 3}
  - match: {side: true, contains: SIDE}
    reply: {error: {status: 429}}
`))
	if err != nil {
		f.Fatal(err)
	}
	s := New(sc, Options{MaxBodyBytes: 1 << 16, MaxRecords: 64})
	defer s.Close()
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := fuzzPaths[int(which)%len(fuzzPaths)]
		method := http.MethodPost
		if strings.HasSuffix(path, "/models") {
			method = http.MethodGet
		}
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		switch code := w.Code; {
		case code == http.StatusOK:
			if ct := w.Header().Get("Content-Type"); strings.HasPrefix(ct, "application/json") && !json.Valid(w.Body.Bytes()) {
				t.Fatalf("invalid JSON answer: %s", w.Body.Bytes())
			}
		case code == http.StatusTooManyRequests:
			// the SIDE rule
		case code >= 400 && code < 500:
			if !json.Valid(w.Body.Bytes()) {
				t.Fatalf("invalid JSON error: %s", w.Body.Bytes())
			}
		default:
			t.Fatalf("status %d for %s %q: %s", code, path, body, w.Body.Bytes())
		}
	})
}
