package agentctl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fabric-runtime/fabric/contract"
)

// Fields every request carries.
var envelopeFields = []string{"protocol_version", "operation_id", "operation"}

// operationSpec is how one operation's request is read: the fields it
// takes besides the envelope, the decoder of those of its own (agent,
// runtime_id and timeout_seconds are read for every operation), and the
// addressing it requires. A nil decoder or address has nothing to do.
type operationSpec struct {
	fields  []string
	decode  func(fields map[string]json.RawMessage, req *Request) *Error
	address func(fields map[string]json.RawMessage, req *Request) *Error
}

// operations holds the spec of each operation.
var operations = map[string]operationSpec{
	OpStart:  {fields: []string{"agent", "timeout_seconds", "config", "base_dir", "strict"}, decode: decodeStart, address: needAgent},
	OpInvoke: {fields: []string{"agent", "runtime_id", "timeout_seconds", "request", "stream"}, decode: decodeInvoke, address: needAgent},
	OpDeploy: {fields: []string{"timeout_seconds", "action", "payload"}, decode: decodeDeploy},
	OpStop:   {fields: []string{"agent", "runtime_id", "timeout_seconds"}, address: needAgentAndRuntime},
	OpCheck:  {fields: []string{"agent", "runtime_id", "timeout_seconds", "level", "interface"}, decode: decodeCheck, address: checkAddress},
	OpStatus: {fields: []string{"agent", "runtime_id", "timeout_seconds"}},
	OpDecide: {fields: []string{"agent", "runtime_id", "timeout_seconds", "invocation_id", "request_id", "decision"}, decode: decodeDecide, address: needAgentAndRuntime},
}

// Permission decisions a decide request may carry.
var decisions = []string{"allow", "deny"}

// Check levels a request may name.
var checkLevels = []string{contract.LevelLive, contract.LevelActive, contract.LevelReady}

// Bounds of identifier fields, in bytes.
const (
	maxOperationID = 128
	maxName        = 256
	maxPath        = 4096
)

// invalid returns an invalid_request error naming field.
func invalid(field, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidRequest, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// DecodeRequest parses and validates one request line (a trailing newline
// is allowed). It always returns a Request holding what could be read of
// the envelope, so that an error response can echo operation_id and
// operation; the error, if any, names the offending field. The envelope
// is read first, then which fields the operation takes, the target
// fields, the operation's own fields and its addressing.
func DecodeRequest(line []byte) (*Request, *Error) {
	req := &Request{}
	if len(line) > MaxRequestBytes {
		return req, &Error{Code: CodeRequestTooLarge, Field: "$", Message: fmt.Sprintf("the request is larger than %d bytes", MaxRequestBytes)}
	}
	fields, order, err := objectFields(line, "")
	if err != nil {
		return req, err
	}
	if err := decodeEnvelope(fields, req); err != nil {
		return req, err
	}
	if err := checkMembers(order, req.Operation); err != nil {
		return req, err
	}
	if err := decodeTarget(fields, req); err != nil {
		return req, err
	}
	spec := operations[req.Operation]
	for _, step := range []func(map[string]json.RawMessage, *Request) *Error{spec.decode, spec.address} {
		if step == nil {
			continue
		}
		if err := step(fields, req); err != nil {
			return req, err
		}
	}
	return req, nil
}

// decodeEnvelope reads protocol_version, operation_id and operation. It
// salvages the last two first so that every later error can echo them.
func decodeEnvelope(fields map[string]json.RawMessage, req *Request) *Error {
	salvage := func(name string) string {
		var s string
		if raw, ok := fields[name]; ok && json.Unmarshal(raw, &s) == nil && validID(s, maxOperationID) {
			return s
		}
		return ""
	}
	req.OperationID, req.Operation = salvage("operation_id"), salvage("operation")
	if !slices.Contains(Operations(), req.Operation) {
		req.Operation = ""
	}

	pv, err := stringField(fields, "protocol_version", true)
	if err != nil {
		return err
	}
	if pv != ProtocolVersion {
		return &Error{Code: CodeProtocolMismatch, Field: "protocol_version", Message: fmt.Sprintf("protocol_version: this serve speaks %q, the request says %q", ProtocolVersion, pv)}
	}
	req.ProtocolVersion = pv
	if req.OperationID, err = stringField(fields, "operation_id", true); err != nil {
		req.OperationID = ""
		return err
	}
	if !validID(req.OperationID, maxOperationID) {
		id := req.OperationID
		req.OperationID = ""
		return invalid("operation_id", "%q: use 1 to %d characters from A-Z a-z 0-9 . _ : -", clip(id), maxOperationID)
	}
	op, err := stringField(fields, "operation", true)
	if err != nil {
		return err
	}
	if ops := Operations(); !slices.Contains(ops, op) {
		return invalid("operation", "must be one of %s, got %q", strings.Join(ops, ", "), clip(op))
	}
	req.Operation = op
	return nil
}

// checkMembers fails on the first member, in document order, that op
// does not take.
func checkMembers(order []string, op string) *Error {
	allowed := operations[op].fields
	for _, name := range order {
		if !slices.Contains(envelopeFields, name) && !slices.Contains(allowed, name) {
			if slices.ContainsFunc(Operations(), func(o string) bool { return slices.Contains(operations[o].fields, name) }) {
				return invalid(name, "is not a field of %s", op)
			}
			return invalid(fieldName("", name), "unknown field")
		}
	}
	return nil
}

// decodeTarget reads the fields any operation may take: agent, runtime_id
// and timeout_seconds.
func decodeTarget(fields map[string]json.RawMessage, req *Request) *Error {
	var err *Error
	if req.Agent, err = stringField(fields, "agent", false); err != nil {
		return err
	}
	if _, ok := fields["agent"]; ok && !validName(req.Agent) {
		return invalid("agent", "must be 1 to %d bytes of UTF-8 without control characters or surrounding spaces", maxName)
	}
	if req.RuntimeID, err = stringField(fields, "runtime_id", false); err != nil {
		return err
	}
	if _, ok := fields["runtime_id"]; ok && !validRuntimeID(req.RuntimeID) {
		return invalid("runtime_id", "must be 1 to %d printable ASCII characters without spaces or slashes", maxName)
	}
	if raw, ok := fields["timeout_seconds"]; ok {
		if req.TimeoutSeconds, err = numberField(raw, "timeout_seconds"); err != nil {
			return err
		}
		if req.TimeoutSeconds < 0 || req.TimeoutSeconds > MaxTimeoutSeconds {
			return invalid("timeout_seconds", "must be between 0 (the default) and %d", MaxTimeoutSeconds)
		}
	}
	return nil
}

func decodeStart(fields map[string]json.RawMessage, req *Request) *Error {
	var err *Error
	if req.Config, err = stringField(fields, "config", true); err != nil {
		return err
	}
	if err := absPath("config", req.Config); err != nil {
		return err
	}
	if req.BaseDir, err = stringField(fields, "base_dir", false); err != nil {
		return err
	}
	if _, ok := fields["base_dir"]; ok {
		if err := absPath("base_dir", req.BaseDir); err != nil {
			return err
		}
	}
	return boolField(fields, "strict", &req.Strict)
}

func decodeInvoke(fields map[string]json.RawMessage, req *Request) *Error {
	raw, ok := fields["request"]
	if !ok {
		return invalid("request", "is required")
	}
	rr, err := decodeRunRequest(raw)
	if err != nil {
		return err
	}
	req.Request = rr
	return boolField(fields, "stream", &req.Stream)
}

func decodeDecide(fields map[string]json.RawMessage, req *Request) *Error {
	var err *Error
	for _, f := range []struct {
		name string
		dst  *string
	}{{"invocation_id", &req.InvocationID}, {"request_id", &req.RequestID}} {
		if *f.dst, err = stringField(fields, f.name, true); err != nil {
			return err
		}
		if !validRuntimeID(*f.dst) {
			return invalid(f.name, "must be 1 to %d printable ASCII characters without spaces or slashes", maxName)
		}
	}
	if req.Decision, err = stringField(fields, "decision", true); err != nil {
		return err
	}
	if !slices.Contains(decisions, req.Decision) {
		return invalid("decision", "must be allow or deny, got %q", clip(req.Decision))
	}
	return nil
}

func decodeDeploy(fields map[string]json.RawMessage, req *Request) *Error {
	var err *Error
	if req.Action, err = stringField(fields, "action", true); err != nil {
		return err
	}
	if !validID(req.Action, maxOperationID) {
		return invalid("action", "must be 1 to %d characters from A-Z a-z 0-9 . _ : -", maxOperationID)
	}
	if raw, ok := fields["payload"]; ok {
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
			return invalid("payload", "must be a JSON object")
		}
		req.Payload = raw
	}
	return nil
}

func decodeCheck(fields map[string]json.RawMessage, req *Request) *Error {
	var err *Error
	if req.Level, err = stringField(fields, "level", false); err != nil {
		return err
	}
	if req.Interface, err = stringField(fields, "interface", false); err != nil {
		return err
	}
	if _, ok := fields["interface"]; ok && req.Interface == "" {
		return invalid("interface", "must name an interface")
	}
	if _, ok := fields["level"]; ok && !slices.Contains(checkLevels, req.Level) {
		return invalid("level", "must be live, active or ready, got %q", clip(req.Level))
	}
	return nil
}

// needAgent: start and invoke name the agent (an invoke without
// runtime_id goes to the agent's only runtime: a deployed agent is
// addressed by its name alone).
func needAgent(fields map[string]json.RawMessage, _ *Request) *Error {
	if _, ok := fields["agent"]; !ok {
		return invalid("agent", "is required")
	}
	return nil
}

// needAgentAndRuntime: stop and decide name one runtime.
func needAgentAndRuntime(fields map[string]json.RawMessage, req *Request) *Error {
	if err := needAgent(fields, req); err != nil {
		return err
	}
	if _, ok := fields["runtime_id"]; !ok {
		return invalid("runtime_id", "is required")
	}
	return nil
}

// checkAddress: a runtime check names both agent and runtime_id (or the
// agent alone); a server check neither, and takes no level or interface.
func checkAddress(fields map[string]json.RawMessage, req *Request) *Error {
	_, hasAgent := fields["agent"]
	_, hasRuntime := fields["runtime_id"]
	switch {
	case hasRuntime && !hasAgent:
		return invalid("agent", "is required with runtime_id (a runtime check names both; a server check neither)")
	case req.Level != "" && !hasRuntime && !hasAgent:
		return invalid("level", "a server check takes no level")
	case req.Interface != "" && !hasRuntime && !hasAgent:
		return invalid("interface", "a server check takes no interface")
	}
	return nil
}

// boolField reads an optional boolean member into dst.
func boolField(fields map[string]json.RawMessage, name string, dst *bool) *Error {
	if raw, ok := fields[name]; ok {
		if err := json.Unmarshal(raw, dst); err != nil || isNull(raw) {
			return invalid(name, "must be true or false")
		}
	}
	return nil
}

// objectFields reads one JSON object and returns its members as raw
// values and the order of their keys. Duplicate keys, trailing data and
// anything but an object are errors; prefix is prepended to field names.
func objectFields(data []byte, prefix string) (map[string]json.RawMessage, []string, *Error) {
	where := "$"
	if prefix != "" {
		where = strings.TrimSuffix(prefix, ".")
	}
	data = bytes.TrimRight(data, " \t\r\n")
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, invalid(where, "is empty: a request is one JSON object on one line")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, invalid(where, "is not JSON: %s", syntaxMessage(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, invalid(where, "must be a JSON object")
	}
	fields := make(map[string]json.RawMessage)
	var order []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, invalid(where, "is not JSON: %s", syntaxMessage(err))
		}
		key, _ := tok.(string)
		name := fieldName(prefix, key)
		if !utf8.ValidString(key) || len(key) > maxName {
			return nil, nil, invalid(where, "has an invalid key")
		}
		if _, dup := fields[key]; dup {
			return nil, nil, invalid(name, "appears twice")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, invalid(name, "is not JSON: %s", syntaxMessage(err))
		}
		fields[key] = raw
		order = append(order, key)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, invalid(where, "is not JSON: %s", syntaxMessage(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, invalid(where, "has data after the JSON object")
	}
	return fields, order, nil
}

// fieldName names a member in errors; an empty key is shown as "".
func fieldName(prefix, key string) string {
	if key == "" {
		key = `""`
	}
	return prefix + key
}

func syntaxMessage(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return err.Error()
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// stringField reads a string member; absent is an error when required,
// null or another type always.
func stringField(fields map[string]json.RawMessage, name string, required bool) (string, *Error) {
	raw, ok := fields[name]
	if !ok {
		if required {
			return "", invalid(name, "is required")
		}
		return "", nil
	}
	var s string
	if isNull(raw) || json.Unmarshal(raw, &s) != nil {
		return "", invalid(name, "must be a string")
	}
	if s == "" {
		return "", invalid(name, "must not be empty")
	}
	return s, nil
}

func numberField(raw json.RawMessage, name string) (float64, *Error) {
	var n json.Number
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] == '"' || isNull(t) || json.Unmarshal(t, &n) != nil {
		return 0, invalid(name, "must be a number")
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, invalid(name, "must be a finite number")
	}
	return f, nil
}

func absPath(name, p string) *Error {
	switch {
	case len(p) > maxPath:
		return invalid(name, "is longer than %d bytes", maxPath)
	case strings.ContainsRune(p, 0) || !utf8.ValidString(p):
		return invalid(name, "is not a valid path")
	case !filepath.IsAbs(p):
		return invalid(name, "must be an absolute path, got %q", clip(p))
	}
	return nil
}

// decodeRunRequest reads the invoke's RunRequest strictly: unknown or
// duplicate members are errors and input is required.
func decodeRunRequest(raw json.RawMessage) (*contract.RunRequest, *Error) {
	if isNull(raw) {
		return nil, invalid("request", "must be a RunRequest object")
	}
	fields, _, err := objectFields(raw, "request.")
	if err != nil {
		return nil, err
	}
	if _, ok := fields["input"]; !ok {
		return nil, invalid("request.input", "is required")
	}
	for _, name := range []string{"request_id"} {
		if r, ok := fields[name]; ok {
			var s string
			if json.Unmarshal(r, &s) != nil {
				return nil, invalid("request."+name, "must be a string")
			}
		}
	}
	for _, name := range []string{"context", "overrides"} {
		if r, ok := fields[name]; ok && !isNull(r) && !bytes.HasPrefix(bytes.TrimSpace(r), []byte("{")) {
			return nil, invalid("request."+name, "must be an object")
		}
	}
	var rr contract.RunRequest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rr); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, invalid("request."+te.Field, "has the wrong type")
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return nil, invalid("request."+strings.Trim(name, `"`), "unknown field")
		}
		return nil, invalid("request", "is not a RunRequest: %s", err.Error())
	}
	return &rr, nil
}

// validID reports whether s is 1 to max characters from A-Z a-z 0-9 . _ : -.
func validID(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

func validRuntimeID(s string) bool {
	if s == "" || len(s) > maxName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '/' {
			return false
		}
	}
	return true
}

func validName(s string) bool {
	if s == "" || len(s) > maxName || !utf8.ValidString(s) || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	i := 61
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

// DecodeResponse parses one response line. Unknown members are allowed
// (newer servers may add some); the envelope must be complete.
func DecodeResponse(line []byte) (*Response, error) {
	var r Response
	if err := json.Unmarshal(bytes.TrimRight(line, "\r\n"), &r); err != nil {
		return nil, fmt.Errorf("response is not JSON: %w", err)
	}
	switch {
	case r.ProtocolVersion != ProtocolVersion:
		return &r, &Error{Code: CodeProtocolMismatch, Message: fmt.Sprintf("serve speaks %q, this client %q", r.ProtocolVersion, ProtocolVersion)}
	case r.Status == StatusSucceeded:
		if len(r.Output) == 0 {
			return nil, errors.New("succeeded response without output")
		}
	case r.Status == StatusFailed:
		if r.Error == nil || r.Error.Code == "" {
			return nil, errors.New("failed response without error code")
		}
	default:
		return nil, fmt.Errorf("response status %q is neither succeeded nor failed", r.Status)
	}
	return &r, nil
}
