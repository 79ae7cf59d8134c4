package access

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// apiError is an HTTP error in the OpenAI shape.
type apiError struct {
	status  int
	typ     string
	code    string
	param   string
	message string
	retry   bool // the client may retry (409 in progress, 429, 503)
	// retryAfter, when set, is sent as Retry-After (whole seconds).
	retryAfter time.Duration
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func badRequest(code, param, msg string) *apiError {
	return &apiError{status: 400, typ: "invalid_request_error", code: code, param: param, message: msg}
}

// createRequest is a decoded turn request (either surface).
type createRequest struct {
	Model              string
	Input              string
	Stream             bool
	IncludeUsage       bool // chat: stream_options.include_usage
	Background         bool
	PreviousResponseID string
	Conversation       string
	Metadata           map[string]string
	Fingerprint        []byte // canonical body without transport fields
}

// transportFields do not change what a turn is: a retry may switch them.
var transportFields = []string{"stream", "stream_options", "background"}

// canonical re-encodes a JSON object without the transport fields; Go
// writes map keys sorted, so equal bodies give equal bytes.
func canonical(obj map[string]json.RawMessage, surface string) []byte {
	m := make(map[string]any, len(obj)+1)
	for k, v := range obj {
		if !contains(transportFields, k) {
			var x any
			_ = json.Unmarshal(v, &x)
			m[k] = x
		}
	}
	m["~surface"] = surface
	b, _ := json.Marshal(m)
	return b
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func decodeObject(body []byte) (map[string]json.RawMessage, *apiError) {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, badRequest("invalid_json", "", "the request body must be a JSON object")
	}
	if dec.More() {
		return nil, badRequest("invalid_json", "", "the request body must be one JSON object")
	}
	return obj, nil
}

func field[T any](obj map[string]json.RawMessage, name string, out *T) *apiError {
	raw, ok := obj[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return badRequest("invalid_type", name, fmt.Sprintf("%s has the wrong type", name))
	}
	return nil
}

// rejectSet fails when a field the agent owns (its instructions, its tools)
// is given a value.
func rejectSet(obj map[string]json.RawMessage, names ...string) *apiError {
	for _, n := range names {
		raw, ok := obj[n]
		if !ok {
			continue
		}
		s := strings.TrimSpace(string(raw))
		if s == "null" || s == "[]" || s == `""` || s == "{}" {
			continue
		}
		if n == "tool_choice" && (s == `"auto"` || s == `"none"`) {
			continue
		}
		return badRequest("unsupported_parameter", n, n+" is not supported: the agent's instructions and tools are its own")
	}
	return nil
}

func decodeMetadata(obj map[string]json.RawMessage, req *createRequest) *apiError {
	if err := field(obj, "metadata", &req.Metadata); err != nil {
		return err
	}
	if len(req.Metadata) > 16 {
		return badRequest("invalid_value", "metadata", "metadata has at most 16 pairs")
	}
	for k, v := range req.Metadata {
		if len(k) > 64 || len(v) > 512 {
			return badRequest("invalid_value", "metadata", "metadata keys are at most 64 and values 512 characters")
		}
	}
	return nil
}

// decodeResponsesCreate decodes POST /v1/responses.
func decodeResponsesCreate(body []byte) (*createRequest, *apiError) {
	obj, e := decodeObject(body)
	if e != nil {
		return nil, e
	}
	req := &createRequest{}
	if e := firstErr(field(obj, "model", &req.Model), field(obj, "stream", &req.Stream), field(obj, "background", &req.Background),
		field(obj, "previous_response_id", &req.PreviousResponseID), decodeMetadata(obj, req),
		rejectSet(obj, "instructions", "tools", "tool_choice", "prompt")); e != nil {
		return nil, e
	}
	if req.Model == "" {
		return nil, badRequest("missing_required_parameter", "model", "model is required (the agent's name)")
	}
	if raw, ok := obj["conversation"]; ok && string(raw) != "null" {
		var s string
		var ref struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &s) != nil {
			if json.Unmarshal(raw, &ref) != nil || ref.ID == "" {
				return nil, badRequest("invalid_type", "conversation", "conversation is an id or {id}")
			}
			s = ref.ID
		}
		req.Conversation = s
	}
	if req.Conversation != "" && req.PreviousResponseID != "" {
		return nil, badRequest("unsupported_parameter", "previous_response_id", "previous_response_id cannot be used with conversation")
	}
	raw, ok := obj["input"]
	if !ok {
		return nil, badRequest("missing_required_parameter", "input", "input is required")
	}
	text, e := decodeInput(raw)
	if e != nil {
		return nil, e
	}
	req.Input = text
	req.Fingerprint = canonical(obj, "responses")
	return req, nil
}

func firstErr(errs ...*apiError) *apiError {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// decodeInput accepts new user input only: a string, or user messages
// with text content. The agent keeps its own history.
func decodeInput(raw json.RawMessage) (string, *apiError) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return "", badRequest("invalid_value", "input", "input is empty")
		}
		return s, nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return "", badRequest("invalid_type", "input", "input is a string or a list of input items")
	}
	var parts []string
	for i, it := range items {
		param := fmt.Sprintf("input[%d]", i)
		var typ, role string
		_ = json.Unmarshal(it["type"], &typ)
		_ = json.Unmarshal(it["role"], &role)
		if typ != "" && typ != "message" {
			return "", badRequest("history_not_supported", param, "only user messages are accepted: the agent keeps its own history ("+strconv.Quote(typ)+")")
		}
		if role != "user" {
			code := "history_not_supported"
			if role == "system" || role == "developer" {
				code = "unsupported_parameter"
			}
			return "", badRequest(code, param, "only user messages are accepted: the agent keeps its own history and instructions")
		}
		text, e := decodeContent(it["content"], param+".content", "input_text")
		if e != nil {
			return "", e
		}
		parts = append(parts, text)
	}
	out := strings.Join(parts, "\n\n")
	if strings.TrimSpace(out) == "" {
		return "", badRequest("invalid_value", "input", "input is empty")
	}
	return out, nil
}

// decodeContent reads message content: a string or text parts of textType.
func decodeContent(raw json.RawMessage, param, textType string) (string, *apiError) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badRequest("invalid_type", param, "content is a string or a list of text parts")
	}
	var b strings.Builder
	for i, p := range parts {
		if (p.Type != textType && p.Type != "text") || p.Text == nil {
			return "", badRequest("unsupported_parameter", fmt.Sprintf("%s[%d]", param, i), "only text content is supported")
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(*p.Text)
	}
	return b.String(), nil
}

// decodeChatCreate decodes POST /v1/chat/completions: one turn with the
// last message, which must be the user's; earlier user and assistant
// messages are what the agent already saw (it keeps its own history).
func decodeChatCreate(body []byte) (*createRequest, *apiError) {
	obj, e := decodeObject(body)
	if e != nil {
		return nil, e
	}
	req := &createRequest{}
	var opts struct {
		IncludeUsage bool `json:"include_usage"`
	}
	var msgs []map[string]json.RawMessage
	var n int
	if e := firstErr(field(obj, "model", &req.Model), field(obj, "stream", &req.Stream), field(obj, "stream_options", &opts),
		field(obj, "messages", &msgs), field(obj, "n", &n), decodeMetadata(obj, req),
		rejectSet(obj, "tools", "functions", "tool_choice", "function_call")); e != nil {
		return nil, e
	}
	req.IncludeUsage = opts.IncludeUsage
	if req.Model == "" {
		return nil, badRequest("missing_required_parameter", "model", "model is required (the agent's name)")
	}
	if n > 1 {
		return nil, badRequest("unsupported_parameter", "n", "one choice per turn")
	}
	if len(msgs) == 0 {
		return nil, badRequest("missing_required_parameter", "messages", "messages is required")
	}
	for i, m := range msgs {
		var role string
		_ = json.Unmarshal(m["role"], &role)
		if role == "system" || role == "developer" {
			return nil, badRequest("unsupported_parameter", fmt.Sprintf("messages[%d]", i), "the agent's instructions are its own")
		}
	}
	last := msgs[len(msgs)-1]
	var role string
	_ = json.Unmarshal(last["role"], &role)
	if role != "user" {
		return nil, badRequest("invalid_value", fmt.Sprintf("messages[%d]", len(msgs)-1), "the last message must be the user's")
	}
	text, e := decodeContent(last["content"], fmt.Sprintf("messages[%d].content", len(msgs)-1), "text")
	if e != nil {
		return nil, e
	}
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("invalid_value", "messages", "the user message is empty")
	}
	req.Input = text
	req.Fingerprint = canonical(map[string]json.RawMessage{"model": obj["model"], "input": json.RawMessage(strconv.Quote(text)), "metadata": obj["metadata"]}, "chat")
	return req, nil
}

// retrieveOptions are GET /v1/responses/{id}'s stream switch and cursor:
// from the query, from a JSON body (openai-go sends {"stream":true} on the
// GET) or from Accept: text/event-stream.
type retrieveOptions struct {
	Stream bool
	After  int // -1: from the start
}

func decodeRetrieve(query map[string][]string, accept string, body []byte) (retrieveOptions, *apiError) {
	o := retrieveOptions{After: -1}
	if strings.Contains(accept, "text/event-stream") {
		o.Stream = true
	}
	if len(bytes.TrimSpace(body)) > 0 {
		var b struct {
			Stream        *bool `json:"stream"`
			StartingAfter *int  `json:"starting_after"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			return o, badRequest("invalid_json", "", "the request body must be a JSON object")
		}
		if b.Stream != nil {
			o.Stream = o.Stream || *b.Stream
		}
		if b.StartingAfter != nil {
			o.After = *b.StartingAfter
		}
	}
	if v := first(query["stream"]); v != "" {
		s, err := strconv.ParseBool(v)
		if err != nil {
			return o, badRequest("invalid_value", "stream", "stream is true or false")
		}
		o.Stream = o.Stream || s
	}
	if v := first(query["starting_after"]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < -1 {
			return o, badRequest("invalid_value", "starting_after", "starting_after is a sequence number")
		}
		o.After = n
	}
	if o.After < -1 {
		return o, badRequest("invalid_value", "starting_after", "starting_after is a sequence number")
	}
	return o, nil
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// parseIdempotencyKey reads the Idempotency-Key header values: at most one,
// an RFC 8941 string or a bare token, 1-255 printable ASCII characters.
func parseIdempotencyKey(values []string) (string, *apiError) {
	if len(values) == 0 {
		return "", nil
	}
	if len(values) > 1 {
		return "", badRequest("invalid_idempotency_key", "Idempotency-Key", "at most one Idempotency-Key")
	}
	k := strings.TrimSpace(values[0])
	if len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"' {
		k = k[1 : len(k)-1]
	}
	if len(k) == 0 || len(k) > 255 {
		return "", badRequest("invalid_idempotency_key", "Idempotency-Key", "Idempotency-Key has 1 to 255 characters")
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e || k[i] == '"' || k[i] == '\\' {
			return "", badRequest("invalid_idempotency_key", "Idempotency-Key", "Idempotency-Key is printable ASCII")
		}
	}
	return k, nil
}

// stainlessRetry reads X-Stainless-Retry-Count: the SDK's retry number.
func stainlessRetry(v string) int {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
