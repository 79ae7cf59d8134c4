package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/host"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/plan"
	"github.com/fabric-runtime/fabric/internal/relay"
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
	Env        []string // base environment of hosts (default os.Environ() at each launch)
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
	// ExtraEnv is added to the host's environment last (a per-runtime
	// credential, say). Its values are scrubbed from diagnostics.
	ExtraEnv []string
	// FollowTurns makes every invocation followable, not only streamed
	// ones: Invoke also keeps the turn's events in a bounded log (that
	// never holds the harness back) that LastTurn and Follow see.
	FollowTurns bool
}

// Telemetry is what a runtime's start is given by the observers its
// caller owns (internal/telemetry, internal/relay).
type Telemetry struct {
	// TraceEnv ("NAME=value") carries the trace context of the start to
	// the host's environment (TRACEPARENT); scrubbed as ExtraEnv is.
	TraceEnv []string
	// Relay is the ATOF listener of a plan that enables NeMo Relay: the
	// host is given the listener's sink in its Relay config and its
	// credentials in its environment, and each turn's Relay records are
	// correlated into the turn's events (metadata "relay"). Nil, or a
	// plan without Relay, streams nothing.
	Relay *relay.Listener
}

// DefaultStateDir is where runtime homes go when Options.StateDir is
// empty: $TMPDIR/fabric-hosts.
func DefaultStateDir() string { return filepath.Join(os.TempDir(), "fabric-hosts") }

func (o *Options) fill() {
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir()
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
	// relay correlates Relay records into turns (Telemetry.Relay), and
	// telemetry is the plan's telemetry with its sink, as the host got it.
	relay     *relay.Listener
	telemetry *contract.TelemetryPlan

	state    atomic.Value // string
	invoking atomic.Bool
	// stopCancel is set when Stop cancels a running turn (the turn is then
	// cancelled; a turn whose host died first is failed).
	stopCancel atomic.Bool
	mu         sync.Mutex // guards below
	cancel     func()     // cancels the running invocation (cancel, grace, then hard stop)
	invDone    chan struct{}
	started    []contract.FabricEvent // runtime_start, attached to the first result (nil after it)
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

// New prepares a runtime for the plan without starting anything: it
// mints the runtime's id and builds its handle, bound with opts.Key, in
// state starting. (*Runtime).Start launches it.
func New(p *contract.RunPlan, opts Options) (*Runtime, error) {
	if err := CheckPlan(p, contract.StageStart); err != nil {
		return nil, err
	}
	opts.fill()
	d := &p.AdapterDescriptor.Descriptor
	r := &Runtime{plan: p, opts: opts, limits: limitsOf(p), harness: d.Harness, telemetry: p.TelemetryPlan}
	if r.harness == "" {
		r.harness = d.AdapterID
	}
	env := environmentOf(p)
	if env.Artifacts != nil {
		r.root = env.Artifacts
	} else if p.Config.Runtime.Artifacts != nil {
		r.root = p.Config.Runtime.Artifacts
	}
	r.handle = contract.RuntimeHandle{
		RuntimeID: NewID("runtime"), AgentName: p.AgentName, Harness: r.harness,
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
	return r, nil
}

// environmentOf is the plan's environment, local when it names none.
func environmentOf(p *contract.RunPlan) *contract.EnvironmentConfig {
	if p.EnvironmentPlan != nil {
		return p.EnvironmentPlan
	}
	return &contract.EnvironmentConfig{Provider: contract.EnvironmentLocal, ControlLocation: contract.ControlInEnv, Ownership: contract.OwnershipCaller}
}

// Start is New, then (*Runtime).Start with no telemetry.
func Start(ctx context.Context, p *contract.RunPlan, opts Options) (*Runtime, error) {
	r, err := New(p, opts)
	if err != nil {
		return nil, err
	}
	if err := r.Start(ctx, Telemetry{}); err != nil {
		return nil, err
	}
	return r, nil
}

// Start launches the runtime's adapter host and sends start within the
// start deadline; it is called once, on a runtime from New. On failure
// the runtime is failed and nothing is left behind: the host's process
// group is killed and its home removed.
func (r *Runtime) Start(ctx context.Context, tel Telemetry) error {
	relayEnv, err := r.attachRelay(tel.Relay)
	if err != nil {
		r.state.Store(StateFailed)
		return err
	}
	if err := r.makeHome(); err != nil {
		return r.startFailure(err)
	}
	spec, err := r.hostSpec(slices.Concat(r.opts.ExtraEnv, tel.TraceEnv, relayEnv))
	if err != nil {
		os.RemoveAll(r.home)
		return err
	}
	sctx, cancel := host.WithDeadline(ctx, seconds(r.limits.StartSeconds))
	defer cancel()
	h, err := host.Launch(sctx, spec)
	if err != nil {
		os.RemoveAll(r.home)
		return r.startFailure(err)
	}
	r.host = h
	if err := r.sendStart(sctx); err != nil {
		tctx, tcancel := context.WithTimeout(context.Background(), seconds(r.limits.StopSeconds))
		h.Terminate(tctx)
		tcancel()
		os.RemoveAll(r.home)
		return r.startFailure(err)
	}
	r.state.Store(StateActive)
	r.opts.Logger.Debug("runtime started", "runtime_id", r.handle.RuntimeID, "adapter", r.handle.AdapterID, "pid", h.Pid())
	return nil
}

// attachRelay keeps l for the runtime's turns when the plan enables Relay
// and adds l's sink to the telemetry plan the host gets. It returns the
// sink's credentials for the host's environment.
func (r *Runtime) attachRelay(l *relay.Listener) ([]string, error) {
	tp := r.plan.TelemetryPlan
	if l == nil || tp == nil || !tp.RelayEnabled {
		return nil, nil
	}
	sc := l.SinkConfig(r.handle.RuntimeID)
	withSink, err := relay.WithSink(tp, sc)
	if err != nil {
		return nil, &contract.ConfigError{Failure: contract.Failure{Stage: contract.StageStart, Code: "invalid_relay_config", Path: "relay", Message: err.Error(), Err: err}}
	}
	r.relay, r.telemetry = l, withSink
	env := make([]string, 0, len(sc.Env))
	for k, v := range sc.Env {
		env = append(env, k+"="+v)
	}
	return env, nil
}

// makeHome creates the runtime's private home under the state dir, and
// its artifact root.
func (r *Runtime) makeHome() error {
	if err := os.MkdirAll(r.opts.StateDir, 0o700); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	home, err := os.MkdirTemp(r.opts.StateDir, r.handle.RuntimeID+"-")
	if err != nil {
		return fmt.Errorf("create runtime home: %w", err)
	}
	if r.root != nil {
		if err := os.MkdirAll(*r.root, 0o755); err != nil {
			os.RemoveAll(home)
			return fmt.Errorf("create artifact root: %w", err)
		}
	}
	r.home = home
	return nil
}

// hostSpec builds the host's command line and environment, with extra
// ("NAME=value") added last; their values and the config's secrets are
// scrubbed from its diagnostics. A CheckExec refusal is returned as it is.
func (r *Runtime) hostSpec(extra []string) (host.Spec, error) {
	p, opts := r.plan, &r.opts
	artifacts := ""
	if r.root != nil {
		artifacts = *r.root
	}
	envv, path := hostEnv(p, opts, r.handle.RuntimeID, r.home, artifacts)
	envv, secrets := bindService(opts.Service, envv, secretValues(&p.Config, opts.LookupEnv))
	for _, kv := range extra {
		envv = append(envv, kv)
		if _, v, ok := strings.Cut(kv, "="); ok && len(v) >= 8 {
			secrets = append(secrets, v)
		}
	}
	bin, args, dir, err := command(p, opts, path)
	if err != nil {
		return host.Spec{}, r.startFailure(err)
	}
	if err := checkExec(opts.CheckExec, bin, p.AdapterDescriptor.Descriptor.Requirements.Binaries, path); err != nil {
		r.state.Store(StateFailed)
		return host.Spec{}, err
	}
	return host.Spec{
		Path: bin, Args: args, Dir: dir, Env: envv, Protocol: p.HostProtocol, Home: r.home,
		Secrets: secrets, ExitGrace: seconds(r.limits.ExitGraceSeconds),
		Logger: opts.Logger,
	}, nil
}

// sendStart sends start to the launched host and keeps what it reports:
// the interfaces it serves, and the runtime_start event of the first
// result.
func (r *Runtime) sendStart(ctx context.Context) error {
	p := r.plan
	sp := hostproto.StartParams{
		AgentName: p.AgentName, BaseDir: p.BaseDir, Config: plan.AgentConfig(p),
		RuntimeContext: r.runtimeContext(NewID("invocation-start"), NewID("request-start")),
		CapabilityPlan: &p.CapabilityPlan, TelemetryPlan: r.telemetry,
	}
	if r.opts.Service != nil {
		sp.Service = &r.opts.Service.Service
	}
	started, err := r.host.Start(ctx, sp)
	if err != nil {
		return err
	}
	r.handle.Interfaces = started.Interfaces
	r.started = []contract.FabricEvent{r.event(contract.EventRuntimeStart, "runtime started", map[string]any{
		"runtime_id": r.handle.RuntimeID, "environment_id": r.handle.Environment.EnvironmentID,
		"environment_provider": r.handle.Environment.Provider, "host_pid": r.host.Pid(),
	})}
	return nil
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
