package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Environment variables that carry W3C trace context into a child process
// (the names the OpenTelemetry environment-carrier specification uses).
const (
	EnvTraceParent = "TRACEPARENT"
	EnvTraceState  = "TRACESTATE"
)

// w3c is the W3C Trace Context propagator. Baggage is deliberately not
// propagated: it is free-form and may carry what a caller considers secret.
var w3c propagation.TraceContext

// TraceParent returns the W3C traceparent of the span ctx carries, or ""
// when it carries none. It works whether or not Fabric's own tracing is
// on: a caller's span propagates either way.
func TraceParent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	w3c.Inject(ctx, c)
	return c.Get("traceparent")
}

// TraceState returns the W3C tracestate of the span ctx carries, or "".
func TraceState(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceState().String()
}

// Environ returns the TRACEPARENT and TRACESTATE entries ("NAME=value")
// for a child process's environment, or nothing when ctx carries no span.
func Environ(ctx context.Context) []string {
	tp := TraceParent(ctx)
	if tp == "" {
		return nil
	}
	env := []string{EnvTraceParent + "=" + tp}
	if ts := TraceState(ctx); ts != "" {
		env = append(env, EnvTraceState+"="+ts)
	}
	return env
}

// FromEnviron returns ctx with the remote parent that TRACEPARENT and
// TRACESTATE, read through lookup, describe, so that a process started by
// a traced parent (a CI job, a sandbox platform) continues its trace. A
// missing or malformed TRACEPARENT leaves ctx as it is; so does a ctx that
// already carries a span.
func FromEnviron(ctx context.Context, lookup func(string) (string, bool)) context.Context {
	if lookup == nil || trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	tp, ok := lookup(EnvTraceParent)
	if !ok || tp == "" {
		return ctx
	}
	c := propagation.MapCarrier{"traceparent": tp}
	if ts, ok := lookup(EnvTraceState); ok && ts != "" {
		c["tracestate"] = ts
	}
	return w3c.Extract(ctx, c)
}

// EnvMap is Environ as a map, for RuntimeContext.telemetry.env: the
// per-invocation trace context an adapter hands to its harness. It is nil
// when ctx carries no span.
func EnvMap(ctx context.Context) map[string]string {
	tp := TraceParent(ctx)
	if tp == "" {
		return nil
	}
	m := map[string]string{EnvTraceParent: tp}
	if ts := TraceState(ctx); ts != "" {
		m[EnvTraceState] = ts
	}
	return m
}
