package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/host"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/plan"
	"github.com/fabric-runtime/fabric/internal/runtimetaint"
)

// States of a runtime.
const (
	StateStarting = "starting"
	StateActive   = "active"
	StateInvoking = "invoking"
	StateStopping = "stopping"
	StateStopped  = "stopped"
	StateFailed   = "failed"
)

// CancelGrace is how long a cancelled v2 invocation may take to end after
// cancel was sent before the host is killed.
const CancelGrace = 2 * time.Second

// Options configure runtimes. Zero values use the process's environment.
type Options struct {
	HostBinary string   // executable re-executed for adapters built into Fabric
	StateDir   string   // per-runtime homes go here (default: $TMPDIR/fabric-hosts)
	Env        []string // base environment of hosts (default os.Environ())
	ExtraPath  []string // directories put first on the hosts' PATH (harness toolchain)
	// CheckExec, if set, is called right before the host is launched with
	// the host command and each of the descriptor's required binaries as
	// found on the host's PATH; an error fails the start with that error
	// (an installed package whose files changed since install, say).
	CheckExec func(path string) error
	LookupEnv func(string) (string, bool)
	Key       BindingKey // HMAC key for runtime bindings (default: a fresh one)
	Logger    *slog.Logger
	Service   *ServiceBinding // the service the runtime is bound to (service.go), or nil
	// RuntimeID presets the runtime's id (default: a fresh one), for
	// callers that prepare per-runtime resources before Start.
	RuntimeID string
	// ExtraEnv is added to the host's environment last (trace context,
	// telemetry sink credentials). Its values are scrubbed from
	// diagnostics.
	ExtraEnv []string
	// Turns, if set, sees every invocation begin and end (telemetry
	// sources such as the Relay listener).
	Turns TurnObserver
	// FollowTurns makes every invocation followable, not only streamed
	// ones: Invoke also keeps the turn's events in a bounded log (that
	// never holds the harness back) that LastTurn and Follow see.
	FollowTurns bool
}

// TurnIDs identify one invocation for a TurnObserver.
type TurnIDs struct {
	RuntimeID, InvocationID, RequestID string
	Index                              int // 1-based turn number of the runtime
}

// TurnObserver is told of each invocation before the host gets it. emit
// adds an event to the invocation (and its stream); end is called once
// the host answered, with a bounded context, and returns what to report
// in the result's metadata under the observer's name.
type TurnObserver interface {
	Name() string
	BeginTurn(ids TurnIDs, emit func(context.Context, contract.FabricEvent) error) (end func(context.Context) any, err error)
}

type telemetryEnvKey struct{}

// WithTelemetryEnv returns a context whose invocations pass env to the
// adapter in runtime_context.telemetry.env (trace context for the turn).
func WithTelemetryEnv(ctx context.Context, env map[string]string) context.Context {
	if len(env) == 0 {
		return ctx
	}
	return context.WithValue(ctx, telemetryEnvKey{}, env)
}

// DefaultStateDir is where runtime homes go when Options.StateDir is
// empty: $TMPDIR/fabric-hosts.
func DefaultStateDir() string { return filepath.Join(os.TempDir(), "fabric-hosts") }

func (o *Options) fill() {
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir()
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Key == nil {
		o.Key = NewBindingKey()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Runtime is one started runtime.
type Runtime struct {
	plan    *contract.RunPlan
	opts    Options
	handle  contract.RuntimeHandle
	host    *host.Host
	home    string
	root    *string // artifact root
	limits  contract.LifecycleLimits
	harness string

	state    atomic.Value // string
	invoking atomic.Bool
	// stopCancel is set when Stop cancels a running turn (the turn is then
	// cancelled; a turn whose host died first is failed).
	stopCancel atomic.Bool
	mu         sync.Mutex // guards below
	cancel     func()     // cancels the running invocation (cancel, grace, then hard stop)
	invDone    chan struct{}
	started    []contract.FabricEvent // runtime_start, attached to the first result
	turns      int
	lastTurn   *Turn         // the most recent streamed (or followable) turn
	turnBegun  chan struct{} // closed and replaced when lastTurn changes
	eventSeq   atomic.Int64
	// streamSeq numbers stream records, per runtime.
	streamSeq atomic.Int64

	stopOnce sync.Once
	stopRes  contract.RuntimeStopResult
	stopErr  error
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Start launches the plan's adapter host and sends start within the start
// deadline. On failure nothing is left behind: the host's process group is
// killed and its home removed.
func Start(ctx context.Context, p *contract.RunPlan, opts Options) (*Runtime, error) {
	opts.fill()
	if p == nil || p.AdapterDescriptor == nil {
		return nil, &contract.ConfigError{Failure: contract.Failure{Stage: contract.StageStart, Code: "invalid_plan", Message: "the plan has no adapter descriptor"}}
	}
	d := &p.AdapterDescriptor.Descriptor
	r := &Runtime{plan: p, opts: opts, limits: limitsOf(p)}
	r.harness = d.Harness
	if r.harness == "" {
		r.harness = d.AdapterID
	}
	runtimeID := opts.RuntimeID
	if runtimeID == "" {
		runtimeID = NewID("runtime")
	}
	env := p.EnvironmentPlan
	if env == nil {
		env = &contract.EnvironmentConfig{Provider: contract.EnvironmentLocal, ControlLocation: contract.ControlInEnv, Ownership: contract.OwnershipCaller}
	}
	if env.Artifacts != nil {
		r.root = env.Artifacts
	} else if p.Config.Runtime.Artifacts != nil {
		r.root = p.Config.Runtime.Artifacts
	}
	r.handle = contract.RuntimeHandle{
		RuntimeID: runtimeID, AgentName: p.AgentName, Harness: r.harness,
		AdapterKind: d.AdapterKind, AdapterID: d.AdapterID,
		Environment: contract.EnvironmentHandle{
			EnvironmentID: NewID("environment"), Provider: env.Provider,
			ControlLocation: env.ControlLocation, Ownership: env.Ownership,
			Workspace: env.Workspace, Artifacts: r.root, Env: env.Env,
			Connection: env.Connection, Metadata: env.Metadata,
		},
		Package: p.Package,
	}
	if opts.Service != nil {
		r.handle.ServiceID = opts.Service.Service.ServiceID
	}
	r.handle.RuntimeBinding = opts.Key.Bind(&r.handle)
	r.state.Store(StateStarting)

	if err := os.MkdirAll(opts.StateDir, 0o700); err != nil {
		return nil, r.startFailure(fmt.Errorf("create state dir: %w", err))
	}
	home, err := os.MkdirTemp(opts.StateDir, runtimeID+"-")
	if err != nil {
		return nil, r.startFailure(fmt.Errorf("create runtime home: %w", err))
	}
	r.home = home
	if r.root != nil {
		if err := os.MkdirAll(*r.root, 0o755); err != nil {
			os.RemoveAll(home)
			return nil, r.startFailure(fmt.Errorf("create artifact root: %w", err))
		}
	}
	artifacts := ""
	if r.root != nil {
		artifacts = *r.root
	}
	envv, path := hostEnv(p, &opts, runtimeID, home, artifacts)
	envv, secrets := bindService(opts.Service, envv, secretValues(&p.Config, opts.LookupEnv))
	for _, kv := range opts.ExtraEnv {
		envv = append(envv, kv)
		if _, v, ok := strings.Cut(kv, "="); ok && len(v) >= 8 {
			secrets = append(secrets, v)
		}
	}
	bin, args, dir, err := command(p, &opts, path)
	if err != nil {
		os.RemoveAll(home)
		return nil, r.startFailure(err)
	}
	if err := checkExec(opts.CheckExec, bin, d.Requirements.Binaries, path); err != nil {
		os.RemoveAll(home)
		r.state.Store(StateFailed)
		return nil, err
	}
	sctx, cancel := host.WithDeadline(ctx, seconds(r.limits.StartSeconds))
	defer cancel()
	h, err := host.Launch(sctx, host.Spec{
		Path: bin, Args: args, Dir: dir, Env: envv, Protocol: p.HostProtocol, Home: home,
		Secrets: secrets, ExitGrace: seconds(r.limits.ExitGraceSeconds),
		Logger: opts.Logger,
	})
	if err != nil {
		os.RemoveAll(home)
		return nil, r.startFailure(err)
	}
	r.host = h
	rc := r.runtimeContext(NewID("invocation-start"), NewID("request-start"))
	sp := hostproto.StartParams{
		AgentName: p.AgentName, BaseDir: p.BaseDir, Config: plan.AgentConfig(p), RuntimeContext: rc,
		CapabilityPlan: &p.CapabilityPlan, TelemetryPlan: p.TelemetryPlan,
	}
	if opts.Service != nil {
		sp.Service = &opts.Service.Service
	}
	started, err := h.Start(sctx, sp)
	if err != nil {
		tctx, tcancel := context.WithTimeout(context.Background(), seconds(r.limits.StopSeconds))
		h.Terminate(tctx)
		tcancel()
		os.RemoveAll(home)
		return nil, r.startFailure(err)
	}
	r.handle.Interfaces = started.Interfaces
	r.started = []contract.FabricEvent{r.event(contract.EventRuntimeStart, "runtime started", map[string]any{
		"runtime_id": runtimeID, "environment_id": r.handle.Environment.EnvironmentID,
		"environment_provider": env.Provider, "host_pid": h.Pid(),
	})}
	r.state.Store(StateActive)
	opts.Logger.Debug("runtime started", "runtime_id", runtimeID, "adapter", d.AdapterID, "pid", h.Pid())
	return r, nil
}

func (r *Runtime) startFailure(err error) error {
	r.state.Store(StateFailed)
	return runtimeErr(contract.StageStart, err)
}

func limitsOf(p *contract.RunPlan) contract.LifecycleLimits {
	l := contract.LifecycleLimits{StartSeconds: plan.MaxStartSeconds, StopSeconds: plan.MaxStopSeconds, ExitGraceSeconds: plan.MaxExitGraceSeconds, InvokeSeconds: plan.MaxInvokeSeconds}
	if p.Limits != nil {
		if p.Limits.StartSeconds > 0 {
			l.StartSeconds = p.Limits.StartSeconds
		}
		if p.Limits.StopSeconds > 0 {
			l.StopSeconds = p.Limits.StopSeconds
		}
		if p.Limits.ExitGraceSeconds > 0 {
			l.ExitGraceSeconds = p.Limits.ExitGraceSeconds
		}
		if p.Limits.InvokeSeconds > 0 {
			l.InvokeSeconds = p.Limits.InvokeSeconds
		}
	}
	return l
}

// ID is the runtime id.
func (r *Runtime) ID() string { return r.handle.RuntimeID }

// Handle returns the runtime's handle with its current status.
func (r *Runtime) Handle() contract.RuntimeHandle {
	h := r.handle
	h.Status = r.State()
	if r.home != "" {
		// A helper operation that changed this runtime's state marked it
		// beside its home (internal/runtimetaint); the mark stays.
		h.Tainted, h.Taints, _ = runtimetaint.Read(r.home)
	}
	return h
}

// State is the current state.
func (r *Runtime) State() string { return r.state.Load().(string) }

// Plan is the plan the runtime was started from.
func (r *Runtime) Plan() *contract.RunPlan { return r.plan }

// HostPid is the adapter host's process id.
func (r *Runtime) HostPid() int { return r.host.Pid() }

// Exited is closed when the adapter host process has exited, whether it
// was stopped or died on its own.
func (r *Runtime) Exited() <-chan struct{} { return r.host.Exited() }

// Home is the runtime's private directory (removed at stop).
func (r *Runtime) Home() string { return r.home }

// VerifyHandle checks that h is this runtime's handle, unforged.
func (r *Runtime) VerifyHandle(h *contract.RuntimeHandle) error {
	if h.RuntimeID != r.handle.RuntimeID || !r.opts.Key.Verify(h) {
		return stateErr(CodeHandleMismatch, "the handle does not belong to this runtime or was altered")
	}
	return nil
}

func (r *Runtime) runtimeContext(invocationID, requestID string) contract.RuntimeContext {
	return contract.RuntimeContext{
		RuntimeID: r.handle.RuntimeID, InvocationID: invocationID, RequestID: requestID,
		Environment: r.handle.Environment,
		Artifacts:   contract.ArtifactManifest{Root: r.root, Artifacts: []contract.ArtifactRef{}},
		Telemetry:   &contract.RuntimeTelemetryContext{RelayEnabled: r.plan.TelemetryPlan != nil && r.plan.TelemetryPlan.RelayEnabled},
	}
}

func (r *Runtime) event(kind, msg string, md map[string]any) contract.FabricEvent {
	n := r.eventSeq.Add(1)
	id := "event-" + r.handle.RuntimeID[len("runtime-"):] + "-" + strconv.FormatInt(n, 10)
	return contract.FabricEvent{EventID: id, TimestampMillis: time.Now().UnixMilli(), Kind: kind, Message: msg, Metadata: md}
}

// Stop stops the runtime: it cancels a running invocation, sends stop
// within the stop deadline, gives the host its exit grace, kills what is
// left of its process group and removes its home. Stop is idempotent; a
// second call returns the first call's result with already_stopped set.
func (r *Runtime) Stop(ctx context.Context) (contract.RuntimeStopResult, error) {
	first := false
	r.stopOnce.Do(func() {
		first = true
		r.stopRes, r.stopErr = r.stop(ctx)
	})
	if !first {
		res := r.stopRes
		res.AlreadyStopped = true
		res.Status = "already_stopped"
		res.Events = nil
		return res, nil
	}
	return r.stopRes, r.stopErr
}

func (r *Runtime) stop(ctx context.Context) (contract.RuntimeStopResult, error) {
	prev := r.State()
	r.state.Store(StateStopping)
	stopDeadline := seconds(r.limits.StopSeconds)
	// Never wait behind an invocation longer than the stop deadline.
	r.mu.Lock()
	cancel, done, last := r.cancel, r.invDone, r.lastTurn
	r.mu.Unlock()
	if last != nil {
		last.Log.Relax() // nobody may hold up a stopping runtime
	}
	if cancel != nil {
		// A host that already died fails the running turn on its own (a
		// crash, not a cancellation): let the turn report that first.
		select {
		case <-r.host.Exited():
			select {
			case <-done:
			case <-time.After(stopDeadline):
			case <-ctx.Done():
			}
		default:
		}
		r.stopCancel.Store(true)
		go cancel()
		select {
		case <-done:
		case <-time.After(stopDeadline):
		case <-ctx.Done():
		}
	}
	res := contract.RuntimeStopResult{RuntimeID: r.handle.RuntimeID, Status: "stopped"}
	exited := false
	select {
	case <-r.host.Exited():
		exited = true
	default:
	}
	crashed := prev == StateFailed || (exited && cancel == nil)
	var stopErr error
	if !exited && prev != StateFailed {
		sctx, scancel := host.WithDeadline(ctx, stopDeadline)
		stopErr = r.host.Stop(sctx, r.handle.RuntimeID)
		scancel()
	}
	tctx, tcancel := context.WithTimeout(context.Background(), stopDeadline+seconds(r.limits.ExitGraceSeconds))
	termErr := r.host.Terminate(tctx)
	tcancel()
	if err := os.RemoveAll(r.home); err != nil && termErr == nil {
		termErr = fmt.Errorf("remove runtime home: %w", err)
	}
	res.HostCrashed = crashed || prev == StateFailed
	md := map[string]any{"runtime_id": r.handle.RuntimeID, "host_pid": r.host.Pid(), "host_crashed": res.HostCrashed}
	if r.host.Killed() {
		// The host did not exit by itself within the exit grace.
		md["host_killed"] = true
	}
	r.state.Store(StateStopped)
	var err error
	if stopErr != nil {
		var he *host.Error
		if errors.As(stopErr, &he) && he.Adapter {
			// The adapter reported a cleanup failure; the host is gone anyway.
			md["stop_error"] = he.Code
		} else {
			md["stop_error"] = fmt.Sprint(stopErr)
		}
	}
	if termErr != nil {
		res.Status = "failed"
		err = &contract.RuntimeError{Failure: contract.Failure{Stage: contract.StageStop, Code: "host_termination_failed", Message: "could not confirm the host's process group is gone", Err: termErr}}
		res.Error = errorInfo(contract.StageStop, err)
	}
	res.Events = []contract.FabricEvent{r.event(contract.EventRuntimeStop, "runtime stopped", md)}
	return res, err
}
