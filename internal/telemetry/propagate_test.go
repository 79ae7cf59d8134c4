package telemetry

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

var traceParentRE = regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$`)

func TestTraceParentAndEnviron(t *testing.T) {
	if TraceParent(context.Background()) != "" || TraceState(context.Background()) != "" || Environ(context.Background()) != nil {
		t.Fatal("a context without a span yields trace context")
	}

	h := newHarness(t)
	ctx, end := h.tel.RuntimeStart(context.Background(), handle)
	defer end(nil)
	tp := TraceParent(ctx)
	if !traceParentRE.MatchString(tp) {
		t.Fatalf("traceparent %q is malformed", tp)
	}
	sc := trace.SpanContextFromContext(ctx)
	if want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"; tp != want {
		t.Errorf("traceparent = %q, want %q", tp, want)
	}
	if env := Environ(ctx); !slices.Equal(env, []string{"TRACEPARENT=" + tp}) {
		t.Errorf("Environ = %q", env)
	}
	if m := EnvMap(ctx); len(m) != 1 || m["TRACEPARENT"] != tp {
		t.Errorf("EnvMap = %v", m)
	}
	if EnvMap(context.Background()) != nil {
		t.Error("EnvMap without a span is not nil")
	}

	// A child process reads it back; the trace state travels too.
	ts, err := trace.ParseTraceState("vendor=abc")
	if err != nil {
		t.Fatal(err)
	}
	ctx = trace.ContextWithSpanContext(ctx, sc.WithTraceState(ts))
	env := Environ(ctx)
	if !slices.Equal(env, []string{"TRACEPARENT=" + tp, "TRACESTATE=vendor=abc"}) {
		t.Fatalf("Environ = %q", env)
	}
	child := FromEnviron(context.Background(), envOf(map[string]string{"TRACEPARENT": tp, "TRACESTATE": "vendor=abc"}))
	csc := trace.SpanContextFromContext(child)
	if !csc.IsRemote() || csc.TraceID() != sc.TraceID() || csc.SpanID() != sc.SpanID() || csc.TraceState().Get("vendor") != "abc" {
		t.Errorf("FromEnviron = %+v, want the parent's span context", csc)
	}
	// The child's own spans continue the trace.
	cctx, cend := h.tel.Plan(child, "child")
	cend(nil)
	if got := trace.SpanContextFromContext(cctx).TraceID(); got != sc.TraceID() {
		t.Errorf("child span trace %s, want %s", got, sc.TraceID())
	}
}

// The caller's own span propagates even when Fabric's tracing is off.
func TestTraceParentWithTracingOff(t *testing.T) {
	h := newHarness(t)
	callerCtx, end := h.tel.Plan(context.Background(), "caller")
	defer end(nil)
	off := Disabled()
	ctx, inv := off.Invocation(callerCtx, info())
	inv.End(nil, nil)
	if TraceParent(ctx) != TraceParent(callerCtx) || TraceParent(ctx) == "" {
		t.Errorf("traceparent %q, want the caller's %q", TraceParent(ctx), TraceParent(callerCtx))
	}
}

func TestFromEnvironIgnoresBadInput(t *testing.T) {
	bg := context.Background()
	for _, env := range []map[string]string{
		nil,
		{"TRACEPARENT": ""},
		{"TRACEPARENT": "garbage"},
		{"TRACEPARENT": "00-00000000000000000000000000000000-0000000000000000-01"},
	} {
		if ctx := FromEnviron(bg, envOf(env)); trace.SpanContextFromContext(ctx).IsValid() {
			t.Errorf("FromEnviron(%v) made a span context", env)
		}
	}
	if FromEnviron(bg, nil) != bg {
		t.Error("a nil lookup changed the context")
	}
}
