// Package health evaluates bounded health checks (the CheckRequest /
// CheckReport model): cumulative levels live → active → ready, each an
// attempted stage recorded in order, under one deadline for the whole
// check. A check never changes what it observes and never calls a model;
// a timeout or a change of what was observed gives unknown, never failed.
//
// The package knows nothing of hosts or harnesses: a Target supplies the
// core's own observation and the adapter's evidence.
package health

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// DefaultTimeout is the deadline of a check that names none.
const DefaultTimeout = 3 * time.Second

// MaxTimeout bounds a check's deadline.
const MaxTimeout = 120 * time.Second

// replyReserve is kept from the deadline for assembling the report.
const replyReserve = 50 * time.Millisecond

// Observation is the core's own view of a target, taken without asking it.
type Observation struct {
	// Generation identifies what is observed (a runtime or service id plus
	// anything that changes when it is replaced); a change between the
	// start and the end of a check makes the check unknown.
	Generation string
	State      string // the target's lifecycle state
	Activity   string // contract.Activity*: counts only Fabric invocations
	// Gone is set when the target no longer exists or has stopped; Reason
	// says why (runtime_unavailable, service_unavailable...).
	Gone   bool
	Reason string
	// Exited is set when the native process has been observed to exit.
	Exited bool
	// Stopping is set while the target is being stopped or released.
	Stopping bool
}

// ErrExited is returned by Target.Probe when the process exited while it
// was asked.
var ErrExited = errors.New("health: process exited")

// Target is what a check observes.
type Target interface {
	// Observe returns the core's view now. It must not block.
	Observe() Observation
	// Probe asks the adapter for evidence at level. It returns
	// errors.ErrUnsupported when the target has no way to answer (a v1
	// host), ErrExited when the process went away, and otherwise the
	// adapter's answer; ctx carries the remaining deadline.
	Probe(ctx context.Context, level string) (hostproto.HealthResult, error)
}

// Levels in evaluation order.
var levels = []string{contract.LevelLive, contract.LevelActive, contract.LevelReady}

func levelIndex(level string) int {
	for i, l := range levels {
		if l == level {
			return i
		}
	}
	return -1
}

// Error is an invalid check request; Path names the offending field.
type Error struct {
	Path    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Message) }

// Normalize validates req for scope and fills its defaults (schema
// version, timeout, level). Server requests reject runtime ids, service
// ids and levels; runtime and service requests need their id.
func Normalize(req *contract.CheckRequest) error {
	if req.SchemaVersion == "" {
		req.SchemaVersion = contract.CheckSchemaVersion
	} else if req.SchemaVersion != contract.CheckSchemaVersion {
		return &Error{"schema_version", fmt.Sprintf("must be %q, got %q", contract.CheckSchemaVersion, req.SchemaVersion)}
	}
	t := req.TimeoutSeconds
	switch {
	case t == 0:
		req.TimeoutSeconds = DefaultTimeout.Seconds()
	case math.IsNaN(t) || math.IsInf(t, 0) || t < 0:
		return &Error{"timeout_seconds", "must be a positive finite number of seconds"}
	case t > MaxTimeout.Seconds():
		return &Error{"timeout_seconds", fmt.Sprintf("must be at most %g", MaxTimeout.Seconds())}
	}
	switch req.Scope {
	case contract.ScopeServer:
		switch {
		case req.Interface != "":
			return &Error{"interface", "a server check takes no interface"}
		case req.RuntimeID != "":
			return &Error{"runtime_id", "a server check takes no runtime id"}
		case req.ServiceID != "":
			return &Error{"service_id", "a server check takes no service id"}
		case req.Level != "":
			return &Error{"level", "a server check takes no level"}
		}
		return nil
	case contract.ScopeRuntime:
		if req.ServiceID != "" {
			return &Error{"service_id", "a runtime check takes no service id"}
		}
	case contract.ScopeService:
		if req.RuntimeID != "" {
			return &Error{"runtime_id", "a service check takes no runtime id"}
		}
		if req.Interface != "" {
			return &Error{"interface", "services run no interfaces"}
		}
	case "":
		return &Error{"scope", "is required (server, runtime or service)"}
	default:
		return &Error{"scope", fmt.Sprintf("must be server, runtime or service, got %q", req.Scope)}
	}
	if req.Level == "" {
		req.Level = contract.LevelLive
	} else if levelIndex(req.Level) < 0 {
		return &Error{"level", fmt.Sprintf("must be live, active or ready, got %q", req.Level)}
	}
	return nil
}

// Timeout is the deadline of a normalized request.
func Timeout(req *contract.CheckRequest) time.Duration {
	return time.Duration(req.TimeoutSeconds * float64(time.Second))
}

// Source names the core's own evidence in observations.
const Source = "fabric.core"

// Check evaluates a normalized runtime or service request against t within
// the request's deadline (bounded further by ctx).
func Check(ctx context.Context, req contract.CheckRequest, t Target) contract.CheckReport {
	started := time.Now()
	ctx, cancel := context.WithTimeout(ctx, max(Timeout(&req)-replyReserve, Timeout(&req)/2))
	defer cancel()
	rep := newReport(req, started)
	level := req.Level
	rep.RequestedLevel = &level

	before := t.Observe()
	finish := func(outcome, reason string) contract.CheckReport {
		after := t.Observe()
		if after.Generation != before.Generation {
			outcome, reason = contract.OutcomeUnknown, contract.ReasonObservationChanged
			rep.Observations = append(rep.Observations, observe("observation", "", contract.OutcomeUnknown, contract.ReasonObservationChanged, Source, time.Now(), 0, "the target changed while it was checked"))
		}
		rep.Runtime = &contract.RuntimeObservation{State: after.State, Activity: after.Activity}
		return complete(rep, started, outcome, reason)
	}

	// Stage 1: the core's own record of the target; stage 2: the native
	// process, observed by the core.
	if outcome, reason, ok := coreEvidence(rep, before); !ok {
		return finish(outcome, reason)
	}

	// Stages 3..: the adapter's evidence, level by level.
	stage := "adapter"
	if req.Interface != "" {
		stage = "interface"
	}
	for _, lv := range levels[:levelIndex(req.Level)+1] {
		t0 := time.Now()
		res, err := t.Probe(ctx, lv)
		elapsed := time.Since(t0)
		if errors.Is(err, errors.ErrUnsupported) && lv == contract.LevelLive {
			// Process evidence is all a host without health gives; it is
			// enough for live.
			continue
		}
		outcome, reason, source, msg := classify(ctx, res, err)
		o := observe(stage, lv, outcome, reason, source, t0, elapsed, msg)
		if err == nil && res.ObservedAtMillis > 0 {
			o.ObservedAtMillis = res.ObservedAtMillis
		}
		if err == nil {
			for k, v := range res.Metadata {
				if _, ok := o.Metadata[k]; !ok {
					o.Metadata[k] = v
				}
			}
		}
		rep.Observations = append(rep.Observations, o)
		if outcome != contract.OutcomePassed {
			return finish(outcome, reason)
		}
	}
	return finish(contract.OutcomePassed, "")
}

// coreEvidence adds the core's own observations of the target to rep:
// its recorded state, then its host process. ok is false, with the
// check's outcome and reason, when they already decide the check.
func coreEvidence(rep *contract.CheckReport, before Observation) (outcome, reason string, ok bool) {
	t0 := time.Now()
	if before.Gone || before.Stopping {
		outcome, reason = contract.OutcomeFailed, before.Reason
		if before.Stopping && !before.Gone {
			outcome = contract.OutcomeUnknown
		}
		if reason == "" {
			reason = contract.ReasonRuntimeUnavailable
		}
		rep.Observations = append(rep.Observations, observe("state", "", outcome, reason, Source, t0, time.Since(t0), "state "+before.State))
		return outcome, reason, false
	}
	rep.Observations = append(rep.Observations, observe("state", "", contract.OutcomePassed, "", Source, t0, time.Since(t0), "state "+before.State))

	t0 = time.Now()
	if before.Exited {
		rep.Observations = append(rep.Observations, observe("process", contract.LevelLive, contract.OutcomeFailed, contract.ReasonAgentExited, Source, t0, time.Since(t0), "the adapter host process has exited"))
		return contract.OutcomeFailed, contract.ReasonAgentExited, false
	}
	rep.Observations = append(rep.Observations, observe("process", contract.LevelLive, contract.OutcomePassed, "", Source, t0, time.Since(t0), "the adapter host process is running"))
	return "", "", true
}

// classify turns one probe's answer (or failure) into an observation's
// outcome, reason, source and message.
func classify(ctx context.Context, res hostproto.HealthResult, err error) (outcome, reason, source, msg string) {
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return contract.OutcomeUnsupported, contract.ReasonUnsupportedAdapter, Source, "the adapter host has no health method (protocol v1)"
	case errors.Is(err, ErrExited):
		return contract.OutcomeFailed, contract.ReasonAgentExited, Source, "the adapter host process exited during the check"
	case err != nil && ctx.Err() != nil:
		return contract.OutcomeUnknown, contract.ReasonProbeTimeout, Source, "no answer within the check's deadline"
	case err != nil:
		return contract.OutcomeUnknown, contract.ReasonProbeError, Source, err.Error()
	}
	outcome, reason, source, msg = res.Outcome, res.ReasonCode, res.Source, res.Message
	if !validOutcome(outcome) {
		outcome, reason, msg = contract.OutcomeUnknown, contract.ReasonProbeError, fmt.Sprintf("the adapter answered outcome %q", res.Outcome)
	}
	if outcome == contract.OutcomePassed {
		reason = ""
	} else if reason == "" {
		reason = defaultReason(outcome)
	}
	if source == "" {
		source = "adapter"
	}
	return outcome, reason, source, msg
}

// Unsupported is the report for a scope this caller cannot check.
func Unsupported(req contract.CheckRequest, reason, msg string) contract.CheckReport {
	started := time.Now()
	rep := newReport(req, started)
	if req.Level != "" {
		level := req.Level
		rep.RequestedLevel = &level
	}
	rep.Observations = append(rep.Observations, observe("scope", "", contract.OutcomeUnsupported, reason, Source, started, 0, msg))
	return complete(rep, started, contract.OutcomeUnsupported, reason)
}

// Missing is the report for a runtime or service the checker does not
// hold: it is not running here, so the check fails with reason.
func Missing(req contract.CheckRequest, reason, msg string) contract.CheckReport {
	started := time.Now()
	rep := newReport(req, started)
	if req.Level != "" {
		level := req.Level
		rep.RequestedLevel = &level
	}
	rep.Observations = append(rep.Observations, observe("lookup", "", contract.OutcomeFailed, reason, Source, started, time.Since(started), msg))
	return complete(rep, started, contract.OutcomeFailed, reason)
}

// Server is the report of a server-scope check: the server answered (this
// report is its answer) and says whether it is shutting down. Extra
// observations (for example an unclean earlier shutdown) follow, in order;
// the first one that did not pass decides the outcome.
func Server(req contract.CheckRequest, started time.Time, state string, stopping bool, extra ...contract.CheckObservation) contract.CheckReport {
	rep := newReport(req, started)
	rep.Server = &contract.ServerObservation{State: state}
	if stopping {
		rep.Observations = append(rep.Observations, observe("server", "", contract.OutcomeFailed, contract.ReasonServerStopping, Source, started, time.Since(started), "the server is shutting down"))
		return complete(rep, started, contract.OutcomeFailed, contract.ReasonServerStopping)
	}
	rep.Observations = append(rep.Observations, observe("server", "", contract.OutcomePassed, "", Source, started, time.Since(started), "the server answered"))
	outcome, reason := contract.OutcomePassed, ""
	for _, o := range extra {
		rep.Observations = append(rep.Observations, o)
		if outcome == contract.OutcomePassed && o.Outcome != contract.OutcomePassed {
			outcome = o.Outcome
			if o.ReasonCode != nil {
				reason = *o.ReasonCode
			}
		}
	}
	return complete(rep, started, outcome, reason)
}

// Observe builds one observation: a stage, the level it serves (empty for
// stages that serve none), its outcome and reason, the evidence source,
// when it started and how long it took.
func Observe(stage, level, outcome, reason, source string, at time.Time, took time.Duration, msg string) contract.CheckObservation {
	return observe(stage, level, outcome, reason, source, at, took, msg)
}

func observe(stage, level, outcome, reason, source string, at time.Time, took time.Duration, msg string) contract.CheckObservation {
	o := contract.CheckObservation{
		Stage: stage, Level: level, Outcome: outcome, Source: source,
		ObservedAtMillis: at.UnixMilli(), Message: msg,
		Metadata: map[string]any{"duration_micros": took.Microseconds()},
	}
	if reason != "" {
		o.ReasonCode = &reason
	}
	return o
}

func newReport(req contract.CheckRequest, started time.Time) *contract.CheckReport {
	rep := &contract.CheckReport{
		SchemaVersion:   contract.CheckSchemaVersion,
		Scope:           req.Scope,
		Observations:    []contract.CheckObservation{},
		StartedAtMillis: started.UnixMilli(),
	}
	switch req.Scope {
	case contract.ScopeRuntime:
		id := req.RuntimeID
		rep.RuntimeID = &id
		if req.Interface != "" {
			name := req.Interface
			rep.Interface = &name
		}
	case contract.ScopeService:
		id := req.ServiceID
		rep.ServiceID = &id
	}
	return rep
}

func complete(rep *contract.CheckReport, started time.Time, outcome, reason string) contract.CheckReport {
	rep.Outcome = outcome
	if reason != "" && outcome != contract.OutcomePassed {
		rep.ReasonCode = &reason
	}
	end := time.Now()
	rep.FinishedAtMillis = end.UnixMilli()
	rep.ElapsedMillis = end.Sub(started).Milliseconds()
	rep.Metadata = map[string]any{"elapsed_micros": end.Sub(started).Microseconds()}
	return *rep
}

func validOutcome(o string) bool {
	switch o {
	case contract.OutcomePassed, contract.OutcomeFailed, contract.OutcomeUnknown, contract.OutcomeUnsupported:
		return true
	}
	return false
}

func defaultReason(outcome string) string {
	switch outcome {
	case contract.OutcomeFailed:
		return contract.ReasonHealthFailed
	case contract.OutcomeUnsupported:
		return contract.ReasonUnsupportedLevel
	}
	return contract.ReasonProbeError
}
