package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Export is one signal's OTLP exporter as the OTEL_* variables configure
// it, for an Exporters to build.
type Export struct {
	Protocol    string            // ProtocolHTTPProtobuf, ProtocolHTTPJSON or ProtocolGRPC
	Endpoint    string            // absolute URL; for HTTP it includes the signal path
	Headers     map[string]string // sent to the collector only
	Timeout     time.Duration
	Gzip        bool
	Certificate string // CA bundle file
	ClientCert  string
	ClientKey   string
	// Temporality is the metrics temporality preference
	// (TemporalityCumulative, TemporalityDelta, TemporalityLowMemory).
	Temporality string
	// LookupEnv reads HTTP(S)_PROXY and NO_PROXY.
	LookupEnv func(string) (string, bool)
}

// OTLP protocols (OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	ProtocolHTTPProtobuf = "http/protobuf"
	ProtocolHTTPJSON     = "http/json"
	ProtocolGRPC         = "grpc"
)

// Temporality preferences (OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE).
const (
	TemporalityCumulative = "cumulative"
	TemporalityDelta      = "delta"
	TemporalityLowMemory  = "lowmemory"
)

// Exporters builds the OTLP exporters the OTEL_* variables turn on. The
// exporters (and gRPC and protobuf under them) are an opt-in package,
// github.com/fabric-runtime/fabric/otlp, so that a program that exports
// nothing links none of them.
type Exporters interface {
	SpanExporter(ctx context.Context, e Export) (sdktrace.SpanExporter, error)
	MetricExporter(ctx context.Context, e Export) (sdkmetric.Exporter, error)
}

func (es exporterSettings) export(temporality string, lookup func(string) (string, bool)) Export {
	return Export{
		Protocol: es.protocol, Endpoint: es.endpoint, Headers: es.headers, Timeout: es.timeout, Gzip: es.gzip,
		Certificate: es.certificate, ClientCert: es.clientCert, ClientKey: es.clientKey,
		Temporality: temporality, LookupEnv: lookup,
	}
}

// failureLog reports export failures to the caller's logger instead of the
// OpenTelemetry global error handler: the first failure of a run of
// failures is a warning, the recovery is an info line, nothing in between,
// so a collector that is down does not flood the log.
type failureLog struct {
	log     *slog.Logger
	signal  string
	failing atomic.Bool
}

func (f *failureLog) observe(err error) {
	if err == nil {
		if f.failing.Swap(false) {
			f.log.Info("telemetry: export recovered", "signal", f.signal)
		}
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	if !f.failing.Swap(true) {
		f.log.Warn("telemetry: export failed; dropping data until the endpoint answers", "signal", f.signal, "error", err)
	}
}

// spanExporter routes export errors to failureLog.
type spanExporter struct {
	sdktrace.SpanExporter
	fail *failureLog
}

func (e *spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.fail.observe(e.SpanExporter.ExportSpans(ctx, spans))
	return nil
}

// metricExporter routes export errors to failureLog.
type metricExporter struct {
	sdkmetric.Exporter
	fail *failureLog
}

func (e *metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	e.fail.observe(e.Exporter.Export(ctx, rm))
	return nil
}
