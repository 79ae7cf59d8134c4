package runtime

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/health"
	"github.com/fabric-runtime/fabric/internal/host"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// Check runs a bounded health check of this runtime. req must be
// normalized (health.Normalize) and name this runtime. It never changes
// the runtime's state and never waits behind an invocation: a v2 host
// answers health while it works; a v1 host gets process-level evidence.
func (r *Runtime) Check(ctx context.Context, req contract.CheckRequest) contract.CheckReport {
	return health.Check(ctx, req, checkTarget{r: r, iface: req.Interface})
}

type checkTarget struct {
	r     *Runtime
	iface string // a harness interface instead of the runtime
}

func (t checkTarget) Observe() health.Observation {
	r := t.r
	state := r.State()
	o := health.Observation{
		Generation: r.handle.RuntimeID + "/" + strconv.Itoa(r.host.Pid()),
		State:      state,
		Activity:   activityOf(state),
	}
	select {
	case <-r.host.Exited():
		o.Exited = true
	default:
	}
	switch state {
	case StateStopped:
		o.Gone, o.Reason = true, contract.ReasonRuntimeUnavailable
	case StateStopping:
		o.Stopping, o.Reason = true, contract.ReasonRuntimeUnavailable
	case StateFailed:
		if !o.Exited {
			// The core gave up on this host (a deadline or a protocol
			// failure): it is no longer a working runtime.
			o.Gone, o.Reason = true, contract.ReasonRuntimeUnavailable
		}
	}
	return o
}

func (t checkTarget) Probe(ctx context.Context, level string) (hostproto.HealthResult, error) {
	r := t.r
	var budget int64
	if dl, ok := ctx.Deadline(); ok {
		budget = max(time.Until(dl).Milliseconds(), 1)
	}
	res, err := r.host.Health(ctx, hostproto.HealthParams{Level: level, TimeoutMillis: budget, Interface: t.iface})
	if t.iface != "" && errors.Is(err, errors.ErrUnsupported) {
		// A host without health has no interface evidence either.
		return hostproto.HealthResult{Outcome: contract.OutcomeUnsupported, ReasonCode: contract.ReasonUnsupportedAdapter, Source: health.Source,
			Message: "the adapter host has no health method (protocol v1)"}, nil
	}
	if err == nil || errors.Is(err, errors.ErrUnsupported) {
		return res, err
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	var he *host.Error
	if errors.As(err, &he) && (he.Code == host.CodeHostCrashed || he.Code == host.CodeHostIO) {
		// The exit is noticed a moment after the channel breaks.
		select {
		case <-r.host.Exited():
			return res, health.ErrExited
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return res, err
}

func activityOf(state string) string {
	switch state {
	case StateActive:
		return contract.ActivityIdle
	case StateInvoking:
		return contract.ActivityBusy
	case StateStopping:
		return contract.ActivityStopping
	case StateStopped:
		return contract.ActivityStopped
	}
	return contract.ActivityUnknown
}
