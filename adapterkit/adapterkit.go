package adapterkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// Adapter starts one session per runtime. Serve calls Start at most once.
//
// ctx lives as long as the host: it is not cancelled when Start returns, so
// a session may tie what it starts to it; it is cancelled when a shutdown
// gives up on a Start still running, and when Serve returns. An error ends
// the host after it has been reported (an *Error keeps its code; any other
// error, or a panic, is reported as lifecycle_adapter_start_failed). If
// Start returns a Session along with an error, the Session is stopped.
type Adapter interface {
	Start(ctx context.Context, start StartInput) (Session, error)
}

// AdapterFunc adapts a function to Adapter.
type AdapterFunc func(ctx context.Context, start StartInput) (Session, error)

// Start calls f.
func (f AdapterFunc) Start(ctx context.Context, start StartInput) (Session, error) {
	return f(ctx, start)
}

// StartInput is everything the core sends at start.
type StartInput struct {
	AgentName      string
	BaseDir        string
	Config         contract.AgentConfig
	RuntimeContext contract.RuntimeContext
	CapabilityPlan *contract.CapabilityPlan
	TelemetryPlan  *contract.TelemetryPlan
	// Home is the per-runtime directory the core created for this host
	// (FABRIC_HOME); Artifacts the artifact root (FABRIC_ARTIFACTS), may be "".
	Home      string
	Artifacts string
	// Service is the service this runtime is bound to, nil if none (see
	// ServiceAdapter). Credentials are in the environment variables its
	// Connection names (keys ending in _env), never in Connection.
	Service *ServiceConnection
	// Logger is the host's logger (see WithLogger): records go to the
	// host's stderr, which the core captures and scrubs. Read it with Log.
	Logger *slog.Logger
}

// Log returns in.Logger, or, when it is nil (a StartInput built by hand,
// as in a test), a logger like Serve's default: text records at level
// Info on os.Stderr.
func (in StartInput) Log() *slog.Logger {
	if in.Logger != nil {
		return in.Logger
	}
	return defaultLogger()
}

// defaultLogger is the logger of a host given none.
func defaultLogger() *slog.Logger { return slog.New(slog.NewTextHandler(os.Stderr, nil)) }

// Session is one running runtime inside the host.
type Session interface {
	// Invoke runs one turn. ctx is cancelled when the core cancels the
	// invocation (context.Cause is ErrInvocationCancelled) or the host is
	// stopping (ErrHostStopping); the session should then end the turn
	// promptly and return a result with status cancelled (returning
	// ctx.Err() instead is taken as that). Lifecycle failures are returned
	// as *Error; a turn that failed normally is a result with status
	// failed. Any error (a panic included, reported as
	// lifecycle_adapter_invoke_failed) or an invalid result fails the
	// runtime, as upstream does: later invokes get
	// lifecycle_runtime_failed, stop still works. Serve never runs two
	// Invokes at once.
	Invoke(ctx context.Context, inv Invocation) (contract.AgentRunResult, error)
	// Health reports evidence for one check level (live, active, ready)
	// without calling a model. It is called while Invoke runs (v2 only),
	// with a context bounded by the core's timeout. Empty Activity, Source
	// and ObservedAtMillis are filled in by the host; an error is reported
	// as outcome unknown (errors.ErrUnsupported: unsupported).
	Health(ctx context.Context, level string) (Health, error)
	// Stop releases everything the session started. It is called once, after
	// a running Invoke has returned or the stop grace has passed, with a
	// context bounded by the stop timeout.
	Stop(ctx context.Context) error
}

// Invocation is one turn's input.
type Invocation struct {
	ID      string // invocation id, from the runtime context
	Request contract.AgentRunRequest
	// Context is the invocation's runtime context. Serve does not apply
	// Context.Telemetry.Env to the process environment (upstream's Python
	// host does); pass it to the harness's children.
	Context contract.RuntimeContext
	Events  Emitter // never nil
}

// Event is one adapter event (progress, output delta, tool call, usage...).
// The core adds ids, sequence numbers and timestamps when missing.
type Event = hostproto.HostEvent

// Health is a session's answer to a health check.
type Health = hostproto.HealthResult

// Emitter delivers events to the core while a turn runs. Emit never blocks
// longer than the channel's backpressure and is safe for concurrent use.
// Events reach the core in the order emitted and before the turn's result;
// events emitted after Invoke has returned are dropped. An empty
// TimestampMillis is set to the time of Emit. On the v1 protocol, which has
// no event channel, events are dropped.
type Emitter interface {
	Emit(ev Event)
}

// Error is a lifecycle failure with a stable code. The core receives
// Code, Message, Retryable and Metadata; Err, the cause, stays in the host
// for errors.Is and errors.As.
type Error struct {
	Code      string
	Message   string
	Retryable bool
	Metadata  map[string]any
	Err       error
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error whose Message is fmt.Sprintf(format, args...);
// an error formatted with %w is its cause.
func Errorf(code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), Err: errors.Unwrap(err)}
}

// Wrap builds an *Error with code whose Message is err's and whose cause
// is err (a nil err gives an empty Message).
func Wrap(code string, err error) *Error {
	e := &Error{Code: code, Err: err}
	if err != nil {
		e.Message = err.Error()
	}
	return e
}
