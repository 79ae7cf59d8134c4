package modelstub

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Request is the record of one request the stub received. It never holds a
// credential value: credential headers are recorded by name only, a `key`
// query parameter is replaced, and any presented credential found in the
// body is replaced by "[redacted]".
type Request struct {
	// Seq numbers requests from 1 in arrival order.
	Seq  int       `json:"seq"`
	Time time.Time `json:"time"`

	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query,omitempty"`
	// API is chat, responses, messages or gemini; empty for HEAD, unknown
	// paths and model listings.
	API API `json:"api,omitempty"`
	// Endpoint names the operation: chat.completions, responses, messages,
	// messages.count_tokens, gemini.generateContent,
	// gemini.streamGenerateContent, gemini.countTokens, models, head,
	// unknown.
	Endpoint string `json:"endpoint"`
	Model    string `json:"model,omitempty"`
	Stream   bool   `json:"stream"`
	// Tools are the names of the tools the request offered.
	Tools []string `json:"tools,omitempty"`
	// UserText is the text of the last user message (the turn's prompt),
	// cut at 4 KiB.
	UserText string `json:"user_text,omitempty"`
	// ToolResult is true when the current turn already holds a tool result.
	ToolResult bool `json:"tool_result,omitempty"`

	// AuthHeader names where a credential came from: authorization,
	// x-api-key, x-goog-api-key, api-key or query:key. Empty when none.
	AuthHeader string `json:"auth_header,omitempty"`
	// AuthPresent is true when any credential was presented.
	AuthPresent bool `json:"auth_present"`
	// KeyChecked is true when the server expects a key (Options.ExpectKey).
	KeyChecked bool `json:"key_checked"`
	// KeyOK is true when the request passed the key check: the expected key
	// came in a header the API uses. Without an expected key it is true.
	KeyOK bool `json:"key_ok"`

	// Side is true for detected side requests (titles, classifiers, …).
	Side       bool   `json:"side"`
	SideReason string `json:"side_reason,omitempty"`
	// Rule is the index of the script rule that answered, or -1.
	Rule     int    `json:"rule"`
	RuleName string `json:"rule_name,omitempty"`
	// Reply says what was answered: text, tool_call, error, structured,
	// count, models, head, or the error kind for rejected requests.
	Reply string `json:"reply,omitempty"`
	// Status is the HTTP status sent (0 if the client left first).
	Status int `json:"status"`
	// Outcome is completed, client_gone or server_closed.
	Outcome string `json:"outcome,omitempty"`

	UserAgent string `json:"user_agent,omitempty"`
	// Headers are the request headers, credential-bearing ones redacted.
	Headers map[string]string `json:"headers,omitempty"`
	// Body is the JSON body; BodyText holds a body that is not JSON.
	Body      json.RawMessage `json:"body,omitempty"`
	BodyText  string          `json:"body_text,omitempty"`
	BodyBytes int             `json:"body_bytes"`
}

func (r *Request) clone() Request {
	c := *r
	c.Tools = append([]string(nil), r.Tools...)
	c.Headers = maps.Clone(r.Headers)
	return c
}

// size is what a record's body costs.
func (r *Request) size() int64 { return int64(len(r.Body) + len(r.BodyText)) }

const redacted = "[redacted]"

// sensitiveHeader reports whether a header may carry a secret.
func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"auth", "key", "token", "secret", "cookie", "password", "signature", "credential"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func recordHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vs := range h {
		name := strings.ToLower(k)
		if sensitiveHeader(name) {
			out[name] = redacted
			continue
		}
		out[name] = strings.Join(vs, ", ")
	}
	return out
}

// redactQuery replaces the values of credential-like query parameters.
func redactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return redacted
	}
	changed := false
	for k := range q {
		if sensitiveHeader(k) {
			q[k] = []string{redacted}
			changed = true
		}
	}
	if !changed {
		return raw
	}
	return q.Encode()
}

const maxBodyText = 64 << 10

// setBody stores the body, scrubbing every presented credential value out
// of it.
func (r *Request) setBody(body []byte, secrets []string) {
	r.BodyBytes = len(body)
	if len(body) == 0 {
		return
	}
	scrubbed := body
	for _, s := range secrets {
		if len(s) >= 6 && bytes.Contains(scrubbed, []byte(s)) {
			scrubbed = bytes.ReplaceAll(scrubbed, []byte(s), []byte(redacted))
		}
	}
	if json.Valid(scrubbed) {
		var buf bytes.Buffer
		if json.Compact(&buf, scrubbed) == nil {
			r.Body = buf.Bytes()
			return
		}
	}
	t := scrubbed
	if len(t) > maxBodyText {
		t = t[:maxBodyText]
	}
	r.BodyText = strings.ToValidUTF8(string(t), string(utf8.RuneError))
}

// maxUserText bounds Request.UserText (the whole text is in the body).
const maxUserText = 4 << 10

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// scrubString removes credential values from a recorded string.
func scrubString(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 6 {
			s = strings.ReplaceAll(s, sec, redacted)
		}
	}
	return s
}
