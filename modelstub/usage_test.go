package modelstub

import (
	"math"
	"strings"
	"testing"
)

// TestUsageOfStubResponses: BodyUsage and EventUsage read back exactly the
// usage the stub reports, for every API, streamed and not.
func TestUsageOfStubResponses(t *testing.T) {
	const text = "one two three four five"
	s := newServer(t, "default: {text: '"+text+"', chunks: 3}\n")
	cases := []struct {
		api        API
		path, body string
		stream     bool
	}{
		{APIChat, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, false},
		{APIChat, "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`, true},
		{APIResponses, "/v1/responses", `{"model":"m","input":"hi"}`, false},
		{APIResponses, "/v1/responses", `{"model":"m","stream":true,"input":"hi"}`, true},
		{APIMessages, "/v1/messages", `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`, false},
		{APIMessages, "/v1/messages", `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, true},
		{APIGemini, "/v1beta/models/m:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, false},
		{APIGemini, "/v1beta/models/m:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, true},
	}
	for _, c := range cases {
		name := string(c.api)
		if c.stream {
			name += "/stream"
		}
		t.Run(name, func(t *testing.T) {
			want := Usage{InputTokens: int64(tokens(len(c.body))), OutputTokens: int64(tokens(len(text)))}
			body := readAll(t, post(t, s, c.path, c.body))
			var got Usage
			var ok bool
			if !c.stream {
				got, ok = BodyUsage(c.api, body)
			} else {
				events, err := parseSSE(strings.NewReader(string(body)))
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range events {
					if u, found := EventUsage(c.api, []byte(ev.data)); found {
						got.Update(u)
						ok = true
					}
				}
			}
			if !ok || got != want {
				t.Fatalf("usage %+v (found %v), want %+v", got, ok, want)
			}
		})
	}
}

func TestUsageDocuments(t *testing.T) {
	cases := []struct {
		name   string
		api    API
		event  bool
		doc    string
		want   Usage
		wantOK bool
	}{
		{"chat chunk without usage", APIChat, true, `{"choices":[{"delta":{"content":"x"}}],"usage":null}`, Usage{}, false},
		{"chat usage chunk", APIChat, true, `{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}`, Usage{7, 3}, true},
		{"responses created", APIResponses, true, `{"type":"response.created","response":{"usage":null}}`, Usage{}, false},
		{"responses delta", APIResponses, true, `{"type":"response.output_text.delta","delta":"usage\""}`, Usage{}, false},
		{"responses completed", APIResponses, true, `{"type":"response.completed","response":{"usage":{"input_tokens":5,"output_tokens":9}}}`, Usage{5, 9}, true},
		{"anthropic start", APIMessages, true, `{"type":"message_start","message":{"usage":{"input_tokens":4,"cache_read_input_tokens":6,"cache_creation_input_tokens":1,"output_tokens":1}}}`, Usage{11, 1}, true},
		{"anthropic delta", APIMessages, true, `{"type":"message_delta","usage":{"output_tokens":12}}`, Usage{0, 12}, true},
		{"anthropic body", APIMessages, false, `{"type":"message","usage":{"input_tokens":2,"output_tokens":3}}`, Usage{2, 3}, true},
		{"gemini", APIGemini, false, `{"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":2,"thoughtsTokenCount":5}}`, Usage{8, 7}, true},
		{"negative counts", APIChat, false, `{"usage":{"prompt_tokens":-5,"completion_tokens":2}}`, Usage{0, 2}, true},
		{"saturates", APIMessages, false, `{"usage":{"input_tokens":9223372036854775807,"cache_read_input_tokens":9223372036854775807}}`, Usage{math.MaxInt64, 0}, true},
		{"wrong type", APIChat, false, `{"usage":{"prompt_tokens":"7"}}`, Usage{}, false},
		{"not an object", APIChat, false, `["usage"]`, Usage{}, false},
		{"not JSON", APIChat, true, `[DONE]`, Usage{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parse := BodyUsage
			if c.event {
				parse = EventUsage
			}
			got, ok := parse(c.api, []byte(c.doc))
			if got != c.want || ok != c.wantOK {
				t.Fatalf("got %+v %v, want %+v %v", got, ok, c.want, c.wantOK)
			}
		})
	}
}

func TestUsageUpdate(t *testing.T) {
	u := Usage{InputTokens: 4, OutputTokens: 1}
	u.Update(Usage{OutputTokens: 12})
	u.Update(Usage{})
	if u != (Usage{4, 12}) {
		t.Fatalf("%+v", u)
	}
}

func FuzzUsage(f *testing.F) {
	f.Add("chat", []byte(`{"usage":{"prompt_tokens":7,"completion_tokens":3}}`))
	f.Add("responses", []byte(`{"type":"response.completed","response":{"usage":{"input_tokens":5}}}`))
	f.Add("messages", []byte(`{"type":"message_start","message":{"usage":{"input_tokens":4}}}`))
	f.Add("gemini", []byte(`{"usageMetadata":{"promptTokenCount":8}}`))
	f.Fuzz(func(t *testing.T, api string, data []byte) {
		for _, parse := range []func(API, []byte) (Usage, bool){BodyUsage, EventUsage} {
			u, ok := parse(API(api), data)
			if u.InputTokens < 0 || u.OutputTokens < 0 || (!ok && u != (Usage{})) {
				t.Fatalf("usage %+v ok %v", u, ok)
			}
		}
	})
}
