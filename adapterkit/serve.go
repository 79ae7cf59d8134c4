package adapterkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/wire"
)

// Lifecycle error codes a host reports. The lifecycle_* codes are upstream
// NeMo Fabric's (the TypeScript and Python hosts use the same strings);
// CodeStopInProgress and CodeRuntimeBusy are Fabric's, used on v2 only.
// Adapters choose their own codes with *Error.
const (
	CodeInvalidRequest      = "lifecycle_invalid_request"
	CodeInvalidOperation    = "lifecycle_invalid_operation"
	CodeInvalidPayload      = "lifecycle_invalid_payload"
	CodeInvalidRuntime      = "lifecycle_invalid_runtime"
	CodeInvalidStart        = "lifecycle_invalid_start"
	CodeInvalidConfig       = "lifecycle_invalid_config"
	CodeInvalidContext      = "lifecycle_invalid_context"
	CodeInvalidResponse     = "lifecycle_invalid_response"
	CodeNotStarted          = "lifecycle_not_started"
	CodeAlreadyStarted      = "lifecycle_already_started"
	CodeRuntimeMismatch     = "lifecycle_runtime_mismatch"
	CodeRuntimeFailed       = "lifecycle_runtime_failed"
	CodeAdapterStartFailed  = "lifecycle_adapter_start_failed"
	CodeAdapterInvokeFailed = "lifecycle_adapter_invoke_failed"
	CodeAdapterStopFailed   = "lifecycle_adapter_stop_failed"
	// CodeStopInProgress: the host is stopping and takes no new work.
	CodeStopInProgress = "lifecycle_stop_in_progress"
	// CodeRuntimeBusy: an invoke arrived while another one runs (v2).
	// Retryable.
	CodeRuntimeBusy = "runtime_busy"
)

// Causes of the cancellation of an Invoke context; read them with
// context.Cause.
var (
	// ErrInvocationCancelled: the core cancelled this invocation (v2 cancel).
	ErrInvocationCancelled = errors.New("adapterkit: invocation cancelled by the core")
	// ErrHostStopping: the host is stopping (stop request, end of the
	// protocol stream, SIGTERM/SIGINT, or Serve's context ended).
	ErrHostStopping = errors.New("adapterkit: host stopping")
)

// Defaults of the Serve options.
const (
	DefaultStopGrace   = 2 * time.Second
	DefaultStopTimeout = 10 * time.Second
)

// ServeOption configures Serve.
type ServeOption func(*serveConfig)

type serveConfig struct {
	logger      *slog.Logger
	r           io.Reader
	w           io.Writer
	streams     bool
	protocol    string
	signals     bool
	stopGrace   time.Duration
	stopTimeout time.Duration
	maxFrame    int
}

// WithLogger sets the logger for the host's own records (never payloads).
// The default writes text records at level Info to os.Stderr, which the core
// captures as the host's diagnostics.
func WithLogger(l *slog.Logger) ServeOption {
	return func(c *serveConfig) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithStreams makes Serve speak the protocol on r and w instead of the
// process's channel (stdin/stdout for v1, fd 3 for v2); Serve then leaves
// the process's file descriptors alone. Serve closes r and w when it
// returns if they implement io.Closer (closing is also how a blocked read is
// interrupted). For tests and embedding.
func WithStreams(r io.Reader, w io.Writer) ServeOption {
	return func(c *serveConfig) { c.r, c.w, c.streams = r, w, true }
}

// WithProtocol selects the protocol (contract.HostProtocolV1 or
// contract.HostProtocolV2) instead of the FABRIC_HOST_PROTOCOL variable.
func WithProtocol(p string) ServeOption {
	return func(c *serveConfig) { c.protocol = p }
}

// WithSignals turns the handling of SIGTERM and SIGINT on (the default) or
// off. When on, either signal stops the session and makes Serve return nil.
// Tests that run Serve in-process turn it off.
func WithSignals(enabled bool) ServeOption {
	return func(c *serveConfig) { c.signals = enabled }
}

// WithStopGrace bounds each wait of a shutdown: for a cancelled invoke to
// return, for a start in progress to give up, for the last response to be
// written (DefaultStopGrace if d <= 0).
func WithStopGrace(d time.Duration) ServeOption {
	return func(c *serveConfig) {
		if d > 0 {
			c.stopGrace = d
		}
	}
}

// WithStopTimeout bounds Session.Stop through its context
// (DefaultStopTimeout if d <= 0).
func WithStopTimeout(d time.Duration) ServeOption {
	return func(c *serveConfig) {
		if d > 0 {
			c.stopTimeout = d
		}
	}
}

// WithMaxFrame limits one protocol frame in both directions
// (wire.DefaultMaxFrame, 16 MiB, if n <= 0).
func WithMaxFrame(n int) ServeOption {
	return func(c *serveConfig) {
		if n > 0 {
			c.maxFrame = n
		}
	}
}

// Serve hosts one runtime of a on the local-host protocol and returns when
// the host is done. It is meant to be the last call of the host process's
// main, made before anything else writes to stdout.
//
// The protocol is WithProtocol's, else the FABRIC_HOST_PROTOCOL variable
// (hostproto.EnvProtocol), else v1:
//
//   - fabric.host/v2: JSON-RPC 2.0 on the socket at fd 3 (hostproto.ChannelFD),
//     methods start, invoke, cancel, health and stop, with event
//     notifications. Health and cancel are answered while an invoke runs; a
//     second concurrent invoke fails with CodeRuntimeBusy. Lifecycle failures
//     are JSON-RPC errors with code hostproto.RPCLifecycleError and a
//     hostproto.ErrorData as data.
//   - fabric.host/v1: upstream NeMo Fabric's newline-delimited JSON on
//     stdin/stdout, strictly ordered, answered exactly as upstream's
//     TypeScript host does. Before serving, Serve moves the protocol to
//     private descriptors and points fd 1 at stderr and fd 0 at /dev/null,
//     so stray writes to stdout (and reads of stdin) by adapter code cannot
//     touch the protocol. Events are dropped; there is no cancel or health.
//
// The host ends after a stop request (answered after Session.Stop), after a
// start whose Adapter.Start failed (answered first), at the end of the
// protocol stream, on SIGTERM or SIGINT (see WithSignals), or when ctx ends;
// in every case the session, if any, is stopped first. Serve returns nil
// then, and an error only when the host could not serve: no channel, a
// broken stream, or a peer that broke the framing.
func Serve(ctx context.Context, a Adapter, opts ...ServeOption) error {
	if a == nil {
		return errors.New("adapterkit: Serve: nil adapter")
	}
	restoreGoHostEnv()
	cfg := serveConfig{signals: true, stopGrace: DefaultStopGrace, stopTimeout: DefaultStopTimeout, maxFrame: wire.DefaultMaxFrame}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = defaultLogger()
	}
	proto := cfg.protocol
	if proto == "" {
		proto = os.Getenv(hostproto.EnvProtocol)
	}
	if proto == "" {
		proto = contract.HostProtocolV1
	}
	if proto != contract.HostProtocolV1 && proto != contract.HostProtocolV2 {
		return fmt.Errorf("adapterkit: unknown host protocol %q (want %s or %s)", proto, contract.HostProtocolV1, contract.HostProtocolV2)
	}

	r, w := cfg.r, cfg.w
	if !cfg.streams {
		var err error
		if proto == contract.HostProtocolV2 {
			r, w, err = openChannel()
		} else {
			r, w, err = protectStdio()
		}
		if err != nil {
			return err
		}
	}

	runCtx := ctx
	if cfg.signals {
		var stop context.CancelFunc
		runCtx, stop = signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
		defer stop()
	}
	h := newHost(ctx, a, &cfg, proto, w)
	defer h.lifeCancel()
	runCtx = context.WithValue(runCtx, hostKey{}, h) // for hostfault.Writer
	if proto == contract.HostProtocolV2 {
		return h.serveV2(runCtx, r, w)
	}
	return h.serveV1(runCtx, r, w)
}

// restoreGoHostEnv unsets the GOMAXPROCS=1 the core gave a bundled Go host
// for its own runtime (hostproto.EnvGoMaxProcs), so that every process the
// adapter starts sees the environment the core was given. The runtime read
// GOMAXPROCS when the process started and keeps it.
func restoreGoHostEnv() {
	if os.Getenv(hostproto.EnvGoMaxProcs) != "1" {
		return
	}
	_ = os.Unsetenv("GOMAXPROCS")
	_ = os.Unsetenv(hostproto.EnvGoMaxProcs)
}

// closeIO closes r and w if they are closers.
func closeIO(r io.Reader, w io.Writer) {
	if c, ok := w.(io.Closer); ok {
		_ = c.Close()
	}
	if c, ok := r.(io.Closer); ok {
		_ = c.Close() // a second Close of a shared stream only returns an error
	}
}

// waitFor waits for ch to be closed or to deliver, at most d.
func waitFor[T any](ch <-chan T, d time.Duration) (T, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case v := <-ch:
		return v, true
	case <-t.C:
		var zero T
		return zero, false
	}
}
