package telemetry

import (
	"context"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkEventDelta is the cost of one streamed text delta with tracing
// on (the hot path of a streaming invocation).
func BenchmarkEventDelta(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tel, err := New(context.Background(), Options{TracerProvider: tp})
	if err != nil {
		b.Fatal(err)
	}
	_, inv := tel.Invocation(context.Background(), info())
	ev := contract.FabricEvent{Kind: "output_delta", Message: "x", Metadata: map[string]any{"item_id": "m1"}}
	b.ReportAllocs()
	for b.Loop() {
		inv.Event(ev)
	}
	inv.End(&contract.RunResult{Status: contract.StatusSucceeded}, nil)
}

// BenchmarkInvocationDisabled is the whole per-invocation cost with
// telemetry off.
func BenchmarkInvocationDisabled(b *testing.B) {
	tel := Disabled()
	ev := contract.FabricEvent{Kind: "output_delta", Message: "x"}
	res := &contract.RunResult{Status: contract.StatusSucceeded}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, inv := tel.Invocation(ctx, info())
		inv.Event(ev)
		inv.End(res, nil)
	}
}
