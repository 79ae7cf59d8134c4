package modelstub

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const exampleScript = `
# Replies for a harness test.
default: {text: "4"}
side_text: Stub title
rules:
  - name: tool
    match: {contains: STUBTOOL}
    reply:
      text: Running it.
      tool_call: {command: echo STUB_TOOL_OK, workdir: /w, args: {timeout: 5000, flags: [a, 1, true, null, 2.5]}}
  - match: {contains: STUBSLOW, api: responses, model: gpt-5, path: /v1/, nth: 2, times: 3, side: false}
    reply: {text: slow, chunks: 20, interval_ms: 500}
  - match: {contains: RATE}
    reply: {error: {status: 429, message: slow down, type: rate_limit_error, retry_after: -1, headers: {x-should-retry: "false"}}}
  - match: {contains: HANG}
    reply: {stall: true, stall_ms: 100}
`

func TestParseScriptExample(t *testing.T) {
	got, err := ParseScript([]byte(exampleScript))
	if err != nil {
		t.Fatal(err)
	}
	f := false
	want := &Script{
		Default:  &Reply{Text: "4"},
		SideText: "Stub title",
		Rules: []Rule{
			{Name: "tool", Match: Match{Contains: "STUBTOOL"}, Reply: Reply{Text: "Running it.", ToolCall: &ToolCall{
				Command: "echo STUB_TOOL_OK", Workdir: "/w",
				Args: map[string]any{"timeout": int64(5000), "flags": []any{"a", int64(1), true, nil, 2.5}},
			}}},
			{Match: Match{Contains: "STUBSLOW", API: APIResponses, Model: "gpt-5", Path: "/v1/", Nth: 2, Times: 3, Side: &f},
				Reply: Reply{Text: "slow", Chunks: 20, IntervalMS: 500}},
			{Match: Match{Contains: "RATE"}, Reply: Reply{Error: &ErrorReply{Status: 429, Message: "slow down", Type: "rate_limit_error", RetryAfter: -1, Headers: map[string]string{"x-should-retry": "false"}}}},
			{Match: Match{Contains: "HANG"}, Reply: Reply{Stall: true, StallMS: 100}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestParseScriptAcceptsJSONAndEmpty(t *testing.T) {
	s, err := ParseScript([]byte(`{"rules":[{"match":{"api":"gemini"},"reply":{"text":"hi"}}]}`))
	if err != nil || len(s.Rules) != 1 || s.Rules[0].Match.API != APIGemini {
		t.Fatalf("%v %+v", err, s)
	}
	for _, doc := range []string{"", "# only a comment\n", "~", "rules: []", "rules:"} {
		s, err := ParseScript([]byte(doc))
		if err != nil || len(s.Rules) != 0 {
			t.Fatalf("%q: %v", doc, err)
		}
	}
	// A scalar text keeps its literal spelling.
	s, err = ParseScript([]byte("rules:\n  - {reply: {text: 4}}\n  - {reply: {text: 0x1F}}\n"))
	if err != nil || s.Rules[0].Reply.Text != "4" || s.Rules[1].Reply.Text != "0x1F" {
		t.Fatalf("%v %+v", err, s)
	}
	// Anchors and aliases work.
	s, err = ParseScript([]byte("rules:\n  - {match: {contains: a}, reply: &r {text: same}}\n  - {match: {contains: b}, reply: *r}\n"))
	if err != nil || s.Rules[1].Reply.Text != "same" {
		t.Fatalf("%v %+v", err, s)
	}
}

func TestParseScriptErrorsNameThePath(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"rulez: []", "rulez: unknown key (line 1)"},
		{"rules: {}", "rules: must be a list, not a mapping"},
		{"rules:\n  - reply: {text: x}\n    matc: {}\n", "rules[0].matc: unknown key (line 3)"},
		{"rules:\n  - match: {contains: x}\n", "rules[0].reply: missing"},
		{"rules:\n  - {reply: {text: a}}\n  - {reply: {txt: a}}\n", "rules[1].reply.txt: unknown key (line 3)"},
		{"rules:\n  - {match: {api: soap}, reply: {text: a}}\n", "rules[0].match.api: must be chat, responses, messages or gemini"},
		{"rules:\n  - {match: {nth: 0}, reply: {text: a}}\n", "rules[0].match.nth: must be an integer of 1 or more"},
		{"rules:\n  - {match: {times: -2}, reply: {text: a}}\n", "rules[0].match.times: must be an integer of 1 or more"},
		{"rules:\n  - {match: {side: maybe}, reply: {text: a}}\n", "rules[0].match.side: must be true or false"},
		{"rules:\n  - {reply: {chunks: two}}\n", `rules[0].reply.chunks: must be an integer of 1 or more, not "two"`},
		{"rules:\n  - {reply: {interval_ms: -5}}\n", "rules[0].reply.interval_ms: must be an integer of 0 or more"},
		{"rules:\n  - {reply: {stall: yes}}\n", "rules[0].reply.stall: must be true or false"},
		{"rules:\n  - {reply: {text: [a]}}\n", "rules[0].reply.text: must be a string, not a list"},
		{"rules:\n  - {reply: {error: {status: 200}}}\n", "rules[0].reply.error.status: must be an HTTP error status 400-599"},
		{"rules:\n  - {reply: {error: {message: x}}}\n", "rules[0].reply.error.status: missing"},
		{"rules:\n  - {reply: {error: {status: 500}, text: x}}\n", "rules[0].reply.error: an error reply cannot also have text"},
		{"rules:\n  - {reply: {tool_call: {workdir: /}}}\n", "rules[0].reply.tool_call: needs a command"},
		{"rules:\n  - {reply: {tool_call: {command: ls, args: [1]}}}\n", "rules[0].reply.tool_call.args: must be a mapping"},
		{"rules:\n  - {reply: {tool_call: {command: ls, args: {a: .nan}}}}\n", "rules[0].reply.tool_call.args.a"},
		{"rules:\n  - {reply: {text: a}, reply: {text: b}}\n", "rules[0].reply: repeated key (first on line 2)"},
		{"rules:\n  - {reply: {error: {status: 500, headers: {bad name: x}}}}\n", `rules[0].reply.error.headers: "bad name" is not a valid header name`},
		{"rules:\n  - {reply: {error: {status: 500, headers: {a: [x]}}}}\n", "rules[0].reply.error.headers.a: must be a string"},
		{"rules:\n  - {reply: {error: {status: 500, headers: [x]}}}\n", "rules[0].reply.error.headers: must be a mapping"},
		{"default: {tool_call: {command: ls}}", "default.tool_call: the default reply cannot be a tool call"},
		{"default: {chunks: 0}", "default.chunks: must be an integer of 1 or more"},
		{"side_detection: maybe", "side_detection: must be on or off"},
		{"rules: [", "invalid YAML"},
		{"a: 1\n---\nb: 2\n", "a second YAML document"},
		{"- 1\n- 2\n", "(root): must be a mapping, not a list"},
	}
	for _, c := range cases {
		_, err := ParseScript([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got  %v\n want %q", c.doc, err, c.want)
		}
	}
}

func TestParseScriptBoundsAliasExpansion(t *testing.T) {
	// A billion-laughs document must fail fast, not expand.
	doc := `a: &a [x, x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
rules:
  - reply: {tool_call: {command: x, args: {boom: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]}}}
`
	_, err := ParseScript([]byte(doc))
	if err == nil {
		t.Fatal("accepted")
	}
	doc = "rules:\n  - reply: {tool_call: {command: x, args: &x {self: *x}}}\n"
	if _, err := ParseScript([]byte(doc)); err == nil {
		t.Fatal("a self-referencing alias was accepted")
	}
}

func TestLoadScript(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(p, []byte(exampleScript), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := LoadScript(p); err != nil || len(s.Rules) != 4 {
		t.Fatalf("%v", err)
	}
	os.WriteFile(p, []byte("rules: 3\n"), 0o600)
	if _, err := LoadScript(p); err == nil || !strings.Contains(err.Error(), p+": rules: must be a list") {
		t.Fatalf("%v", err)
	}
	if _, err := LoadScript(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestScriptIsCopied(t *testing.T) {
	sc := &Script{Rules: []Rule{{Reply: Reply{Text: "before", ToolCall: nil}}}}
	s := New(sc)
	defer s.Close()
	sc.Rules[0].Reply.Text = "after"
	if res := apiCases[0].do(t, s, convo{prompt: "p"}); res.text != "before" {
		t.Fatalf("the server saw a later change to the script: %q", res.text)
	}
}

func TestExampleStringFollowsPattern(t *testing.T) {
	cases := []struct {
		name   string
		schema map[string]any
		prop   string
		want   string
	}{
		{"no pattern", map[string]any{"type": "string"}, "title", "Fabric model stub"},
		{"pattern matches the plain value", map[string]any{"type": "string", "pattern": `^[A-Z]`}, "title", "Fabric model stub"},
		{"sentence-cased summary", map[string]any{"type": "string", "pattern": `^[A-Z]\S*(?:\s+\S+){2,7}$`}, "summary", "Run the scripted stub command"},
		{"a slug", map[string]any{"type": "string", "pattern": `^[a-z-]+$`}, "name", "fabric-model-stub"},
		{"nothing fits: the plain value", map[string]any{"type": "string", "pattern": `^\d{5}$`}, "name", "Fabric model stub"},
		{"ECMA-only syntax is ignored", map[string]any{"type": "string", "pattern": `^(?=x)`}, "name", "Fabric model stub"},
		{"risk enum picks low", map[string]any{"type": "string", "enum": []any{"high", "medium", "low"}}, "riskLevel", "low"},
		{"risk enum without low: the first", map[string]any{"type": "string", "enum": []any{"safe", "unsafe"}}, "risk", "safe"},
		{"other enum: the first", map[string]any{"type": "string", "enum": []any{"high", "low"}}, "level", "high"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := exampleValue(c.schema, c.prop, "", 0); got != c.want {
				t.Fatalf("got %v, want %q", got, c.want)
			}
		})
	}
}
