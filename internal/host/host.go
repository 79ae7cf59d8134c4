package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/proc"
)

// Spec says how to launch a host.
type Spec struct {
	Path     string
	Args     []string
	Dir      string
	Env      []string // complete environment of the host
	Protocol string   // contract.HostProtocolV1 or V2
	// Home is the per-runtime directory; the host's stderr goes to
	// Home/host.stderr.log.
	Home string
	// Secrets are values scrubbed from diagnostics (the values of every
	// *_env variable the config names).
	Secrets []string
	// ExitGrace is how long Terminate waits for the host to exit by itself
	// before SIGKILL of its process group (default 2s).
	ExitGrace time.Duration
	// MaxFrame bounds one protocol frame (default 16 MiB).
	MaxFrame int
	Logger   *slog.Logger
}

// StderrFile is the name of the host's stderr log inside Home.
const StderrFile = "host.stderr.log"

// EventFunc receives the events of one invocation (v2 only).
type EventFunc func(hostproto.HostEvent)

// channel is one protocol version's client.
type channel interface {
	call(ctx context.Context, op string, params, result any) error
	setEvents(invocationID string, fn EventFunc)
	close()
}

// Host is one running adapter host process.
type Host struct {
	spec   Spec
	proc   *proc.Process
	ch     channel
	stderr *stderrLog
	logger *slog.Logger

	termOnce sync.Once
	termErr  error
	killed   atomic.Bool // the host was still running when its group was killed

	exited context.Context // cancelled when the host process has exited
}

var errHostExited = errors.New("host process exited")

// Launch starts the host process in its own process group and connects
// the protocol channel. It does not send start.
func Launch(ctx context.Context, spec Spec) (*Host, error) {
	if spec.ExitGrace <= 0 {
		spec.ExitGrace = 2 * time.Second
	}
	if spec.Logger == nil {
		spec.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(spec.Home, 0o700); err != nil {
		return nil, &Error{Op: "launch", Stage: contract.StageStart, Code: CodeHostStartFailed, Message: "cannot create host home", Err: err}
	}
	stderr, err := openStderrLog(filepath.Join(spec.Home, StderrFile), spec.Secrets)
	if err != nil {
		return nil, &Error{Op: "launch", Stage: contract.StageStart, Code: CodeHostStartFailed, Message: "cannot open host stderr log", Err: err}
	}
	h := &Host{spec: spec, stderr: stderr, logger: spec.Logger}
	ps := proc.Spec{
		Path: spec.Path, Args: spec.Args, Dir: spec.Dir, Env: goHostEnv(spec.Env),
		Stderr: stderr.f, Grace: -1, WaitDelay: 500 * time.Millisecond,
	}
	// Everything the host starts inherits its FABRIC_HOME unless an adapter
	// scrubs it, so it marks the runtime's whole tree: what left the group
	// (a harness's detached workers, orphaned when the host was killed) is
	// found and killed by it.
	if marker := hostproto.EnvHome + "=" + spec.Home; slices.Contains(spec.Env, marker) {
		ps.EnvMarker = marker
	}
	var launchErr error
	switch spec.Protocol {
	case contract.HostProtocolV2:
		h.ch, launchErr = launchV2(ctx, h, &ps)
	case contract.HostProtocolV1, "":
		h.ch, launchErr = launchV1(ctx, h, &ps)
	default:
		launchErr = fmt.Errorf("unknown host protocol %q", spec.Protocol)
	}
	if launchErr != nil {
		stderr.close()
		var he *Error
		if errors.As(launchErr, &he) {
			return nil, he
		}
		return nil, &Error{Op: "launch", Stage: contract.StageStart, Code: CodeHostStartFailed, Message: fmt.Sprintf("cannot start %s", spec.Path), Err: launchErr}
	}
	h.spec.Env = nil // the host has it; a thousand idle hosts need not pin a copy each
	return h, nil
}

// goHostEnv returns env for the host: one that serves a bundled Go adapter
// (hostproto.EnvBundledAdapter) and is not given GOMAXPROCS runs on one P.
// It serves one runtime and mostly waits on I/O, and every P costs memory
// it touches at start (an mcache and its spans, an M and its stacks): on 2
// cores one P saves about a sixth of its page faults from exec to ready and
// a quarter of its anonymous memory when idle (bench/run.sh). The host
// unsets both variables before it starts anything (adapterkit.Serve).
func goHostEnv(env []string) []string {
	bundled := false
	for _, kv := range env {
		if strings.HasPrefix(kv, "GOMAXPROCS=") || strings.HasPrefix(kv, hostproto.EnvGoMaxProcs+"=") {
			return env
		}
		bundled = bundled || strings.HasPrefix(kv, hostproto.EnvBundledAdapter+"=")
	}
	if !bundled {
		return env
	}
	return append(slices.Clip(env), "GOMAXPROCS=1", hostproto.EnvGoMaxProcs+"=1")
}

// Pid is the host's process id (and process group id).
func (h *Host) Pid() int { return h.proc.Pid() }

// Exited is closed when the host process has exited.
func (h *Host) Exited() <-chan struct{} { return h.proc.Done() }

// Diagnostics returns the scrubbed tail of the host's stderr.
func (h *Host) Diagnostics() string { return h.stderr.tail() }

// StderrPath is the host's stderr log file.
func (h *Host) StderrPath() string { return h.stderr.f.Name() }

// Start sends start and waits for the answer.
func (h *Host) Start(ctx context.Context, p hostproto.StartParams) (hostproto.StartResult, error) {
	var raw json.RawMessage
	var res hostproto.StartResult
	if err := h.call(ctx, hostproto.OpStart, p, &raw); err != nil {
		return res, err
	}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &res); err != nil {
			return res, h.fail(hostproto.OpStart, CodeProtocolError, "start output is not an object", err)
		}
	}
	return res, nil
}

// Invoke runs one turn; events (v2) go to onEvent while it runs.
func (h *Host) Invoke(ctx context.Context, p hostproto.InvokeParams, onEvent EventFunc) (contract.AgentRunResult, error) {
	if onEvent != nil {
		h.ch.setEvents(p.RuntimeContext.InvocationID, onEvent)
		defer h.ch.setEvents(p.RuntimeContext.InvocationID, nil)
	}
	var res contract.AgentRunResult
	if err := h.call(ctx, hostproto.OpInvoke, &p, &res); err != nil {
		return res, err
	}
	if err := hostproto.CheckRunResult(&res); err != nil {
		return res, h.fail(hostproto.OpInvoke, CodeProtocolError, "invalid AgentRunResult", err)
	}
	return res, nil
}

// Cancel asks a v2 host to cancel a running invocation.
func (h *Host) Cancel(ctx context.Context, invocationID string) (bool, error) {
	if h.spec.Protocol != contract.HostProtocolV2 {
		return false, errors.ErrUnsupported
	}
	var res hostproto.CancelResult
	err := h.call(ctx, hostproto.MethodCancel, hostproto.CancelParams{InvocationID: invocationID}, &res)
	return res.Cancelled, err
}

// Health asks a v2 host for evidence; v1 hosts have no health method.
func (h *Host) Health(ctx context.Context, p hostproto.HealthParams) (hostproto.HealthResult, error) {
	if h.spec.Protocol != contract.HostProtocolV2 {
		return hostproto.HealthResult{}, errors.ErrUnsupported
	}
	var res hostproto.HealthResult
	err := h.call(ctx, hostproto.MethodHealth, p, &res)
	return res, err
}

// Stop sends stop. The caller then calls Terminate.
func (h *Host) Stop(ctx context.Context, runtimeID string) error {
	return h.call(ctx, hostproto.OpStop, hostproto.StopParams{RuntimeID: runtimeID}, nil)
}

// Kill closes the channel and kills the host's whole process group at
// once, for a host that can no longer be trusted. Idempotent, and shares
// Terminate's once: after either, the other returns the same result.
func (h *Host) Kill(ctx context.Context) error { return h.terminate(ctx, false) }

// Killed reports whether Terminate or Kill found the host still running
// and killed it, rather than the host exiting by itself. It is meaningful
// once either has returned.
func (h *Host) Killed() bool { return h.killed.Load() }

// Terminate waits up to ExitGrace (bounded by ctx) for the host to exit,
// then kills its whole process group and waits until nothing of it is left.
// It closes the channel and the stderr log. Idempotent.
func (h *Host) Terminate(ctx context.Context) error { return h.terminate(ctx, true) }

func (h *Host) terminate(ctx context.Context, grace bool) error {
	h.termOnce.Do(func() {
		h.ch.close()
		if grace {
			t := time.NewTimer(h.spec.ExitGrace)
			select {
			case <-h.proc.Done():
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
		select {
		case <-h.proc.Done():
		default:
			h.killed.Store(true)
		}
		// Stop also reaps anything the host left in its group.
		h.termErr = h.proc.Stop(ctx)
		if h.termErr != nil {
			h.termErr = h.proc.Stop(context.Background())
		}
		h.stderr.close()
	})
	return h.termErr
}

// call runs one operation and turns transport failures into *Error.
func (h *Host) call(ctx context.Context, op string, params, result any) error {
	select {
	case <-h.proc.Done():
		return h.fail(op, CodeHostCrashed, "host process has exited", nil)
	default:
	}
	err := h.ch.call(ctx, op, params, result)
	if err == nil {
		return nil
	}
	var he *Error
	if errors.As(err, &he) {
		if he.Diagnostics == "" {
			he.Diagnostics = h.Diagnostics()
		}
		return he
	}
	switch {
	case ctx.Err() != nil && IsDeadline(ctx):
		return h.fail(op, CodeHostTimeout, fmt.Sprintf("host did not answer %s before its deadline", op), context.Cause(ctx))
	case ctx.Err() != nil:
		return ctx.Err()
	}
	if st, exited := h.proc.ExitState(); exited {
		return h.fail(op, CodeHostCrashed, "host process exited ("+st.String()+")", err)
	}
	if channelClosed(err) {
		// Whether or not the process is gone yet: a host that closes its
		// channel has crashed as far as the core can tell.
		return h.fail(op, CodeHostCrashed, "host closed its channel", err)
	}
	return h.fail(op, CodeHostIO, "host channel failed", err)
}

// channelClosed reports whether err says the host closed its end of the
// channel: the end of the stream, or a broken pipe or connection.
func channelClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

func (h *Host) fail(op, code, msg string, err error) *Error {
	return &Error{Op: op, Stage: stageOf(op), Code: code, Message: msg, Retryable: code == CodeHostTimeout, Diagnostics: h.Diagnostics(), Err: err}
}

func stageOf(op string) string {
	switch op {
	case hostproto.OpStart:
		return contract.StageStart
	case hostproto.OpStop:
		return contract.StageStop
	}
	return contract.StageInvoke
}

// adapterError converts a lifecycle failure reported by the host.
func adapterError(op string, info hostproto.ErrorData) *Error {
	stage := info.Stage
	if stage == "" {
		stage = stageOf(op)
	}
	return &Error{Op: op, Stage: stage, Code: info.Code, Message: info.Message, Retryable: info.Retryable, Adapter: true, Metadata: info.Metadata}
}

// setProc records the host process and ties h.exited to its exit. Once
// the host has exited, its group and what carries its marker (Spec.Home,
// see Launch) are swept at once rather than at Terminate: a host that was
// SIGKILLed cannot kill what it started (the agents and workers an ACP
// host adopted as their subreaper), and the core is what is left to. The
// sweep is p.Stop, which Terminate then finds done.
func (h *Host) setProc(p *proc.Process) {
	h.proc = p
	h.exited = p.Exited()
	context.AfterFunc(h.exited, func() { _ = p.Stop(context.Background()) })
}
