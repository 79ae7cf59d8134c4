package agentctl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fabric-runtime/fabric/contract"
)

// ProtocolVersion is the version every request and response carries.
const ProtocolVersion = "fabric.agent-ctl/v1alpha1"

// Size bounds of one message. A request line longer than MaxRequestBytes is
// refused with request_too_large; a client reads at most MaxResponseBytes.
const (
	MaxRequestBytes  = 4 << 20
	MaxResponseBytes = 64 << 20
)

// MaxTimeoutSeconds bounds timeout_seconds of any request.
const MaxTimeoutSeconds = 86400

// Operations.
const (
	OpStart  = "start"
	OpInvoke = "invoke"
	OpStop   = "stop"
	OpCheck  = "check"
	OpStatus = "status"
	// OpDecide answers a permission request a running invocation raised.
	OpDecide = "decide"
	// OpDeploy is a deployment supervisor's operation (apply, status,
	// destroy of a fabric.deployment document); Action names it and
	// Payload carries its document. A plain serve refuses it.
	OpDeploy = "deploy"
)

// Operations returns every operation in a stable order, in a new slice the
// caller may change.
func Operations() []string {
	return []string{OpStart, OpInvoke, OpStop, OpCheck, OpStatus, OpDecide, OpDeploy}
}

// Response statuses.
const (
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// Error codes. They are stable; docs/agent-ctl.md explains each one.
const (
	// Answered by serve.
	CodeInvalidRequest   = "invalid_request"   // malformed request; Field names what is wrong
	CodeProtocolMismatch = "protocol_mismatch" // protocol_version is not ProtocolVersion
	CodeRequestTooLarge  = "request_too_large" // the request line exceeds MaxRequestBytes
	CodePermissionDenied = "permission_denied" // the peer is another user (SO_PEERCRED)
	CodeRuntimeNotFound  = "runtime_not_found" // no runtime with this agent and runtime id
	CodeRuntimeBusy      = "runtime_busy"      // an invocation is running on the runtime
	CodeServerStopping   = "server_stopping"   // serve is shutting down
	CodeStartFailed      = "start_failed"      // the config did not load, plan or start; Details say why
	CodeInvokeFailed     = "invoke_failed"     // the runtime refused the invocation; Details say why
	CodeStopFailed       = "stop_failed"       // stop could not confirm the host is gone
	CodeDecideFailed     = "decide_failed"     // the decision was not taken (no such pending request); Details say why
	CodeNotSupervisor    = "not_a_supervisor"  // a deploy request reached a serve that supervises no deployment
	CodeAmbiguousAgent   = "ambiguous_agent"   // the agent has several runtimes: name one with runtime_id
	CodeInternal         = "internal_error"    // a bug in serve; the message says what

	// Produced by the client itself.
	CodeUsage            = "usage"             // invalid command line
	CodeServeUnreachable = "serve_unreachable" // no serve answers on the socket
	CodeServeTimeout     = "serve_timeout"     // serve did not answer in time
	CodeProtocolError    = "protocol_error"    // serve's answer is not a valid response

	// serve startup.
	CodeServeAlreadyRunning = "serve_already_running" // another serve owns the socket
	CodeSocketUnavailable   = "socket_unavailable"    // the socket cannot be created
)

// Exit codes of fabric-agent-ctl.
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitUsage       = 2
	ExitUnreachable = 3
	ExitBusy        = 4
)

// ExitCode maps an error code to the process exit code.
func ExitCode(code string) int {
	switch code {
	case "":
		return ExitOK
	case CodeUsage, CodeInvalidRequest, CodeRequestTooLarge:
		return ExitUsage
	case CodeServeUnreachable, CodeServeTimeout:
		return ExitUnreachable
	case CodeRuntimeBusy, CodeServerStopping:
		return ExitBusy
	}
	return ExitFailed
}

// Request is one control request. Fields other than the envelope
// (protocol_version, operation_id, operation) belong to some operations
// only; DecodeRequest refuses a field the operation does not take.
type Request struct {
	ProtocolVersion string `json:"protocol_version"`
	// OperationID correlates a request with its response and log lines;
	// the client makes one up when the caller gives none.
	OperationID string `json:"operation_id"`
	Operation   string `json:"operation"`
	// Agent and RuntimeID select a runtime: the agent name is the config's
	// metadata.name, the runtime id comes from start.
	Agent     string `json:"agent,omitempty"`
	RuntimeID string `json:"runtime_id,omitempty"`
	// TimeoutSeconds bounds the operation inside serve; 0 means the
	// operation's default (check: 3 s; start, invoke, stop: the runtime's
	// own lifecycle limits).
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`

	// start: Config is the absolute path of the FabricConfig file, read
	// by serve; BaseDir (absolute) and Strict are fabric.LoadOptions.
	Config  string `json:"config,omitempty"`
	BaseDir string `json:"base_dir,omitempty"`
	Strict  bool   `json:"strict,omitempty"`

	// invoke: the RunRequest. With Stream, serve writes each event of the
	// turn as a record line ({"record": {"seq", "dropped"?, "event"}}) as
	// it happens, before the one response line.
	Request *contract.RunRequest `json:"request,omitempty"`
	Stream  bool                 `json:"stream,omitempty"`

	// check: live, active or ready (runtime scope only; default live).
	Level string `json:"level,omitempty"`
	// check: one of the runtime's harness interfaces instead of the
	// runtime (its outcome never decides the runtime's own check).
	Interface string `json:"interface,omitempty"`

	// decide: the invocation that raised a permission request (an event
	// of kind permission_request), the request's id, and allow or deny.
	InvocationID string `json:"invocation_id,omitempty"`
	RequestID    string `json:"request_id,omitempty"`
	Decision     string `json:"decision,omitempty"`

	// deploy: the supervisor's action and its JSON object payload, which
	// the supervisor decodes strictly itself.
	Action  string          `json:"action,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// RecordLine is one streamed event of an invoke with stream set; serve
// writes these before the response line.
type RecordLine struct {
	Record any `json:"record"`
}

// Response is the one answer to a request. Output is the operation's
// document (RuntimeHandle, RunResult, RuntimeStopResult, CheckReport,
// Status); a failed invoke or stop may carry its result in Output too.
type Response struct {
	ProtocolVersion string          `json:"protocol_version"`
	OperationID     string          `json:"operation_id"`
	Operation       string          `json:"operation"`
	Status          string          `json:"status"`
	Output          json.RawMessage `json:"output,omitempty"`
	Error           *Error          `json:"error,omitempty"`
}

// Error is a failed operation, on the wire and as a Go error.
type Error struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
	// Field names the request field at fault (invalid_request); "$" is the
	// request as a whole.
	Field string `json:"field,omitempty"`
	// Details are Fabric's own errors behind start_failed, invoke_failed
	// and stop_failed (stage, code, message, retryable).
	Details  []*contract.ErrorInfo `json:"details,omitempty"`
	Metadata map[string]any        `json:"metadata,omitempty"`
}

func (e *Error) Error() string {
	if e.Field != "" && e.Field != "$" {
		return fmt.Sprintf("%s: %s: %s", e.Code, e.Field, e.Message)
	}
	return e.Code + ": " + e.Message
}

// AsError returns the *Error in err's chain, else one with code and err's
// text.
func AsError(err error, code string) *Error {
	if ae, ok := errors.AsType[*Error](err); ok {
		return ae
	}
	return &Error{Code: code, Message: err.Error()}
}

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Retryable: retryable(code)}
}

func retryable(code string) bool {
	switch code {
	case CodeRuntimeBusy, CodeServerStopping, CodeServeUnreachable, CodeServeTimeout:
		return true
	}
	return false
}

// Succeeded builds a succeeded response to req with output.
func Succeeded(req *Request, output any) (*Response, error) {
	b, err := marshal(output)
	if err != nil {
		return nil, err
	}
	return &Response{ProtocolVersion: ProtocolVersion, OperationID: req.OperationID, Operation: req.Operation, Status: StatusSucceeded, Output: b}, nil
}

// Failed builds a failed response to req; output may be nil.
func Failed(req *Request, e *Error, output any) *Response {
	r := &Response{ProtocolVersion: ProtocolVersion, Status: StatusFailed, Error: e}
	if req != nil {
		r.OperationID, r.Operation = req.OperationID, req.Operation
	}
	if r.OperationID == "" {
		r.OperationID = "unknown"
	}
	if r.Operation == "" {
		r.Operation = "unknown"
	}
	if output != nil {
		if b, err := marshal(output); err == nil {
			r.Output = b
		}
	}
	return r
}

// EncodeResponse returns r as one line, newline included. Output is
// copied as it is (it must be compact JSON, as Succeeded and Failed make
// it): re-encoding a large RunResult would cost more than the rest of the
// answer.
func EncodeResponse(r *Response) ([]byte, error) {
	var errJSON []byte
	if r.Error != nil {
		var err error
		if errJSON, err = marshal(r.Error); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, 128+len(r.Output)+len(errJSON))
	b = append(b, `{"protocol_version":`...)
	b = appendString(b, r.ProtocolVersion)
	b = append(b, `,"operation_id":`...)
	b = appendString(b, r.OperationID)
	b = append(b, `,"operation":`...)
	b = appendString(b, r.Operation)
	b = append(b, `,"status":`...)
	b = appendString(b, r.Status)
	if len(r.Output) > 0 {
		b = append(b, `,"output":`...)
		b = append(b, r.Output...)
	}
	if errJSON != nil {
		b = append(b, `,"error":`...)
		b = append(b, errJSON...)
	}
	return append(b, '}', '\n'), nil
}

func appendString(b []byte, s string) []byte {
	q, _ := marshal(s)
	return append(b, q...)
}

// EncodeRequest returns r as one line, newline included.
func EncodeRequest(r *Request) ([]byte, error) {
	b, err := marshal(r)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// marshal is json.Marshal without HTML escaping.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}
