package adapterkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// phase is where the host's one runtime is in its life.
type phase uint8

const (
	phaseIdle     phase = iota // no start yet
	phaseStarting              // Adapter.Start running
	phaseStarted               // session live
	phaseStopping              // stopSession running
	phaseStopped               // session stopped, or start failed
)

// host is the protocol-independent lifecycle of one runtime: the state
// machine both protocol front ends (v1.go, v2.go) drive.
type host struct {
	adapter  Adapter
	cfg      *serveConfig
	log      *slog.Logger
	protocol string
	raw      io.Writer // the protocol channel, for hostfault.Writer

	// life is the context of everything the session does outside a call:
	// Adapter.Start's ctx descends from it. Cancelled when Serve returns.
	life       context.Context
	lifeCancel context.CancelFunc

	mu          sync.Mutex
	phase       phase
	startCancel context.CancelFunc // cancels Adapter.Start's ctx
	startDone   chan struct{}      // closed when the start attempt is over
	session     Session
	runtimeID   string
	failed      bool     // an adapter invoke failure: no more invokes
	inv         *running // the invoke in progress
	stopDone    chan struct{}
	stopErr     *hostproto.ErrorData
	service     bool // the session is a service (service.go): no invokes

	permissions permissionSet // pending AskPermission requests (permission.go)

	// Requests are handled concurrently, so a cancel can be handled before
	// the invoke it names. early is the id of such a cancel (one at a time:
	// the core cancels only the turn it just sent); lastInv is the id of the
	// last invoke started, so a cancel of a finished turn is not kept.
	early, lastInv string
}

// running is the invoke in progress.
type running struct {
	id     string
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the invoke has returned and been accounted
}

func newHost(ctx context.Context, a Adapter, cfg *serveConfig, proto string, raw io.Writer) *host {
	h := &host{adapter: a, cfg: cfg, log: cfg.logger, protocol: proto, raw: raw}
	h.life, h.lifeCancel = context.WithCancel(context.WithValue(ctx, hostKey{}, h))
	return h
}

// lifecycleFailure builds the error of a failed operation.
func lifecycleFailure(stage, code, msg string) *hostproto.ErrorData {
	return &hostproto.ErrorData{Stage: stage, Code: code, Message: msg}
}

// adapterFailure maps an error returned by adapter code: an *Error keeps
// its code; anything else becomes lifecycle_adapter_<op>_failed with
// upstream's generic message (the detail, which may hold anything, goes to
// the log on stderr, which the core scrubs).
func (h *host) adapterFailure(op string, err error) *hostproto.ErrorData {
	if e, ok := errors.AsType[*Error](err); ok && e.Code != "" {
		return &hostproto.ErrorData{Stage: op, Code: e.Code, Message: e.Message, Retryable: e.Retryable, Metadata: e.Metadata}
	}
	h.log.Error("adapterkit: adapter failed", "op", op, "error", err)
	return lifecycleFailure(op, "lifecycle_adapter_"+op+"_failed", "Adapter failed during lifecycle "+op)
}

// panicError is an adapter panic turned into an error.
type panicError struct{ value any }

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

func (h *host) recovered(op string, v any, err *error) {
	h.log.Error("adapterkit: adapter panicked", "op", op, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	*err = &panicError{v}
}

func (h *host) callStart(ctx context.Context, in StartInput) (s Session, err error) {
	defer func() {
		if v := recover(); v != nil {
			s = nil
			h.recovered(hostproto.OpStart, v, &err)
		}
	}()
	return h.adapter.Start(ctx, in)
}

func (h *host) callInvoke(ctx context.Context, s Session, inv Invocation) (res contract.AgentRunResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			h.recovered(hostproto.OpInvoke, v, &err)
		}
	}()
	return s.Invoke(ctx, inv)
}

func (h *host) callHealth(ctx context.Context, s Session, level, iface string) (res Health, err error) {
	defer func() {
		if v := recover(); v != nil {
			h.recovered(hostproto.MethodHealth, v, &err)
		}
	}()
	if iface != "" {
		is, ok := s.(InterfaceSession)
		if !ok {
			return res, errors.ErrUnsupported
		}
		return is.CheckInterface(ctx, iface, level)
	}
	return s.Health(ctx, level)
}

// interfaces is what the running session reports of its interfaces.
func (h *host) interfaces() []contract.InterfaceInfo {
	h.mu.Lock()
	s := h.session
	h.mu.Unlock()
	if is, ok := s.(InterfaceSession); ok {
		return is.Interfaces()
	}
	return nil
}

func (h *host) callStop(ctx context.Context, s Session) (err error) {
	defer func() {
		if v := recover(); v != nil {
			h.recovered(hostproto.OpStop, v, &err)
		}
	}()
	return s.Stop(ctx)
}

// stopContext bounds Session.Stop. It keeps life's values but not its
// cancellation: a host told to shut down by its context still stops its
// session properly.
func (h *host) stopContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(h.life), h.cfg.stopTimeout)
}

// stopQuietly stops a session nobody else will stop (a failed or abandoned
// start), logging a failure.
func (h *host) stopQuietly(s Session) {
	ctx, cancel := h.stopContext()
	defer cancel()
	if err := h.callStop(ctx, s); err != nil {
		h.log.Warn("adapterkit: adapter cleanup failed", "error", err)
	}
}

// ---- payloads ----

// startPayload is hostproto.StartParams with presence checks.
type startPayload = hostproto.StartParts

// invokePayload is hostproto.InvokeParams with presence checks.
type invokePayload struct {
	RuntimeContext *contract.RuntimeContext  `json:"runtime_context"`
	Request        *contract.AgentRunRequest `json:"request"`
}

// decodeStart decodes a start payload (a JSON object). It returns the
// runtime id even when the rest is invalid, and the error to report once
// the state checks have passed, as upstream orders them.
func decodeStart(raw json.RawMessage) (p startPayload, runtimeID string, bad *hostproto.ErrorData) {
	var err error
	if !hostproto.DecodeStartPayload(raw, &p) {
		p = startPayload{}
		err = json.Unmarshal(raw, &p)
	}
	if p.RuntimeContext != nil {
		runtimeID = p.RuntimeContext.RuntimeID
	}
	const stage = hostproto.OpStart
	switch {
	case err != nil:
		switch field := errorField(err); {
		case hasPrefixField(field, "config"):
			bad = lifecycleFailure(stage, CodeInvalidConfig, "Adapter config does not match its typed contract: "+err.Error())
		case hasPrefixField(field, "runtime_context"):
			bad = lifecycleFailure(stage, CodeInvalidContext, "Runtime context does not match its typed contract: "+err.Error())
		default:
			bad = lifecycleFailure(stage, CodeInvalidStart, "Start payload does not match its typed contract: "+err.Error())
		}
	case p.AgentName == "":
		bad = lifecycleFailure(stage, CodeInvalidStart, "Start payload is missing an agent name")
	case p.BaseDir == "":
		bad = lifecycleFailure(stage, CodeInvalidStart, "Start payload is missing a base directory")
	case p.Config == nil:
		bad = lifecycleFailure(stage, CodeInvalidConfig, "Adapter config does not match its typed contract: missing")
	case p.RuntimeContext == nil:
		bad = lifecycleFailure(stage, CodeInvalidContext, "Runtime context does not match its typed contract: missing")
	}
	return p, runtimeID, bad
}

// startRequest is the v2 conn's Go hook (wire.Options.Go): it serves a
// request on a goroutine of this package, which first grows its stack to
// 16 KiB (growStack). v1's loop, which serves every request on one
// goroutine, does the same.
func startRequest(serve func()) {
	go func() { // not go serve(): the goroutine starts in this package
		growStack(0)
		serve()
	}()
}

// growStack's frame, 8 KiB, makes its prologue grow a fresh goroutine's
// stack to 16 KiB in one step; n is never positive and the array is
// never written. A stack that size comes from the runtime's per-thread
// cache.
//
// A goroutine starts with a 2 KiB stack, and each time it outgrows it the
// runtime copies the stack to one twice the size, reading for every frame
// on it that function's entries in the binary's pc tables (.gopclntab:
// the function's record, its pc-value tables and its stack maps); the
// kernel maps the 64 KiB around each page of the binary a process touches
// (fault-around), whether one host runs or a thousand. Left to grow as
// it goes, a start (decode and Adapter.Start) copied its stack three or
// four times, an invoke twice, with a dozen packages' frames on it. Grown
// first, the one copy has only this function and the goroutine's own
// closure on the stack. Grown under internal/wire's frames (when wire
// started request goroutines), the copies read wire's entries, two
// windows nothing else in an idle host touches (bench/idle, 200 hosts:
// host RSS median 6.24 -> 6.18 MiB). A start and an invoke fit in 16 KiB;
// the invoke after a start reuses the start's stack from the cache, so an
// idle host keeps one.
//
//go:noinline
func growStack(n int) byte {
	if n > 0 {
		var frame [8 << 10]byte
		frame[n%len(frame)] = byte(n)
		return frame[(n*7)%len(frame)]
	}
	return 0
}

// decodeInvoke decodes an invoke payload like decodeStart.
func decodeInvoke(raw json.RawMessage) (p invokePayload, runtimeID string, bad *hostproto.ErrorData) {
	var err error
	if !hostproto.DecodeInvokePayload(raw, &p.RuntimeContext, &p.Request) {
		p = invokePayload{}
		err = json.Unmarshal(raw, &p)
	}
	if p.RuntimeContext != nil {
		runtimeID = p.RuntimeContext.RuntimeID
	}
	const stage = hostproto.OpInvoke
	switch {
	case err != nil:
		if hasPrefixField(errorField(err), "runtime_context") {
			bad = lifecycleFailure(stage, CodeInvalidContext, "Runtime context does not match its typed contract: "+err.Error())
		} else {
			bad = lifecycleFailure(stage, CodeInvalidRequest, "Invocation request does not match its typed contract: "+err.Error())
		}
	case p.Request == nil:
		bad = lifecycleFailure(stage, CodeInvalidRequest, "Invocation request does not match its typed contract: missing")
	case p.RuntimeContext == nil:
		bad = lifecycleFailure(stage, CodeInvalidContext, "Runtime context does not match its typed contract: missing")
	}
	return p, runtimeID, bad
}

// decodeStopRuntimeID returns the stop payload's runtime id, "" when it is
// missing or not a string.
func decodeStopRuntimeID(raw json.RawMessage) string {
	var p hostproto.StopParams
	_ = json.Unmarshal(raw, &p) // a wrong type leaves "" and is reported as such
	return p.RuntimeID
}

// errorField is the dotted JSON path of a decoding error, if it has one.
func errorField(err error) string {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return te.Field
	}
	return ""
}

func hasPrefixField(field, name string) bool {
	return field == name || strings.HasPrefix(field, name+".")
}

// ---- operations ----

// start runs a start whose payload decoded to p. adapterCalled reports
// that Adapter.Start ran and failed, after which the host must end.
func (h *host) start(p *startPayload, runtimeID string, bad *hostproto.ErrorData) (fail *hostproto.ErrorData, adapterCalled bool) {
	const op = hostproto.OpStart
	if runtimeID == "" {
		return lifecycleFailure(op, CodeInvalidRuntime, "Lifecycle payload is missing a runtime ID"), false
	}
	h.mu.Lock()
	switch h.phase {
	case phaseIdle:
	case phaseStopping, phaseStopped:
		h.mu.Unlock()
		return lifecycleFailure(op, CodeStopInProgress, "Lifecycle host is stopping"), false
	default:
		h.mu.Unlock()
		return lifecycleFailure(op, CodeAlreadyStarted, "Lifecycle host already owns a runtime"), false
	}
	if bad != nil {
		h.mu.Unlock()
		return bad, false
	}
	ctx, cancel := context.WithCancel(h.life)
	done := make(chan struct{})
	h.phase, h.startCancel, h.startDone = phaseStarting, cancel, done
	h.mu.Unlock()
	defer close(done)

	in := StartInput{
		AgentName:      p.AgentName,
		BaseDir:        p.BaseDir,
		Config:         *p.Config,
		RuntimeContext: *p.RuntimeContext,
		CapabilityPlan: p.CapabilityPlan,
		TelemetryPlan:  p.TelemetryPlan,
		Home:           os.Getenv(hostproto.EnvHome),
		Artifacts:      os.Getenv(hostproto.EnvArtifacts),
		Service:        p.Service,
		Logger:         h.log,
	}
	s, err := h.callStart(ctx, in)
	if err == nil && s == nil {
		err = errors.New("adapter returned neither a session nor an error")
	}
	h.mu.Lock()
	if err != nil {
		h.phase = phaseStopped
		h.mu.Unlock()
		if s != nil {
			h.stopQuietly(s)
		}
		cancel()
		return h.adapterFailure(op, err), true
	}
	if h.phase != phaseStarting { // a shutdown began meanwhile
		h.mu.Unlock()
		h.stopQuietly(s)
		cancel()
		return lifecycleFailure(op, CodeStopInProgress, "Lifecycle host stopped while the runtime was starting"), true
	}
	h.phase, h.session, h.runtimeID = phaseStarted, s, runtimeID
	h.mu.Unlock()
	h.log.Debug("adapterkit: runtime started", "runtime_id", runtimeID, "protocol", h.protocol)
	return nil, false
}

// invoke runs one turn and returns the encoded AgentRunResult. ctx is the
// parent of the invocation's context.
func (h *host) invoke(ctx context.Context, p *invokePayload, runtimeID string, bad *hostproto.ErrorData, em emitter) (json.RawMessage, *hostproto.ErrorData) {
	const op = hostproto.OpInvoke
	if runtimeID == "" {
		return nil, lifecycleFailure(op, CodeInvalidRuntime, "Lifecycle payload is missing a runtime ID")
	}
	h.mu.Lock()
	var fail *hostproto.ErrorData
	switch {
	case h.phase == phaseStopping || h.phase == phaseStopped:
		fail = lifecycleFailure(op, CodeStopInProgress, "Lifecycle host is stopping")
	case h.phase != phaseStarted:
		fail = lifecycleFailure(op, CodeNotStarted, "Lifecycle host has not started a runtime")
	case h.service:
		fail = lifecycleFailure(op, CodeInvalidOperation, "Lifecycle host runs a service, which takes no invocations")
	case runtimeID != h.runtimeID:
		fail = lifecycleFailure(op, CodeRuntimeMismatch, "Lifecycle payload does not match the active runtime")
	case h.failed:
		fail = lifecycleFailure(op, CodeRuntimeFailed, "Lifecycle runtime cannot accept another invocation")
	case h.inv != nil:
		fail = &hostproto.ErrorData{Stage: op, Code: CodeRuntimeBusy, Message: "Lifecycle runtime is running another invocation", Retryable: true}
	case bad != nil:
		fail = bad
	}
	if fail != nil {
		h.mu.Unlock()
		return nil, fail
	}
	ictx, cancel := context.WithCancelCause(ctx)
	r := &running{id: p.RuntimeContext.InvocationID, cancel: cancel, done: make(chan struct{})}
	h.inv, h.lastInv = r, r.id
	if h.early == r.id {
		h.early = ""
		cancel(ErrInvocationCancelled)
	}
	s := h.session
	h.mu.Unlock()

	res, err := h.callInvoke(ictx, s, Invocation{
		ID:      r.id,
		Request: *p.Request,
		Context: *p.RuntimeContext,
		Events:  em,
	})
	em.close()
	cancelled := ictx.Err() != nil
	cancel(nil)

	out, fail := h.invokeOutcome(&res, err, cancelled)
	h.mu.Lock()
	h.inv = nil
	if fail != nil {
		h.failed = true // upstream: any adapter failure ends the runtime's turns
	}
	h.mu.Unlock()
	close(r.done)
	return out, fail
}

// invokeOutcome validates and encodes what Session.Invoke returned.
func (h *host) invokeOutcome(res *contract.AgentRunResult, err error, cancelled bool) (json.RawMessage, *hostproto.ErrorData) {
	const op = hostproto.OpInvoke
	if err != nil {
		_, isLifecycle := errors.AsType[*Error](err)
		if !cancelled || isLifecycle || !errors.Is(err, context.Canceled) {
			return nil, h.adapterFailure(op, err)
		}
		// The idiomatic Go answer to a cancelled context: a cancelled turn.
		*res = contract.AgentRunResult{Status: contract.StatusCancelled}
	}
	verr := hostproto.CheckRunResult(res)
	if verr == nil {
		verr = hostproto.CheckArtifactPaths(res)
	}
	if verr != nil {
		h.log.Error("adapterkit: adapter returned an invalid AgentRunResult", "error", verr)
		return nil, lifecycleFailure(op, CodeInvalidResponse, "Adapter returned an invalid AgentRunResult: "+verr.Error())
	}
	out, merr := hostproto.MarshalRunResult(res)
	if merr != nil {
		h.log.Error("adapterkit: AgentRunResult cannot be encoded", "error", merr)
		return nil, lifecycleFailure(op, CodeInvalidResponse, "Adapter response could not be encoded as lifecycle JSON")
	}
	// Leave room for the envelope around the result.
	if len(out) > h.cfg.maxFrame-256 {
		return nil, lifecycleFailure(op, CodeInvalidResponse, fmt.Sprintf("Adapter response of %d bytes exceeds the %d byte frame limit", len(out), h.cfg.maxFrame))
	}
	return out, nil
}

// stop handles a stop request for runtimeID. With strict (v1), a stop
// before start is an error, as upstream answers; otherwise it succeeds.
// Validation failures do not stop the session here: the host ends after
// any stop request and stops the session on its way out.
func (h *host) stop(runtimeID string, strict bool) *hostproto.ErrorData {
	const op = hostproto.OpStop
	if runtimeID == "" {
		return lifecycleFailure(op, CodeInvalidRuntime, "Lifecycle payload is missing a runtime ID")
	}
	h.mu.Lock()
	ph, id := h.phase, h.runtimeID
	h.mu.Unlock()
	switch {
	case ph == phaseIdle || ph == phaseStarting || (ph == phaseStopped && id == ""):
		if strict {
			return lifecycleFailure(op, CodeNotStarted, "Lifecycle host has not started a runtime")
		}
		return h.stopSession()
	case runtimeID != id:
		return lifecycleFailure(op, CodeRuntimeMismatch, "Lifecycle payload does not match the active runtime")
	}
	return h.stopSession()
}

// stopSession stops the runtime once: it cancels an invoke in progress and
// waits for it (at most the stop grace), gives up a start in progress, then
// calls Session.Stop. Later calls wait for the first and return its
// result.
func (h *host) stopSession() *hostproto.ErrorData {
	h.mu.Lock()
	if h.stopDone != nil {
		done := h.stopDone
		h.mu.Unlock()
		if _, ok := waitFor(done, h.cfg.stopTimeout+h.cfg.stopGrace); !ok {
			return lifecycleFailure(hostproto.OpStop, CodeAdapterStopFailed, "Adapter stop did not finish in time")
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.stopErr
	}
	done := make(chan struct{})
	h.stopDone = done
	prev := h.phase
	h.phase = phaseStopping
	inv, startCancel, startDone := h.inv, h.startCancel, h.startDone
	h.mu.Unlock()

	if prev == phaseStarting {
		startCancel()
		if _, ok := waitFor(startDone, h.cfg.stopGrace); !ok {
			h.log.Warn("adapterkit: adapter start did not return after cancellation")
		}
	}
	if inv != nil {
		inv.cancel(ErrHostStopping)
		if _, ok := waitFor(inv.done, h.cfg.stopGrace); !ok {
			h.log.Warn("adapterkit: invoke did not return after cancellation; stopping the session anyway", "invocation_id", inv.id)
		}
	}
	h.mu.Lock()
	s := h.session
	h.session = nil
	h.mu.Unlock()

	var fail *hostproto.ErrorData
	if s != nil {
		ctx, cancel := h.stopContext()
		err := h.callStop(ctx, s)
		cancel()
		if err != nil {
			fail = h.adapterFailure(hostproto.OpStop, err)
		} else {
			h.log.Debug("adapterkit: runtime stopped")
		}
	}
	h.mu.Lock()
	h.phase, h.stopErr = phaseStopped, fail
	h.mu.Unlock()
	close(done)
	return fail
}

// cancelInvocation cancels the running invoke if its id is id. A cancel of
// an invocation that has not started yet is kept, and cancels that
// invocation as it starts; it reports false either way.
func (h *host) cancelInvocation(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.inv == nil || h.inv.id != id {
		if id != h.lastInv {
			h.early = id
		}
		return false
	}
	h.inv.cancel(ErrInvocationCancelled)
	return true
}

// health answers a health request at level within timeout (0: none).
func (h *host) health(ctx context.Context, level string, timeout time.Duration, iface string) (Health, *hostproto.ErrorData) {
	now := time.Now().UnixMilli()
	if level == "" {
		level = contract.LevelLive
	}
	h.mu.Lock()
	ph, failed, busy, s := h.phase, h.failed, h.inv != nil, h.session
	h.mu.Unlock()
	activity := contract.ActivityIdle
	if busy {
		activity = contract.ActivityBusy
	}
	switch {
	case ph == phaseIdle || ph == phaseStarting:
		return Health{}, lifecycleFailure(hostproto.MethodHealth, CodeNotStarted, "Lifecycle host has not started a runtime")
	case ph == phaseStopping || ph == phaseStopped:
		return Health{Outcome: contract.OutcomeUnknown, ReasonCode: contract.ReasonSessionClosed, Activity: contract.ActivityStopping, Source: "adapterkit", ObservedAtMillis: now}, nil
	case level != contract.LevelLive && level != contract.LevelActive && level != contract.LevelReady:
		return Health{Outcome: contract.OutcomeUnsupported, ReasonCode: contract.ReasonUnsupportedLevel, Activity: activity, Source: "adapterkit", ObservedAtMillis: now, Message: "unknown level"}, nil
	case failed:
		return Health{Outcome: contract.OutcomeFailed, ReasonCode: contract.ReasonHealthFailed, Activity: activity, Source: "adapterkit", ObservedAtMillis: now, Message: "the runtime failed during an invocation"}, nil
	}
	if timeout > 0 {
		// Keep some of the budget for the reply, as upstream does.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, max(timeout-50*time.Millisecond, timeout/2))
		defer cancel()
	}
	res, err := h.callHealth(ctx, s, level, iface)
	switch {
	case err != nil && ctx.Err() != nil:
		res = Health{Outcome: contract.OutcomeUnknown, ReasonCode: contract.ReasonProbeTimeout}
	case errors.Is(err, errors.ErrUnsupported):
		res = Health{Outcome: contract.OutcomeUnsupported, ReasonCode: contract.ReasonUnsupportedAdapter}
	case err != nil:
		h.log.Warn("adapterkit: adapter health failed", "level", level, "error", err)
		res = Health{Outcome: contract.OutcomeUnknown, ReasonCode: contract.ReasonProbeError}
	case res.Outcome == "":
		res.Outcome = contract.OutcomeUnknown
	}
	if res.Activity == "" {
		res.Activity = activity
	}
	if res.Source == "" {
		res.Source = "adapter"
	}
	if res.ObservedAtMillis == 0 {
		res.ObservedAtMillis = now
	}
	return res, nil
}

// emitter is an Emitter the host closes when Invoke returns.
type emitter interface {
	Emitter
	close()
}

// discardEmitter drops events (v1 has no event channel).
type discardEmitter struct{}

func (discardEmitter) Emit(Event) {}
func (discardEmitter) close()     {}
