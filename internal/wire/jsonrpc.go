package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Request is an incoming JSON-RPC request or notification as handed to a
// Handler.
type Request struct {
	// ID is the request id exactly as the peer sent it (a JSON string or
	// number); nil for a notification.
	ID     json.RawMessage
	Method string
	// Params is the raw "params" value; nil when the peer sent none.
	Params json.RawMessage
}

// IsNotification reports whether r is a notification (no id, no response).
func (r *Request) IsNotification() bool { return r.ID == nil }

// UnmarshalParams decodes the params into v. On failure it returns an
// *Error with CodeInvalidParams, ready to be returned from a handler.
func (r *Request) UnmarshalParams(v any) error {
	if len(r.Params) == 0 {
		return &Error{Code: CodeInvalidParams, Message: r.Method + ": missing params"}
	}
	if err := json.Unmarshal(r.Params, v); err != nil {
		return &Error{Code: CodeInvalidParams, Message: r.Method + ": invalid params: " + err.Error()}
	}
	return nil
}

// Handler handles incoming requests and notifications. For a request, the
// result (marshalled with encoding/json) or the error is sent back: an
// *Error anywhere in err's chain is sent as is, any other error as
// CodeInternalError with err.Error() as the message. For a notification the
// result is ignored and an error is only logged.
//
// Requests are handled concurrently, each in its own goroutine;
// notifications are handled one at a time, in the order received, so a
// notification handler should not block (hand work to a bounded queue of
// your own) and must not wait for a Call on the same Conn, whose response
// would be held behind it. ctx carries the values of Run's context and is cancelled when
// the connection ends; a handler must return soon after, because Run waits
// for it. Params alias no buffer of the Conn and may be kept. A panic in a
// handler is not recovered.
type Handler interface {
	Handle(ctx context.Context, req *Request) (result any, err error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// Handle calls f(ctx, req).
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// inMessage is any incoming JSON-RPC message. Raw fields alias a private
// copy of the frame; they are nil when absent and "null" when null.
type inMessage struct {
	JSONRPC string
	ID      json.RawMessage
	Method  string
	Params  json.RawMessage
	Result  json.RawMessage
	Error   json.RawMessage
}

// readMessage decodes a frame in one validating pass. A frame that is not
// JSON returns a syntax error. A JSON frame of the wrong shape (not an
// object, or a string field of another type) returns a description of the
// problem in shape, with whatever fields could be read.
func readMessage(frame []byte, m *inMessage) (shape string, err error) {
	if err := checkJSON(frame); err != nil {
		return "", err
	}
	i := skipWS(frame, 0)
	if frame[i] != '{' {
		return "message must be a JSON object, got " + jsonKind(frame[i:]), nil
	}
	data := bytes.Clone(frame)
	eachMember(data, i, func(key, val []byte) {
		var s string
		var e error
		switch messageField(key) {
		case "jsonrpc":
			if s, e = stringValue(val); e == nil {
				m.JSONRPC = s
			} else if shape == "" {
				shape = "jsonrpc must be a string"
			}
		case "method":
			if s, e = stringValue(val); e == nil {
				m.Method = s
			} else if shape == "" {
				shape = "method must be a string"
			}
		case "id":
			m.ID = val
		case "params":
			m.Params = val
		case "result":
			m.Result = val
		case "error":
			m.Error = val
		}
	})
	return shape, nil
}

// messageField returns the name of the message field key denotes, or "".
func messageField(key []byte) string {
	switch string(key) { // no allocation
	case "jsonrpc":
		return "jsonrpc"
	case "id":
		return "id"
	case "method":
		return "method"
	case "params":
		return "params"
	case "result":
		return "result"
	case "error":
		return "error"
	}
	if containsByte(key, '\\') {
		if s, ok := unquoteRaw(key); ok && s != string(key) {
			return messageField([]byte(s))
		}
	}
	return ""
}

// validID reports whether raw is an id a request may carry: a JSON string
// or number.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	c := raw[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// parseOurID parses an id of the form Conn.Call sends: a positive decimal
// integer without sign, fraction or exponent.
func parseOurID(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 || len(raw) > 18 || raw[0] == '0' {
		return 0, false
	}
	var n int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// frameBuf is an outgoing frame under construction. Its bytes end in '\n'
// once finished.
type frameBuf struct {
	b      bytes.Buffer
	respID json.RawMessage // the id a response answers; nil for other frames
}

// frameCap is the capacity a frame starts with: most frames (events, the
// answers to health and stop, a turn's result) fit, so one allocation
// serves them instead of a buffer doubling from 64 bytes.
const frameCap = 512

func newFrameBuf(respID json.RawMessage) *frameBuf {
	fb := &frameBuf{respID: respID}
	fb.b.Grow(frameCap)
	return fb
}

// JSONAppender is implemented by params and results that encode themselves
// without encoding/json (the hot messages of a protocol). Conn appends the
// output to the frame as is: AppendJSON must append exactly one valid JSON
// value and no newline, and may report an error.
type JSONAppender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// value appends v as JSON. Raw messages, the common case for results a
// host relays, are checked and copied rather than re-encoded.
func (fb *frameBuf) value(v any) error {
	if a, ok := v.(JSONAppender); ok {
		b, err := a.AppendJSON(fb.b.AvailableBuffer())
		if err != nil {
			return err
		}
		if len(b) == 0 || bytes.IndexByte(b, '\n') >= 0 {
			return errors.New("JSONAppender wrote no value or a newline")
		}
		fb.b.Write(b)
		return nil
	}
	var raw json.RawMessage
	switch r := v.(type) {
	case json.RawMessage:
		raw = r
	case *json.RawMessage:
		if r != nil {
			raw = *r
		}
	}
	if raw != nil {
		b, err := appendRaw(fb.b.AvailableBuffer(), raw)
		if err != nil {
			return err
		}
		fb.b.Write(b)
		return nil
	}
	enc := json.NewEncoder(&fb.b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	fb.b.Truncate(fb.b.Len() - 1) // Encode adds '\n'
	return nil
}

func (fb *frameBuf) str(s string) {
	fb.b.Write(AppendString(fb.b.AvailableBuffer(), s, false))
}

// finish closes the message object and the frame, and checks the limit.
func (fb *frameBuf) finish(limit int) error {
	fb.b.WriteString("}\n")
	if n := fb.b.Len() - 1; n > limit {
		return fmt.Errorf("%w: %d byte message exceeds the %d byte limit", ErrFrameTooLarge, n, limit)
	}
	return nil
}

// encodeCall builds a request (id > 0) or notification (id == 0) frame.
func encodeCall(id int64, method string, params any, limit int) (*frameBuf, error) {
	fb := newFrameBuf(nil)
	fb.b.WriteString(`{"jsonrpc":"2.0",`)
	if id > 0 {
		fb.b.WriteString(`"id":`)
		fb.b.Write(strconv.AppendInt(fb.b.AvailableBuffer(), id, 10))
		fb.b.WriteByte(',')
	}
	fb.b.WriteString(`"method":`)
	fb.str(method)
	if raw, ok := params.(json.RawMessage); params != nil && (!ok || len(raw) > 0) {
		fb.b.WriteString(`,"params":`)
		if err := fb.value(params); err != nil {
			return nil, fmt.Errorf("wire: encode %s params: %w", method, err)
		}
	}
	if err := fb.finish(limit); err != nil {
		return nil, fmt.Errorf("wire: %s: %w", method, err)
	}
	return fb, nil
}

// encodeResponse builds a response frame. id is the request's raw id, or
// nil for "id": null. If the result cannot be encoded or is too large, an
// internal error is sent instead.
func encodeResponse(id json.RawMessage, result any, rpcErr *Error, limit int) *frameBuf {
	fb := newFrameBuf(id)
	fb.b.WriteString(`{"jsonrpc":"2.0","id":`)
	if id == nil {
		fb.b.WriteString("null")
	} else {
		fb.b.Write(id)
	}
	head := fb.b.Len()
	if rpcErr == nil {
		fb.b.WriteString(`,"result":`)
		err := fb.value(result)
		if err == nil {
			if err = fb.finish(limit); err == nil {
				return fb
			}
		}
		rpcErr = &Error{Code: CodeInternalError, Message: "encode result: " + err.Error()}
		fb.b.Truncate(head)
	}
	fb.b.WriteString(`,"error":`)
	if err := fb.value(rpcErr); err != nil {
		// Only Data can fail to encode; send the error without it.
		fb.b.Truncate(head)
		fb.b.WriteString(`,"error":`)
		_ = fb.value(&Error{Code: rpcErr.Code, Message: rpcErr.Message})
	}
	if err := fb.finish(limit); err != nil {
		fb.b.Truncate(head)
		fb.b.WriteString(`,"error":`)
		_ = fb.value(&Error{Code: CodeInternalError, Message: "error response too large"})
		fb.b.WriteString("}\n")
	}
	return fb
}

// toRPCError maps a handler error to the error object sent to the peer.
func toRPCError(err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}
