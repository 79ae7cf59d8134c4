package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Metric names. Attributes are low-cardinality: harness, status, error
// code, GenAI provider and model, token type; never ids.
const (
	MetricRuntimeStarts      = "fabric.runtime.starts"        // counter {runtime}: fabric.harness, fabric.status, error.type
	MetricRuntimeStops       = "fabric.runtime.stops"         // counter {runtime}: fabric.harness, fabric.status, error.type
	MetricInvocations        = "fabric.invocations"           // counter {invocation}: fabric.harness, fabric.status, error.type
	MetricInvocationDuration = "fabric.invocation.duration"   // histogram s: fabric.harness, fabric.status
	MetricTokenUsage         = "gen_ai.client.token.usage"    // histogram {token}: gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model, gen_ai.token.type, fabric.harness
	MetricStreamDrops        = "fabric.stream.dropped_events" // counter {event}
)

type instruments struct {
	runtimeStarts metric.Int64Counter
	runtimeStops  metric.Int64Counter
	invocations   metric.Int64Counter
	duration      metric.Float64Histogram
	tokens        metric.Int64Histogram
	drops         metric.Int64Counter
}

func newInstruments(m metric.Meter) (*instruments, error) {
	var i instruments
	var errs [6]error
	i.runtimeStarts, errs[0] = m.Int64Counter(MetricRuntimeStarts, metric.WithUnit("{runtime}"),
		metric.WithDescription("Runtime starts, by outcome."))
	i.runtimeStops, errs[1] = m.Int64Counter(MetricRuntimeStops, metric.WithUnit("{runtime}"),
		metric.WithDescription("Runtime stops, by outcome."))
	i.invocations, errs[2] = m.Int64Counter(MetricInvocations, metric.WithUnit("{invocation}"),
		metric.WithDescription("Finished invocations, by status."))
	i.duration, errs[3] = m.Float64Histogram(MetricInvocationDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of an invocation, from the call to its result."),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24,
			20.48, 40.96, 81.92, 163.84, 327.68, 655.36, 1310.72))
	i.tokens, errs[4] = m.Int64Histogram(MetricTokenUsage, metric.WithUnit("{token}"),
		metric.WithDescription("Tokens used by one invocation, by token type."),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576,
			4194304, 16777216, 67108864))
	i.drops, errs[5] = m.Int64Counter(MetricStreamDrops, metric.WithUnit("{event}"),
		metric.WithDescription("Events dropped by invocation stream queues."))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return &i, nil
}

// RecordDrops counts n events dropped by a stream queue.
func (t *Telemetry) RecordDrops(n int64) {
	if t == nil || t.inst == nil || n <= 0 {
		return
	}
	t.inst.drops.Add(context.Background(), n)
}

// outcome is the status attribute set of a lifecycle step.
func outcome(harness string, err error) []attribute.KeyValue {
	kv := []attribute.KeyValue{KeyHarness.String(harness)}
	if err == nil {
		return append(kv, KeyStatus.String("succeeded"))
	}
	return append(kv, KeyStatus.String("failed"), KeyErrorType.String(errorType(err)))
}
