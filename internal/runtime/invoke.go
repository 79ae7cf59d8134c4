package runtime

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/host"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/relay"
	"github.com/fabric-runtime/fabric/internal/stream"
)

// EventSink receives the invocation's events as they happen (adapter events
// arrive only over protocol v2). It must not block for long.
type EventSink func(contract.FabricEvent)

// InvokeOptions are what a caller attaches to one invocation besides its
// request.
type InvokeOptions struct {
	// Events receives the invocation's events as they happen (nil: none).
	Events EventSink
	// TraceEnv is the turn's trace context, given to the adapter in
	// runtime_context.telemetry.env.
	TraceEnv map[string]string
}

// Invoke runs one invocation. It fails at once with a *contract.StateError
// (runtime_busy) when another invocation is running, and with runtime_stopped
// or runtime_failed when the runtime cannot take turns. Otherwise it returns
// a normalized RunResult: cancelling ctx cancels the turn (status
// cancelled); a host crash, timeout or protocol violation gives a failed
// result with that code and leaves the runtime failed.
func (r *Runtime) Invoke(ctx context.Context, req contract.RunRequest, o InvokeOptions) (*contract.RunResult, error) {
	t, err := r.begin(req, o.TraceEnv)
	if err != nil {
		return nil, err
	}
	if !r.opts.FollowTurns {
		return r.run(ctx, t, &collector{sink: o.Events, keepAll: true}), nil
	}
	// A followable turn: its events also go to a log that watchers may
	// attach to; a slow watcher loses records (DropOldest), never holds
	// the harness back.
	log := stream.NewLog(stream.Limits{Policy: stream.DropOldest}, func() uint64 { return uint64(r.streamSeq.Add(1)) })
	turn := &Turn{InvocationID: t.invocationID, RequestID: t.req.RequestID, Log: log, done: make(chan struct{})}
	r.setLastTurn(turn)
	res := r.run(ctx, t, &collector{sink: o.Events, keepAll: true, log: log, ctx: ctx})
	log.Close()
	turn.res = res
	close(turn.done)
	return res, nil
}

// setLastTurn makes turn the one LastTurn returns and wakes TurnBegun's
// waiters.
func (r *Runtime) setLastTurn(turn *Turn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastTurn = turn
	if r.turnBegun != nil {
		close(r.turnBegun)
		r.turnBegun = nil
	}
}

// TurnBegun returns a channel closed when the next streamed or
// followable turn begins (LastTurn then returns it).
func (r *Runtime) TurnBegun() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.turnBegun == nil {
		r.turnBegun = make(chan struct{})
	}
	return r.turnBegun
}

// Turn is an invocation started by InvokeStream.
type Turn struct {
	InvocationID string
	RequestID    string
	Log          *stream.Log // the turn's events, in order, bounded
	// Consumer was attached before the turn began, so it misses nothing
	// (nil for a followable turn of Invoke).
	Consumer *stream.Consumer
	done     chan struct{}
	res      *contract.RunResult
	stats    stream.Stats
}

// Done is closed when the turn has ended and its result is available.
func (t *Turn) Done() <-chan struct{} { return t.done }

// Stats are the counters of a streamed turn's log, also in its result's
// metadata["stream"]; zero until Done is closed.
func (t *Turn) Stats() stream.Stats {
	select {
	case <-t.done:
		return t.stats
	default:
		return stream.Stats{}
	}
}

// Result is the turn's RunResult; nil until Done is closed.
func (t *Turn) Result() *contract.RunResult {
	select {
	case <-t.done:
		return t.res
	default:
		return nil
	}
}

// InvokeStream starts an invocation and returns at once; its events go to
// the turn's bounded log as they happen (and to o.Events, if not nil), and the
// RunResult is available from the Turn when it ends. State errors are
// returned at once, as Invoke does. Cancelling ctx cancels the turn;
// nothing a consumer of the log does cancels it. The result keeps only
// the lifecycle events (the log is the event record) and reports the
// log's counters in metadata["stream"].
func (r *Runtime) InvokeStream(ctx context.Context, req contract.RunRequest, lim stream.Limits, o InvokeOptions) (*Turn, error) {
	t, err := r.begin(req, o.TraceEnv)
	if err != nil {
		return nil, err
	}
	log := stream.NewLog(lim, func() uint64 { return uint64(r.streamSeq.Add(1)) })
	turn := &Turn{InvocationID: t.invocationID, RequestID: t.req.RequestID, Log: log, Consumer: log.Subscribe(0), done: make(chan struct{})}
	r.setLastTurn(turn)
	go func() {
		res := r.run(ctx, t, &collector{sink: o.Events, log: log, ctx: ctx})
		log.Close()
		turn.stats = log.Stats()
		res.Metadata["stream"] = turn.stats
		turn.res = res
		close(turn.done)
	}()
	return turn, nil
}

// LastTurn returns the most recent streamed (or followable) turn, for
// consumers resuming after a disconnect, or nil.
func (r *Runtime) LastTurn() *Turn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastTurn
}

// turnState is an invocation between begin and the end of run.
type turnState struct {
	req          contract.RunRequest
	invocationID string
	started      []contract.FabricEvent // the runtime's start events, on its first turn
	index        int                    // 1-based turn number
	traceEnv     map[string]string      // InvokeOptions.TraceEnv
	tctx         context.Context
	tcancel      context.CancelFunc
	done         chan struct{} // closed when run returns
	returned     chan struct{} // closed when the host answered or failed
}

// begin claims the runtime for one invocation or says why it cannot.
func (r *Runtime) begin(req contract.RunRequest, traceEnv map[string]string) (*turnState, error) {
	if !r.invoking.CompareAndSwap(false, true) {
		return nil, stateErr(CodeRuntimeBusy, "another invocation is running on runtime "+r.handle.RuntimeID)
	}
	fail := func(err error) (*turnState, error) {
		r.invoking.Store(false)
		return nil, err
	}
	switch st := r.State(); st {
	case StateActive:
	case StateStopping, StateStopped:
		return fail(stateErr(CodeRuntimeStopped, "runtime "+r.handle.RuntimeID+" is "+st))
	case StateFailed:
		return fail(stateErr(CodeRuntimeFailed, "runtime "+r.handle.RuntimeID+" has failed and takes no more invocations"))
	default:
		return fail(stateErr(CodeRuntimeStarting, "runtime "+r.handle.RuntimeID+" is "+st))
	}
	if req.RequestID == "" {
		req.RequestID = NewID("request")
	}
	t := &turnState{req: req, invocationID: NewID("invocation"), traceEnv: traceEnv, done: make(chan struct{}), returned: make(chan struct{})}
	// The turn's context ends on the invoke backstop, on Stop, or (after a
	// cancel grace) when the caller cancels.
	t.tctx, t.tcancel = host.WithDeadline(context.Background(), seconds(r.limits.InvokeSeconds))
	r.mu.Lock()
	if r.State() != StateActive { // Stop began in between
		r.mu.Unlock()
		t.tcancel()
		return fail(stateErr(CodeRuntimeStopped, "runtime "+r.handle.RuntimeID+" is stopping"))
	}
	r.state.Store(StateInvoking)
	r.cancel = func() { r.cancelTurn(t.invocationID, t.tcancel, t.returned) }
	r.invDone = t.done
	r.turns++
	t.started, r.started = r.started, nil // the first turn carries them; the runtime keeps none
	t.index = r.turns
	r.mu.Unlock()
	return t, nil
}

// run drives a begun invocation to its normalized result.
func (r *Runtime) run(ctx context.Context, t *turnState, col *collector) *contract.RunResult {
	defer r.invoking.Store(false)
	defer t.tcancel()
	defer func() {
		r.mu.Lock()
		r.cancel, r.invDone = nil, nil
		r.mu.Unlock()
		close(t.done)
	}()
	invocationID, req := t.invocationID, t.req
	for _, ev := range t.started {
		col.add(ev)
	}
	col.add(r.event(contract.EventInvocationStart, "invocation started", map[string]any{"runtime_id": r.handle.RuntimeID, "invocation_id": invocationID, "request_id": req.RequestID}))

	// The watch runs in its own goroutine when the caller cancels; once
	// it has started, the turn waits for it to finish (a WaitGroup Add
	// inside it would race with the Wait below).
	callerCancelled := make(chan struct{})
	watchDone := make(chan struct{})
	stopWatch := context.AfterFunc(ctx, func() {
		defer close(watchDone)
		close(callerCancelled)
		r.cancelTurn(invocationID, t.tcancel, t.returned)
	})
	rc := r.runtimeContext(invocationID, req.RequestID)
	if len(t.traceEnv) > 0 && rc.Telemetry != nil {
		rc.Telemetry.Env = t.traceEnv
	}
	relayTurn := r.beginRelay(t, col)
	ares, err := r.host.Invoke(t.tctx, hostproto.InvokeParams{
		RuntimeContext: rc,
		Request:        contract.AgentRunRequest{Input: req.Input, Context: req.Context},
	}, func(he hostproto.HostEvent) { col.add(r.adapterEvent(invocationID, he)) })
	close(t.returned)
	if !stopWatch() {
		<-watchDone
	}
	wasCancelled := isClosed(callerCancelled)

	res := &contract.RunResult{
		AgentName: r.plan.AgentName, Harness: r.harness, AdapterKind: r.handle.AdapterKind, AdapterID: r.handle.AdapterID,
		RuntimeID: r.handle.RuntimeID, InvocationID: invocationID, RequestID: req.RequestID,
		Artifacts: contract.ArtifactManifest{Root: r.root, Artifacts: []contract.ArtifactRef{}},
		Metadata: map[string]any{
			"adapter_runner": "persistent_local_host", "host_pid": r.host.Pid(),
			"host_protocol": r.plan.HostProtocol, "environment_provider": r.handle.Environment.Provider,
		},
	}
	if relayTurn != nil {
		ectx, ecancel := context.WithTimeout(context.Background(), 2*time.Second)
		res.Metadata["relay"] = relayTurn.End(ectx)
		ecancel()
	}
	r.normalize(res, ares, err, wasCancelled, col)
	col.add(r.event(contract.EventInvocationEnd, "invocation "+res.Status, map[string]any{"runtime_id": r.handle.RuntimeID, "invocation_id": invocationID, "status": res.Status}))
	res.Events = col.events()
	return res
}

// beginRelay opens the turn's Relay correlation, whose records become the
// turn's events, when the runtime streams Relay (Telemetry.Relay).
func (r *Runtime) beginRelay(t *turnState, col *collector) *relay.Turn {
	if r.relay == nil {
		return nil
	}
	key := relay.TurnKey{RuntimeID: r.handle.RuntimeID, InvocationID: t.invocationID, RequestID: t.req.RequestID, Index: t.index}
	turn, err := r.relay.BeginTurn(key, func(_ context.Context, ev contract.FabricEvent) error { col.add(ev); return nil })
	if err != nil {
		r.opts.Logger.Warn("runtime: turn observer", "observer", "relay", "error", err)
		return nil
	}
	return turn
}

// cancelTurn asks the host to cancel (v2), then kills the turn after the
// grace; a v1 host cannot cancel, so its turn ends by terminating the host.
func (r *Runtime) cancelTurn(invocationID string, tcancel context.CancelFunc, returned <-chan struct{}) {
	if r.plan.HostProtocol == contract.HostProtocolV2 {
		cctx, ccancel := context.WithTimeout(context.Background(), CancelGrace)
		_, err := r.host.Cancel(cctx, invocationID)
		ccancel()
		if err == nil {
			t := time.NewTimer(CancelGrace)
			defer t.Stop()
			select {
			case <-returned:
				return
			case <-t.C:
			}
		}
	}
	tcancel()
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (r *Runtime) normalize(res *contract.RunResult, ares contract.AgentRunResult, err error, cancelled bool, col *collector) {
	endState := StateActive
	defer func() {
		r.mu.Lock()
		if r.State() == StateInvoking {
			r.state.Store(endState)
		}
		r.mu.Unlock()
	}()
	if err != nil {
		var he *host.Error
		fatal := !errors.As(err, &he) || he.Fatal()
		if fatal {
			endState = StateFailed
			r.killHost()
		}
		switch {
		case cancelled:
			res.Status = contract.StatusCancelled
			res.Error = &contract.ErrorInfo{Stage: contract.StageInvoke, Code: CodeCancelled, Message: "the invocation was cancelled by the caller"}
			if fatal {
				res.Error.Message += "; the host could not cancel in time and was stopped"
				res.Error.Metadata = map[string]any{"runtime_failed": true}
			}
		case r.State() == StateStopping && r.stopCancel.Load():
			res.Status = contract.StatusCancelled
			res.Error = &contract.ErrorInfo{Stage: contract.StageInvoke, Code: CodeCancelled, Message: "the runtime was stopped during the invocation"}
		default:
			res.Status = contract.StatusFailed
			res.Error = errorInfo(contract.StageInvoke, runtimeErr(contract.StageInvoke, err))
			res.Error.Stage = contract.StageInvoke
		}
		res.Output = nil
		return
	}
	res.Status = ares.Status
	res.Output = ares.Output
	res.Usage = ares.Usage
	if ares.Error != nil {
		res.Error = &contract.ErrorInfo{Stage: contract.StageInvoke, Code: ares.Error.Code, Message: ares.Error.Message, Retryable: ares.Error.Retryable}
		if len(ares.Error.Extensions) > 0 {
			res.Error.Metadata = ares.Error.Extensions
		}
	}
	if cancelled && res.Status == contract.StatusSucceeded {
		// The turn finished before the cancel reached it: report what happened.
		res.Metadata["cancel_requested"] = true
	}
	if res.Status == contract.StatusCancelled && res.Error == nil {
		res.Error = &contract.ErrorInfo{Stage: contract.StageInvoke, Code: CodeCancelled, Message: "the invocation was cancelled"}
	}
	for _, a := range ares.Artifacts {
		ref, ok := r.checkArtifact(a)
		if !ok {
			col.add(r.event(CodeArtifactRejected, "artifact path escapes the artifact root", map[string]any{"name": a.Name, "path": a.Path}))
			rej, _ := res.Metadata["rejected_artifacts"].([]string)
			res.Metadata["rejected_artifacts"] = append(rej, a.Path)
			continue
		}
		res.Artifacts.Artifacts = append(res.Artifacts.Artifacts, ref)
	}
}

// checkArtifact keeps an artifact only if its path stays inside the root.
func (r *Runtime) checkArtifact(a contract.AgentArtifact) (contract.ArtifactRef, bool) {
	if !hostproto.ArtifactPathOK(a.Path) {
		return contract.ArtifactRef{}, false
	}
	clean := path.Clean(strings.ReplaceAll(a.Path, `\`, "/"))
	if r.root != nil {
		full := filepath.Join(*r.root, filepath.FromSlash(clean))
		if resolved, err := filepath.EvalSymlinks(full); err == nil {
			rootResolved, rerr := filepath.EvalSymlinks(*r.root)
			if rerr == nil {
				rel, err := filepath.Rel(rootResolved, resolved)
				if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
					return contract.ArtifactRef{}, false
				}
			}
		}
	}
	ref := contract.ArtifactRef{Name: a.Name, Kind: a.Kind, Path: clean, MediaType: a.MediaType}
	if len(a.Extensions) > 0 {
		ref.Metadata = a.Extensions
	}
	return ref, true
}

// killHost terminates a host that can no longer be trusted.
func (r *Runtime) killHost() {
	ctx, cancel := context.WithTimeout(context.Background(), seconds(r.limits.StopSeconds))
	defer cancel()
	r.host.Kill(ctx)
}

func (r *Runtime) adapterEvent(invocationID string, he hostproto.HostEvent) contract.FabricEvent {
	ev := r.event(he.Kind, he.Message, he.Metadata)
	if he.TimestampMillis > 0 {
		ev.TimestampMillis = he.TimestampMillis
	}
	if ev.Kind == "" {
		ev.Kind = "adapter_event"
	}
	if ev.Metadata == nil {
		ev.Metadata = map[string]any{}
	}
	ev.Metadata["invocation_id"] = invocationID
	return ev
}

// collector gathers an invocation's events and forwards them live: to the
// sink, and to the turn's stream log when streaming. A streamed turn keeps
// only lifecycle events for its result; the log is its event record.
type collector struct {
	mu      sync.Mutex
	list    []contract.FabricEvent
	keepAll bool
	sink    EventSink
	log     *stream.Log
	ctx     context.Context // bounds waiting on the log (the turn's caller)
}

// add is called by the host's event path and by turn observers; it keeps
// one order for the list, the log and the sink.
func (c *collector) add(ev contract.FabricEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keepAll || lifecycleEvent(ev.Kind) {
		c.list = append(c.list, ev)
	}
	if c.log != nil {
		_, _ = c.log.Append(c.ctx, ev)
	}
	if c.sink != nil {
		c.sink(ev)
	}
}

func lifecycleEvent(kind string) bool {
	switch kind {
	case contract.EventRuntimeStart, contract.EventInvocationStart, contract.EventInvocationEnd:
		return true
	}
	return false
}

func (c *collector) events() []contract.FabricEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]contract.FabricEvent(nil), c.list...)
}
