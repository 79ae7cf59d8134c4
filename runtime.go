package fabric

import (
	"context"
	"errors"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/runtime"
)

// Runtime is one started runtime: it keeps harness state across ordered
// invocations until Stop. It is safe for concurrent use, but takes one
// invocation at a time: an overlapping Invoke fails at once with a
// *StateError whose Code is "runtime_busy".
type Runtime struct {
	rt  *runtime.Runtime
	reg *registry // the client's live runtimes, for Client.Check
	obs runtimeObs
}

// InvokeOption adjusts one invocation.
type InvokeOption func(*invokeConfig)

type invokeConfig struct {
	requestID string
	metadata  map[string]any
	events    func(contract.FabricEvent)
}

// WithRequestID sets the caller's request id (kept in the result).
func WithRequestID(id string) InvokeOption { return func(c *invokeConfig) { c.requestID = id } }

// WithMetadata attaches the caller's metadata (task, rollout, workflow) to
// the invocation.
func WithMetadata(md map[string]any) InvokeOption { return func(c *invokeConfig) { c.metadata = md } }

// WithEvents receives the invocation's events as they happen.
func WithEvents(fn func(contract.FabricEvent)) InvokeOption {
	return func(c *invokeConfig) { c.events = fn }
}

// StartRuntime plans a loaded config and starts a runtime for it. The start
// deadline, the adapter host's environment and its process group are owned
// by Fabric; a failed start leaves nothing behind. Options bind the
// runtime to a service (WithService).
func (c *Client) StartRuntime(ctx context.Context, l *Loaded, opts ...StartOption) (*Runtime, error) {
	sc := startOptions(opts)
	if err := sc.refuse(&l.Config); err != nil {
		return nil, err
	}
	p, err := c.Plan(ctx, l)
	if err != nil {
		return nil, err
	}
	return c.start(ctx, p, sc)
}

// StartPlan starts a runtime for an already resolved plan.
func (c *Client) StartPlan(ctx context.Context, p *contract.RunPlan, opts ...StartOption) (*Runtime, error) {
	if err := runtime.CheckPlan(p, contract.StageStart); err != nil {
		return nil, err
	}
	sc := startOptions(opts)
	if err := sc.refuse(&p.Config); err != nil {
		return nil, err
	}
	return c.start(ctx, p, sc)
}

// start starts a runtime for p: the runtime mints its id and builds its
// handle, the client adds the start's span and its telemetry sources.
func (c *Client) start(ctx context.Context, p *contract.RunPlan, sc startConfig) (*Runtime, error) {
	ro := c.runtimeOptions()
	ro.ExtraPath, ro.CheckExec = c.execPaths(p.Package)
	ro.ExtraEnv, ro.FollowTurns = sc.env, sc.follow
	started, err := sc.bind(p, &ro)
	if err != nil {
		return nil, err
	}
	rt, err := runtime.New(p, ro)
	var obs runtimeObs
	if err == nil {
		obs, err = c.observeStart(ctx, rt)
	}
	if err != nil {
		started(nil)
		return nil, err
	}
	started(rt)
	r := &Runtime{rt: rt, reg: &c.live, obs: obs}
	c.live.addRuntime(r)
	return r, nil
}

func (c *Client) runtimeOptions() runtime.Options {
	o := runtime.Options{
		HostBinary: c.hostBinary, StateDir: c.stateDir,
		LookupEnv: c.lookupEnv, Key: c.key, Logger: c.logger, Env: c.env,
	}
	o.ExtraPath, o.CheckExec = c.execPaths(nil)
	return o
}

// Invoke runs one invocation with input. Cancelling ctx cancels the turn
// and the result's status is "cancelled". A host crash or deadline gives a
// "failed" result and leaves the runtime failed; only state errors (busy,
// stopped, failed) are returned as errors.
func (r *Runtime) Invoke(ctx context.Context, input any, opts ...InvokeOption) (*contract.RunResult, error) {
	var ic invokeConfig
	for _, o := range opts {
		o(&ic)
	}
	return r.InvokeRequest(ctx, contract.RunRequest{RequestID: ic.requestID, Input: input, Context: ic.metadata}, ic.events)
}

// InvokeRequest runs one invocation from a full RunRequest.
func (r *Runtime) InvokeRequest(ctx context.Context, req contract.RunRequest, events func(contract.FabricEvent)) (*contract.RunResult, error) {
	ctx, span, inv := r.invocationSpan(ctx, events)
	res, err := r.rt.Invoke(ctx, req, inv)
	span.End(res, err)
	return res, err
}

// Stop stops the runtime; it is idempotent and never waits behind an
// invocation longer than the stop deadline.
func (r *Runtime) Stop(ctx context.Context) (contract.RuntimeStopResult, error) {
	defer r.reg.removeRuntime(r)
	_, end := r.obs.tel.RuntimeStop(ctx, r.rt.Handle())
	res, err := r.rt.Stop(ctx)
	end(err)
	return res, err
}

// Handle returns the runtime's handle.
func (r *Runtime) Handle() contract.RuntimeHandle { return r.rt.Handle() }

// ID returns the runtime id.
func (r *Runtime) ID() string { return r.rt.ID() }

// State returns starting, active, invoking, stopping, stopped or failed.
func (r *Runtime) State() string { return r.rt.State() }

// HostPid returns the adapter host's process id, which is also its
// process group id. It is for diagnostics (logs, status, ps) and for
// Fabric's conformance checks: the runtime owns the process and its
// group, so stop it with Stop, never with a signal of your own.
func (r *Runtime) HostPid() int { return r.rt.HostPid() }

// Exited is closed when the runtime's adapter host has exited: after Stop,
// or when it died on its own (a crash, a kill), which a supervisor watches
// to apply its restart policy.
func (r *Runtime) Exited() <-chan struct{} { return r.rt.Exited() }

// Run starts a runtime, invokes it once with input and stops it. A cleanup
// failure is joined to the invocation's error instead of replacing it.
func (c *Client) Run(ctx context.Context, l *Loaded, input any, opts ...InvokeOption) (*contract.RunResult, error) {
	rt, err := c.StartRuntime(ctx, l)
	if err != nil {
		return nil, err
	}
	res, invErr := rt.Invoke(ctx, input, opts...)
	_, stopErr := rt.Stop(context.WithoutCancel(ctx))
	return res, errors.Join(invErr, stopErr)
}
