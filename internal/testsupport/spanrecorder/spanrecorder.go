// Package spanrecorder keeps the spans a TracerProvider finishes in
// memory, for tests of packages that may not import the OpenTelemetry SDK
// themselves (internal/telemetry/imports_test.go). It lives under
// internal/testsupport so no shipped program links the SDK's test
// exporters (internal/testsupport/deptest).
package spanrecorder

import (
	"context"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// Recorder keeps finished spans in memory.
type Recorder struct {
	exp *tracetest.InMemoryExporter
	tp  *sdktrace.TracerProvider
}

// New returns a Recorder whose TracerProvider exports every span
// synchronously to memory.
func New() *Recorder {
	exp := tracetest.NewInMemoryExporter()
	return &Recorder{exp: exp, tp: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))}
}

// TracerProvider is the provider to trace through.
func (r *Recorder) TracerProvider() trace.TracerProvider { return r.tp }

// Span is a finished span, flattened.
type Span struct {
	Name     string
	TraceID  string
	SpanID   string
	ParentID string // empty for a root span
	Links    []string
	Status   string
	Attrs    map[string]any
}

// Spans returns the spans finished so far, in the order they ended.
func (r *Recorder) Spans() []Span {
	var out []Span
	for _, s := range r.exp.GetSpans() {
		rs := Span{
			Name: s.Name, TraceID: s.SpanContext.TraceID().String(), SpanID: s.SpanContext.SpanID().String(),
			Status: s.Status.Code.String(), Attrs: map[string]any{},
		}
		if s.Parent.IsValid() {
			rs.ParentID = s.Parent.SpanID().String()
		}
		for _, l := range s.Links {
			rs.Links = append(rs.Links, l.SpanContext.SpanID().String())
		}
		for _, kv := range s.Attributes {
			rs.Attrs[string(kv.Key)] = kv.Value.AsInterface()
		}
		out = append(out, rs)
	}
	return out
}

// Shutdown ends the provider.
func (r *Recorder) Shutdown(ctx context.Context) error { return r.tp.Shutdown(ctx) }
