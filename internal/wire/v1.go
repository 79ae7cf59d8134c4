package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Outcome statuses of protocol v1.
const (
	V1StatusSucceeded = "succeeded"
	V1StatusFailed    = "failed"
)

// V1Request is the v1 request envelope the core writes to a host's stdin:
// {"operation": ..., "payload": ...}.
type V1Request struct {
	Operation string          `json:"operation"`
	Payload   json.RawMessage `json:"payload"`
}

// V1Response is the v1 response envelope a host writes to its stdout:
// {"operation": ..., "outcome": ...}.
type V1Response struct {
	Operation string    `json:"operation"`
	Outcome   V1Outcome `json:"outcome"`
}

// V1Outcome is {"status": "succeeded", "output": ...} or
// {"status": "failed", "error": {...}}. After decoding, Output is set only
// for succeeded outcomes (nil when the host sent none) and Error only for
// failed ones (always a JSON object).
type V1Outcome struct {
	Status string          `json:"status"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// EncodeV1Request returns the frame for req, without the newline.
func EncodeV1Request(req V1Request) ([]byte, error) { return AppendV1Request(nil, req) }

// AppendV1Request appends the frame for req, without the newline, to dst.
// The payload must be valid JSON and is checked; it is copied as is unless it
// contains a newline, in which case it is compacted so that it cannot break
// the framing. A nil payload is sent as null.
func AppendV1Request(dst []byte, req V1Request) ([]byte, error) {
	if req.Operation == "" {
		return dst, errors.New("wire: encode v1 request: empty operation")
	}
	n := len(dst)
	dst = append(dst, `{"operation":`...)
	dst = AppendString(dst, req.Operation, false)
	dst = append(dst, `,"payload":`...)
	dst, err := appendRaw(dst, req.Payload)
	if err != nil {
		return dst[:n], fmt.Errorf("wire: encode v1 %s request: payload: %w", req.Operation, err)
	}
	return append(dst, '}'), nil
}

// DecodeV1Request decodes and checks a v1 request frame: a JSON object with
// a non-empty string "operation". The payload is returned as sent (nil when
// absent); what it must hold depends on the operation and is the host's
// business. Keys are matched exactly and unknown ones ignored. Shape errors
// are *ProtocolError (errors.Is(err, ErrProtocol)).
func DecodeV1Request(frame []byte) (V1Request, error) {
	i, err := checkObject(frame, "v1 request")
	if err != nil {
		return V1Request{}, err
	}
	var req V1Request
	var payload []byte
	var typeErr string
	eachMember(frame, i, func(key, val []byte) {
		switch {
		case keyIs(key, "operation"):
			var e error
			if req.Operation, e = stringValue(val); e != nil && typeErr == "" {
				typeErr = "operation must be a string, got " + jsonKind(val)
			}
		case keyIs(key, "payload"):
			payload = val
		}
	})
	if typeErr != "" {
		return V1Request{}, protocolErrorf(nil, "v1 request: %s", typeErr)
	}
	if req.Operation == "" {
		return V1Request{}, protocolErrorf(nil, "v1 request: missing or empty operation")
	}
	if payload != nil {
		req.Payload = bytes.Clone(payload)
	}
	return req, nil
}

// EncodeV1Response returns the frame for resp, without the newline.
func EncodeV1Response(resp V1Response) ([]byte, error) { return AppendV1Response(nil, resp) }

// AppendV1Response appends the frame for resp, without the newline, to dst.
// A succeeded outcome carries Output (nil is sent as null) and a failed one
// carries Error, which must be a JSON object; the other field is not sent.
// Raw values are checked and copied as for AppendV1Request.
func AppendV1Response(dst []byte, resp V1Response) ([]byte, error) {
	if resp.Operation == "" {
		return dst, errors.New("wire: encode v1 response: empty operation")
	}
	n := len(dst)
	dst = append(dst, `{"operation":`...)
	dst = AppendString(dst, resp.Operation, false)
	var err error
	switch resp.Outcome.Status {
	case V1StatusSucceeded:
		dst = append(dst, `,"outcome":{"status":"succeeded","output":`...)
		dst, err = appendRaw(dst, resp.Outcome.Output)
	case V1StatusFailed:
		if !isObject(resp.Outcome.Error) {
			return dst[:n], fmt.Errorf("wire: encode v1 %s response: failed outcome needs an error object", resp.Operation)
		}
		dst = append(dst, `,"outcome":{"status":"failed","error":`...)
		dst, err = appendRaw(dst, resp.Outcome.Error)
	default:
		return dst[:n], fmt.Errorf("wire: encode v1 %s response: invalid status %q", resp.Operation, resp.Outcome.Status)
	}
	if err != nil {
		return dst[:n], fmt.Errorf("wire: encode v1 %s response: %w", resp.Operation, err)
	}
	return append(dst, "}}"...), nil
}

// DecodeV1Response decodes and checks a v1 response frame in one pass: it
// must be a JSON object with a non-empty string "operation" and an object
// "outcome" whose "status" is "succeeded" or "failed"; a failed outcome must
// carry an "error" object. Keys are matched exactly; unknown ones are
// ignored, as are "error" on a succeeded outcome and "output" on a failed
// one. Every violation is a *ProtocolError (errors.Is(err, ErrProtocol))
// saying what was wrong. Checking that the operation echoes the request is
// the caller's job.
func DecodeV1Response(frame []byte) (V1Response, error) {
	i, err := checkObject(frame, "v1 response")
	if err != nil {
		return V1Response{}, err
	}
	var resp V1Response
	var outcome, output, errObj []byte
	var typeErr string
	eachMember(frame, i, func(key, val []byte) {
		switch {
		case keyIs(key, "operation"):
			var e error
			if resp.Operation, e = stringValue(val); e != nil && typeErr == "" {
				typeErr = "operation must be a string, got " + jsonKind(val)
			}
		case keyIs(key, "outcome"):
			outcome = val
		}
	})
	if typeErr != "" {
		return V1Response{}, protocolErrorf(nil, "v1 response: %s", typeErr)
	}
	if resp.Operation == "" {
		return V1Response{}, protocolErrorf(nil, "v1 response: missing or empty operation")
	}
	op := resp.Operation
	if outcome == nil || outcome[0] == 'n' {
		return V1Response{}, protocolErrorf(nil, "v1 %s response: missing outcome", op)
	}
	if outcome[0] != '{' {
		return V1Response{}, protocolErrorf(nil, "v1 %s response: outcome must be an object, got %s", op, jsonKind(outcome))
	}
	eachMember(outcome, 0, func(key, val []byte) {
		switch {
		case keyIs(key, "status"):
			var e error
			if resp.Outcome.Status, e = stringValue(val); e != nil && typeErr == "" {
				typeErr = "outcome.status must be a string, got " + jsonKind(val)
			}
		case keyIs(key, "output"):
			output = val
		case keyIs(key, "error"):
			errObj = val
		}
	})
	if typeErr != "" {
		return V1Response{}, protocolErrorf(nil, "v1 %s response: %s", op, typeErr)
	}
	switch resp.Outcome.Status {
	case V1StatusSucceeded:
		if output != nil {
			resp.Outcome.Output = bytes.Clone(output)
		}
	case V1StatusFailed:
		if !isObject(errObj) {
			if errObj == nil {
				return V1Response{}, protocolErrorf(nil, "v1 %s response: failed outcome without error", op)
			}
			return V1Response{}, protocolErrorf(nil, "v1 %s response: outcome.error must be an object, got %s", op, jsonKind(errObj))
		}
		resp.Outcome.Error = bytes.Clone(errObj)
	case "":
		return V1Response{}, protocolErrorf(nil, "v1 %s response: missing outcome.status", op)
	default:
		return V1Response{}, protocolErrorf(nil, "v1 %s response: outcome.status %q is not succeeded or failed", op, truncate(resp.Outcome.Status, 64))
	}
	return resp, nil
}

// checkObject validates a frame that must hold one JSON object and returns
// the offset of its opening brace.
func checkObject(frame []byte, what string) (int, error) {
	if err := checkJSON(frame); err != nil {
		if skipWS(frame, 0) == len(frame) {
			return 0, protocolErrorf(nil, "%s: empty frame", what)
		}
		return 0, protocolErrorf(err, "%s: invalid JSON", what)
	}
	i := skipWS(frame, 0)
	if frame[i] != '{' {
		return 0, protocolErrorf(nil, "%s: must be a JSON object, got %s", what, jsonKind(frame[i:]))
	}
	return i, nil
}

// jsonKind names the JSON type of raw from its first byte; raw comes from
// the decoder or is a frame, so only leading whitespace needs skipping.
func jsonKind(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch c := raw[0]; {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "number"
	}
	return "invalid"
}

func isObject(raw []byte) bool { return jsonKind(raw) == "object" }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// appendRaw appends raw, which must be valid JSON, as one line: null when
// raw is empty; as is when it holds no newline (json.Marshal output never
// does), which costs one validating scan; compacted otherwise.
func appendRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return append(dst, "null"...), nil
	}
	if bytes.IndexByte(raw, '\n') < 0 {
		if err := checkJSON(raw); err != nil {
			return dst, err
		}
		return append(dst, raw...), nil
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return dst, err
	}
	return buf.Bytes(), nil
}
