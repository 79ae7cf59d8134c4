package modelstub

import (
	"fmt"
	"maps"
	"strings"
)

// API names one of the wire APIs the stub speaks.
type API string

// The wire APIs.
const (
	APIChat      API = "chat"      // OpenAI Chat Completions: POST …/chat/completions
	APIResponses API = "responses" // OpenAI Responses: POST …/responses
	APIMessages  API = "messages"  // Anthropic Messages: POST …/messages, …/messages/count_tokens
	APIGemini    API = "gemini"    // Gemini: POST …/models/{model}:generateContent, :streamGenerateContent, :countTokens
)

func (a API) valid() bool {
	switch a {
	case APIChat, APIResponses, APIMessages, APIGemini:
		return true
	}
	return false
}

// DefaultText is the reply to every request that no rule answers.
const DefaultText = "Hello from the Fabric model stub."

// DefaultSideText is the reply to a detected side request (a session title,
// say) that no side rule answers.
const DefaultSideText = "Fabric model stub"

// Script says what the stub answers. Rules are tried in order and the first
// one that matches answers; a request no rule answers gets Default (or
// [DefaultText]).
//
// Side requests. Harnesses send requests of their own besides the
// conversation: session titles (OpenCode), memory extraction (Qwen Code),
// model-routing classifiers (Gemini CLI), topic or command-prefix checks
// (Claude Code), token counting, HEAD probes. A request counts as a side
// request when it is
//   - a count_tokens/countTokens call, a model listing, or any HEAD request;
//   - a generation request asking for structured output: OpenAI
//     response_format / Responses text.format of type json_object or
//     json_schema, Anthropic output_format / output_config.format, Gemini
//     responseMimeType application/json or a response schema;
//   - a generation request offering exactly one tool that is not shell-like
//     and forcing the model to call it (tool_choice required/any/named,
//     Gemini mode ANY), the way Qwen Code's respond_in_schema queries look;
//   - a generation request offering no tools whose system prompt mentions
//     a title, summary, classification, category, topic, memory, extraction,
//     routing, a (command) prefix or a slug, or whose last user message asks
//     to generate a title or summarize the conversation, or whose output
//     token limit is 1 (quota probes).
//
// A side request is answered by the first rule with `side: true` (or with a
// `path` and no `side: false`) that matches it; otherwise with a reply shaped
// like what it asked for: a minimal JSON value valid against the requested
// schema, a call to the forced tool with schema-valid arguments, or SideText.
// Rules without `side`/`path` never see side requests, so they neither answer
// nor count them. SideDetection "off" turns the heuristic off.
type Script struct {
	// Rules are tried in order; the first that matches answers.
	Rules []Rule `yaml:"rules" json:"rules"`
	// Default answers requests no rule answers; nil means the text DefaultText.
	Default *Reply `yaml:"default,omitempty" json:"default,omitempty"`
	// SideText answers detected side requests that need no structure; empty
	// means DefaultSideText.
	SideText string `yaml:"side_text,omitempty" json:"side_text,omitempty"`
	// SideDetection is "on" (the default when empty) or "off".
	SideDetection string `yaml:"side_detection,omitempty" json:"side_detection,omitempty"`
}

// Rule is one scripted answer and the requests it applies to.
type Rule struct {
	// Name labels the rule in the request records.
	Name  string `yaml:"name,omitempty" json:"name,omitempty"`
	Match Match  `yaml:"match" json:"match"`
	Reply Reply  `yaml:"reply" json:"reply"`
}

// Match selects requests. Every field that is set must hold.
type Match struct {
	// Contains is a substring of the text of the last user message (the one
	// that started the current turn; tool results do not count as one).
	Contains string `yaml:"contains,omitempty" json:"contains,omitempty"`
	// API is chat, responses, messages or gemini.
	API API `yaml:"api,omitempty" json:"api,omitempty"`
	// Model equals the requested model.
	Model string `yaml:"model,omitempty" json:"model,omitempty"`
	// Path is a substring of the request path.
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
	// Nth makes the rule answer only the Nth request (1-based) that matches
	// its other conditions. Every rule counts every request it matches,
	// whichever rule answers it.
	Nth int `yaml:"nth,omitempty" json:"nth,omitempty"`
	// Times caps how often the rule answers.
	Times int `yaml:"times,omitempty" json:"times,omitempty"`
	// Side: true matches only side requests, false only main requests. Unset
	// means main requests only, unless Path is set (then both).
	Side *bool `yaml:"side,omitempty" json:"side,omitempty"`
}

// Reply is what a rule answers. Text and ToolCall may be combined (the text
// comes first); Error replaces both; Stall delays whatever follows it.
type Reply struct {
	// Text is the assistant text.
	Text string `yaml:"text,omitempty" json:"text,omitempty"`
	// Chunks splits Text into this many stream deltas (default 1).
	Chunks int `yaml:"chunks,omitempty" json:"chunks,omitempty"`
	// IntervalMS is the pause between chunks. Non-streaming requests wait
	// the same total before the answer.
	IntervalMS int `yaml:"interval_ms,omitempty" json:"interval_ms,omitempty"`
	// ToolCall calls a tool the request offers.
	ToolCall *ToolCall `yaml:"tool_call,omitempty" json:"tool_call,omitempty"`
	// Error answers with an HTTP error in the API's own format.
	Error *ErrorReply `yaml:"error,omitempty" json:"error,omitempty"`
	// Stall holds the request without answering until the client goes away,
	// the server closes, or StallMS passes (then the rest of the reply, or
	// the default text, follows).
	Stall bool `yaml:"stall,omitempty" json:"stall,omitempty"`
	// StallMS bounds the stall; setting it implies Stall.
	StallMS int `yaml:"stall_ms,omitempty" json:"stall_ms,omitempty"`
}

// ToolCall is a scripted tool call. A rule with a tool call only matches
// requests that offer a suitable tool and whose current turn holds no tool
// result yet; otherwise the next rule is tried, so that the turn ends with
// text once the harness has sent the tool's result back.
type ToolCall struct {
	// Command is the shell command. The call goes to the first shell-like
	// tool the request offers (exec_command, shell, shell_command, Bash,
	// bash, exec, run_shell_command, Execute, local_shell, …) and its arguments
	// follow that tool's JSON schema: an array `command` property gets
	// ["bash", "-lc", Command], a string one gets Command, and the other
	// required properties get plausible values.
	Command string `yaml:"command,omitempty" json:"command,omitempty"`
	// Tool names the tool to call instead of the first shell-like one.
	Tool string `yaml:"tool,omitempty" json:"tool,omitempty"`
	// Workdir fills a working-directory property if the schema has one.
	Workdir string `yaml:"workdir,omitempty" json:"workdir,omitempty"`
	// Args are set on the arguments last, overriding computed ones.
	Args map[string]any `yaml:"args,omitempty" json:"args,omitempty"`
}

// ErrorReply is a scripted HTTP error.
type ErrorReply struct {
	// Status is the HTTP status, 400-599.
	Status int `yaml:"status" json:"status"`
	// Message is the error message (default: the status text).
	Message string `yaml:"message,omitempty" json:"message,omitempty"`
	// Type overrides the API's error type or code (rate_limit_error,
	// insufficient_quota, RESOURCE_EXHAUSTED, …).
	Type string `yaml:"type,omitempty" json:"type,omitempty"`
	// RetryAfter is the retry-after header in seconds; 429 and 503 get 1
	// when it is 0. Negative means no header.
	RetryAfter int `yaml:"retry_after,omitempty" json:"retry_after,omitempty"`
	// Headers are extra response headers, for example x-should-retry:
	// "false", which the OpenAI and Anthropic SDKs obey.
	Headers map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
}

// Validate reports the first invalid value, naming its path.
func (s *Script) Validate() error {
	if s == nil {
		return nil
	}
	switch s.SideDetection {
	case "", "on", "off":
	default:
		return fmt.Errorf("side_detection: must be on or off, not %q", s.SideDetection)
	}
	if s.Default != nil {
		if err := s.Default.validate("default"); err != nil {
			return err
		}
		if s.Default.ToolCall != nil {
			return fmt.Errorf("default.tool_call: the default reply cannot be a tool call")
		}
	}
	for i := range s.Rules {
		if err := s.Rules[i].validate(fmt.Sprintf("rules[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

func (r *Rule) validate(path string) error {
	m := r.Match
	if m.API != "" && !m.API.valid() {
		return fmt.Errorf("%s.match.api: must be chat, responses, messages or gemini, not %q", path, m.API)
	}
	if m.Nth < 0 {
		return fmt.Errorf("%s.match.nth: must be 1 or more, not %d", path, m.Nth)
	}
	if m.Times < 0 {
		return fmt.Errorf("%s.match.times: must be 1 or more, not %d", path, m.Times)
	}
	return r.Reply.validate(path + ".reply")
}

func (r *Reply) validate(path string) error {
	if r.Chunks < 0 {
		return fmt.Errorf("%s.chunks: must be 1 or more, not %d", path, r.Chunks)
	}
	if r.IntervalMS < 0 {
		return fmt.Errorf("%s.interval_ms: must not be negative, not %d", path, r.IntervalMS)
	}
	if r.StallMS < 0 {
		return fmt.Errorf("%s.stall_ms: must not be negative, not %d", path, r.StallMS)
	}
	if r.Error != nil {
		if r.Error.Status < 400 || r.Error.Status > 599 {
			return fmt.Errorf("%s.error.status: must be an HTTP error status 400-599, not %d", path, r.Error.Status)
		}
		if r.Text != "" || r.ToolCall != nil {
			return fmt.Errorf("%s.error: an error reply cannot also have text or a tool_call", path)
		}
		for k, v := range r.Error.Headers {
			if !validHeaderName(k) {
				return fmt.Errorf("%s.error.headers: %q is not a valid header name", path, k)
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				return fmt.Errorf("%s.error.headers.%s: the value must be one line", path, k)
			}
		}
	}
	if tc := r.ToolCall; tc != nil {
		if tc.Tool == "" && strings.TrimSpace(tc.Command) == "" {
			return fmt.Errorf("%s.tool_call: needs a command (or a tool and args)", path)
		}
	}
	return nil
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c > 0x7e || c <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", c) {
			return false
		}
	}
	return true
}

// clone returns a deep enough copy for the server to own.
func (s *Script) clone() *Script {
	if s == nil {
		return &Script{}
	}
	c := *s
	c.Rules = make([]Rule, len(s.Rules))
	for i, r := range s.Rules {
		if r.Match.Side != nil {
			v := *r.Match.Side
			r.Match.Side = &v
		}
		r.Reply = r.Reply.clone()
		c.Rules[i] = r
	}
	if s.Default != nil {
		d := s.Default.clone()
		c.Default = &d
	}
	return &c
}

func (r Reply) clone() Reply {
	if r.ToolCall != nil {
		tc := *r.ToolCall
		tc.Args = cloneJSONValue(tc.Args).(map[string]any)
		r.ToolCall = &tc
	}
	if r.Error != nil {
		e := *r.Error
		e.Headers = maps.Clone(e.Headers)
		r.Error = &e
	}
	return r
}

func cloneJSONValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return map[string]any(nil)
		}
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = cloneJSONValue(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = cloneJSONValue(e)
		}
		return s
	}
	return v
}
