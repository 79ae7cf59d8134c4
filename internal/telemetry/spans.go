package telemetry

import (
	"context"
	"errors"

	"github.com/fabric-runtime/fabric/contract"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Span names of the lifecycle steps.
const (
	SpanPlan         = "fabric.plan"
	SpanRuntimeStart = "fabric.runtime.start"
	SpanRuntimeStop  = "fabric.runtime.stop"
)

// noEnd is the end function of a step that records nothing.
func noEnd(error) {}

// Plan starts the span of planning agent's config. Call end once with the
// planning error, or nil.
func (t *Telemetry) Plan(ctx context.Context, agent string) (_ context.Context, end func(error)) {
	if t == nil || t.tracer == nil {
		return ctx, noEnd
	}
	ctx, span := t.tracer.Start(ctx, SpanPlan, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(KeyAgent.String(bound(agent))))
	return ctx, func(err error) {
		setError(span, err)
		span.End()
	}
}

// RuntimeStart starts the span of starting the runtime h describes (the
// fields known before the start: runtime id, agent, harness, adapter).
// Call end once with the start error, or nil; it also counts the start.
// The returned context carries the span: pass it to the host spawn so that
// Environ(ctx) gives the host its TRACEPARENT, and keep RefFrom(ctx) to
// parent or link the runtime's invocations.
func (t *Telemetry) RuntimeStart(ctx context.Context, h contract.RuntimeHandle) (_ context.Context, end func(error)) {
	if t == nil || (t.tracer == nil && t.inst == nil) {
		return ctx, noEnd
	}
	var span trace.Span
	if t.tracer != nil {
		ctx, span = t.tracer.Start(ctx, SpanRuntimeStart, trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(runtimeAttrs(h)...))
	}
	harness := bound(h.Harness)
	return ctx, func(err error) {
		if t.inst != nil {
			t.inst.runtimeStarts.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(outcome(harness, err)...))
		}
		if span != nil {
			setError(span, err)
			span.End()
		}
	}
}

// RuntimeStop starts the span of stopping the runtime h describes. Call
// end once with the stop error, or nil; it also counts the stop.
func (t *Telemetry) RuntimeStop(ctx context.Context, h contract.RuntimeHandle) (_ context.Context, end func(error)) {
	if t == nil || (t.tracer == nil && t.inst == nil) {
		return ctx, noEnd
	}
	var span trace.Span
	if t.tracer != nil {
		ctx, span = t.tracer.Start(ctx, SpanRuntimeStop, trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(runtimeAttrs(h)...))
	}
	harness := bound(h.Harness)
	return ctx, func(err error) {
		if t.inst != nil {
			t.inst.runtimeStops.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(outcome(harness, err)...))
		}
		if span != nil {
			setError(span, err)
			span.End()
		}
	}
}

func runtimeAttrs(h contract.RuntimeHandle) []attribute.KeyValue {
	kv := []attribute.KeyValue{
		KeyRuntimeID.String(bound(h.RuntimeID)),
		KeyAgent.String(bound(h.AgentName)),
		KeyHarness.String(bound(h.Harness)),
	}
	if h.AdapterID != "" {
		kv = append(kv, KeyAdapterID.String(bound(h.AdapterID)))
	}
	if h.AdapterKind != "" {
		kv = append(kv, KeyAdapterKind.String(bound(h.AdapterKind)))
	}
	if h.Environment.Provider != "" {
		kv = append(kv, KeyEnvProvider.String(bound(h.Environment.Provider)))
	}
	return kv
}

// SpanRef remembers a span so that later work can be parented on it or
// linked to it after its context is gone (an invocation to its runtime's
// start span). The zero SpanRef refers to nothing.
type SpanRef struct{ sc trace.SpanContext }

// RefFrom returns a reference to the span ctx carries.
func RefFrom(ctx context.Context) SpanRef { return SpanRef{sc: trace.SpanContextFromContext(ctx)} }

// Valid reports whether r refers to a span.
func (r SpanRef) Valid() bool { return r.sc.IsValid() }

// setError records err on span: the status, and error.type set to a
// stable code; never the message, which may quote configuration.
func setError(span trace.Span, err error) {
	if err == nil {
		return
	}
	code := errorType(err)
	span.SetAttributes(KeyErrorType.String(code))
	if f, ok := failureOf(err); ok && f.Stage != "" {
		span.SetAttributes(KeyErrorStage.String(f.Stage), KeyErrorRetryable.Bool(f.Retryable))
	}
	span.SetStatus(codes.Error, code)
}

// failureOf finds the structured failure of one of Fabric's error types.
func failureOf(err error) (contract.Failure, bool) {
	var (
		ce *contract.ConfigError
		ke *contract.CapabilityError
		re *contract.RuntimeError
		se *contract.StateError
	)
	switch {
	case errors.As(err, &ce):
		return ce.Failure, true
	case errors.As(err, &ke):
		return ke.Failure, true
	case errors.As(err, &re):
		return re.Failure, true
	case errors.As(err, &se):
		return se.Failure, true
	}
	return contract.Failure{}, false
}

// errorType is the stable code of err for error.type.
func errorType(err error) string {
	if f, ok := failureOf(err); ok && f.Code != "" {
		return bound(f.Code)
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	}
	return "_OTHER"
}
