// Package otlpgrpc is the opt-in OTLP export over gRPC, for the OTEL_*
// variables' grpc protocol:
//
//	fabric.New(fabric.WithOTLPExporters(otlp.Exporters{GRPC: otlpgrpc.Exporters{}}))
//
// It is a package of its own because gRPC costs every process that links
// it about a thousand allocations at start, whether it exports or not;
// OTLP over HTTP (package otlp) needs none of it. Fabric's binaries link
// it when built with -tags otlpgrpc.
package otlpgrpc

import (
	"context"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc/credentials"

	"github.com/fabric-runtime/fabric/internal/telemetry"
)

// Exporters builds the OTLP exporters over gRPC as the OTEL_* variables
// configure them. Every option is set explicitly, even to its default, so
// that the exporters' own reading of the process environment never
// decides anything.
type Exporters struct{}

// SpanExporter builds the OTLP/gRPC trace exporter es describes.
func (Exporters) SpanExporter(ctx context.Context, es telemetry.Export) (sdktrace.SpanExporter, error) {
	tcfg, err := es.TLSConfig()
	if err != nil {
		return nil, err
	}
	opts := []otlptracegrpc.Option{
		otlptracegrpc.WithEndpointURL(es.Endpoint),
		otlptracegrpc.WithHeaders(es.Headers),
		otlptracegrpc.WithTimeout(es.Timeout),
		otlptracegrpc.WithCompressor(compressor(es.Gzip)),
	}
	if tcfg != nil {
		opts = append(opts, otlptracegrpc.WithTLSCredentials(credentials.NewTLS(tcfg)))
	} else {
		opts = append(opts, otlptracegrpc.WithInsecure())
	}
	return otlptracegrpc.New(ctx, opts...)
}

// MetricExporter builds the OTLP/gRPC metric exporter es describes.
func (Exporters) MetricExporter(ctx context.Context, es telemetry.Export) (sdkmetric.Exporter, error) {
	tcfg, err := es.TLSConfig()
	if err != nil {
		return nil, err
	}
	opts := []otlpmetricgrpc.Option{
		otlpmetricgrpc.WithEndpointURL(es.Endpoint),
		otlpmetricgrpc.WithHeaders(es.Headers),
		otlpmetricgrpc.WithTimeout(es.Timeout),
		otlpmetricgrpc.WithCompressor(compressor(es.Gzip)),
		otlpmetricgrpc.WithTemporalitySelector(es.TemporalitySelector()),
		otlpmetricgrpc.WithAggregationSelector(sdkmetric.DefaultAggregationSelector),
	}
	if tcfg != nil {
		opts = append(opts, otlpmetricgrpc.WithTLSCredentials(credentials.NewTLS(tcfg)))
	} else {
		opts = append(opts, otlpmetricgrpc.WithInsecure())
	}
	return otlpmetricgrpc.New(ctx, opts...)
}

func compressor(gzip bool) string {
	if gzip {
		return "gzip"
	}
	return "none"
}
