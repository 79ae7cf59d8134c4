package wire

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrFrameTooLarge reports a frame longer than the configured maximum. The
// stream is unusable afterwards: the rest of the oversized frame is not
// consumed.
var ErrFrameTooLarge = errors.New("wire: frame too large")

// ErrProtocol reports that the peer broke the protocol: a frame that is not
// JSON, or an envelope of the wrong shape. Test for it with errors.Is; the
// concrete type is *ProtocolError.
var ErrProtocol = errors.New("wire: protocol violation")

// ErrConnClosed reports that a Conn ended before a call completed, or that a
// call or notification was attempted on an ended Conn. The error returned
// wraps both ErrConnClosed and the cause (io.EOF when the peer closed its
// end, the read error, an ErrFrameTooLarge or ErrProtocol error, or the
// context error that stopped Run).
var ErrConnClosed = errors.New("wire: connection closed")

// errClosedLocally is the cause recorded by Conn.Close.
var errClosedLocally = errors.New("closed locally")

// ProtocolError is the concrete error behind ErrProtocol. Msg says what was
// wrong in terms of the envelope (never the payload content); Err is the
// underlying decoding error, if any.
type ProtocolError struct {
	Msg string
	Err error
}

func (e *ProtocolError) Error() string {
	if e.Err != nil {
		return "wire: protocol violation: " + e.Msg + ": " + e.Err.Error()
	}
	return "wire: protocol violation: " + e.Msg
}

// Is reports whether target is ErrProtocol.
func (e *ProtocolError) Is(target error) bool { return target == ErrProtocol }

// Unwrap returns the underlying decoding error.
func (e *ProtocolError) Unwrap() error { return e.Err }

func protocolErrorf(err error, format string, args ...any) *ProtocolError {
	return &ProtocolError{Msg: fmt.Sprintf(format, args...), Err: err}
}

// JSON-RPC 2.0 error codes. The first five are defined by the JSON-RPC 2.0
// specification. CodeOverloaded is in the range the specification reserves
// for implementation-defined server errors (-32000 to -32099). Codes from
// CodeAppMin to CodeAppMax are for application errors defined by the
// protocols built on Conn; PROTOCOL.md assigns the fabric.host/v2 ones.
const (
	CodeParseError     = -32700 // frame is not valid JSON (fatal in v2)
	CodeInvalidRequest = -32600 // JSON, but not a valid request object
	CodeMethodNotFound = -32601 // no handler for the method
	CodeInvalidParams  = -32602 // params do not fit the method
	CodeInternalError  = -32603 // handler failed without a protocol error

	CodeOverloaded = -32000 // too many requests in flight on this connection

	CodeAppMin = 1000 // first application error code
	CodeAppMax = 1999 // last application error code
)

// Error is a JSON-RPC 2.0 error object. A handler returns one (directly or
// wrapped) to choose the code sent to the peer; Conn.Call returns one when
// the peer answers with an error.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// NewError returns an *Error with the given code and message.
func NewError(code int, message string) *Error {
	return &Error{Code: code, Message: message}
}
