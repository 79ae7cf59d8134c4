package host

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Core-side error codes.
const (
	CodeHostCrashed     = "host_crashed"
	CodeHostTimeout     = "host_timeout"
	CodeHostIO          = "host_io"
	CodeProtocolError   = "protocol_error"
	CodeHostStartFailed = "host_start_failed"
)

// Error is a failed host operation: either the core observed a transport
// failure (Code is one of the Code* constants and Adapter is false) or the
// host reported a lifecycle failure (Adapter is true, Code is the adapter's).
type Error struct {
	Op          string // start, invoke, cancel, health, stop
	Stage       string
	Code        string
	Message     string
	Retryable   bool
	Adapter     bool
	Metadata    map[string]any
	Diagnostics string // scrubbed tail of the host's stderr
	Err         error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("host %s: %s [%s]", e.Op, e.Message, e.Code)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Fatal reports whether the error leaves the host unusable (every
// core-observed transport failure does; adapter-reported failures do not).
func (e *Error) Fatal() bool { return !e.Adapter }

// errDeadline is the cancellation cause the runtime uses for its own
// lifecycle deadlines, so that a missed deadline (host_timeout) is told
// apart from a caller's cancellation.
var errDeadline = errors.New("lifecycle deadline exceeded")

// WithDeadline returns a context that expires after the lifecycle limit d
// with a cause that makes host operations report host_timeout.
func WithDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, errDeadline)
}

// IsDeadline reports whether ctx ended because a lifecycle deadline passed.
func IsDeadline(ctx context.Context) bool { return errors.Is(context.Cause(ctx), errDeadline) }
