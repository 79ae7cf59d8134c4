package otlp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/fabric-runtime/fabric/internal/telemetry"
)

// Exporters builds Fabric's OTLP exporters over HTTP (protobuf, and JSON
// for traces) as the OTEL_* variables configure them. OTLP over gRPC
// links gRPC, which costs every process that links it about a thousand
// allocations at start whether it exports or not; it is built by GRPC
// when that is set:
//
//	otlp.Exporters{GRPC: otlpgrpc.Exporters{}}
//
// and is otherwise an error that names the ways out.
type Exporters struct {
	// GRPC builds the exporters when the protocol is grpc; nil: not
	// linked. Package otlp/otlpgrpc has them.
	GRPC telemetry.Exporters
}

// FabricOTLPExporters marks Exporters as fabric.OTLPExporters.
func (Exporters) FabricOTLPExporters() {}

// errNoGRPC is the error of the grpc protocol without Exporters.GRPC.
func errNoGRPC(signal string) error {
	return fmt.Errorf("telemetry: OTEL_EXPORTER_OTLP_PROTOCOL asks for grpc (%s), but this program exports OTLP over HTTP only: "+
		"use http/protobuf (a collector's port 4318), or link OTLP over gRPC (otlp.Exporters{GRPC: otlpgrpc.Exporters{}}; Fabric's binaries: build with -tags otlpgrpc)", signal)
}

// SpanExporter builds the OTLP trace exporter es describes.
func (x Exporters) SpanExporter(ctx context.Context, es telemetry.Export) (sdktrace.SpanExporter, error) {
	if es.Protocol == telemetry.ProtocolGRPC {
		if x.GRPC == nil {
			return nil, errNoGRPC("traces")
		}
		return x.GRPC.SpanExporter(ctx, es)
	}
	p, err := newPoster(es)
	if err != nil {
		return nil, err
	}
	return &spanExporter{poster: p, json: es.Protocol == telemetry.ProtocolHTTPJSON}, nil
}

// spanExporter sends the trace SDK's spans to the collector, as the
// upstream OTLP exporter (otlptrace) does: nothing when there is no span,
// errors prefixed "traces export", and a Shutdown that closes the
// connections once and leaves later exports possible.
type spanExporter struct {
	*poster
	json bool
	stop sync.Once
}

func (e *spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	body, ok := traceRequest(e.json, spans)
	if !ok {
		return nil
	}
	contentType := contentTypeProto
	if e.json {
		contentType = contentTypeJSON
	}
	if err := e.post(ctx, body, contentType); err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}

func (e *spanExporter) Shutdown(ctx context.Context) error {
	var err error
	e.stop.Do(func() {
		e.close()
		err = ctx.Err()
	})
	return err
}

// MetricExporter builds the OTLP metric exporter es describes. OTLP/JSON
// is for traces only: metrics go as protobuf (docs/telemetry.md).
func (x Exporters) MetricExporter(ctx context.Context, es telemetry.Export) (sdkmetric.Exporter, error) {
	if es.Protocol == telemetry.ProtocolGRPC {
		if x.GRPC == nil {
			return nil, errNoGRPC("metrics")
		}
		return x.GRPC.MetricExporter(ctx, es)
	}
	p, err := newPoster(es)
	if err != nil {
		return nil, err
	}
	return &metricExporter{poster: p, temporality: es.TemporalitySelector()}, nil
}

// metricExporter sends the metrics SDK's collections to the collector.
type metricExporter struct {
	*poster
	temporality sdkmetric.TemporalitySelector
	shut        atomic.Bool
}

var errShutdown = errors.New("telemetry: the OTLP metric exporter is shut down")

func (e *metricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return e.temporality(k)
}

func (e *metricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (e *metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if e.shut.Load() {
		return errShutdown
	}
	body, convErr := metricsRequest(rm)
	return errors.Join(convErr, e.post(ctx, body, contentTypeProto))
}

func (e *metricExporter) ForceFlush(ctx context.Context) error { return ctx.Err() }

func (e *metricExporter) Shutdown(ctx context.Context) error {
	e.shut.Store(true)
	e.close()
	return ctx.Err()
}
