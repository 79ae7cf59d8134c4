package telemetry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
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

// TLSConfig is the client TLS configuration of an https endpoint, nil for
// another: the CA bundle and the client certificate the variables name.
func (e Export) TLSConfig() (*tls.Config, error) {
	if !strings.HasPrefix(e.Endpoint, "https://") {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if e.Certificate != "" {
		pem, err := os.ReadFile(e.Certificate)
		if err != nil {
			return nil, fmt.Errorf("telemetry: reading the OTLP CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("telemetry: the OTLP CA certificate file %s holds no PEM certificate", e.Certificate)
		}
		cfg.RootCAs = pool
	}
	if e.ClientCert != "" {
		pair, err := tls.LoadX509KeyPair(e.ClientCert, e.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("telemetry: loading the OTLP client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// TemporalitySelector maps the metrics temporality preference.
func (e Export) TemporalitySelector() sdkmetric.TemporalitySelector {
	switch e.Temporality {
	case TemporalityDelta:
		return func(k sdkmetric.InstrumentKind) metricdata.Temporality {
			switch k {
			case sdkmetric.InstrumentKindUpDownCounter, sdkmetric.InstrumentKindObservableUpDownCounter:
				return metricdata.CumulativeTemporality
			}
			return metricdata.DeltaTemporality
		}
	case TemporalityLowMemory:
		return func(k sdkmetric.InstrumentKind) metricdata.Temporality {
			switch k {
			case sdkmetric.InstrumentKindCounter, sdkmetric.InstrumentKindHistogram:
				return metricdata.DeltaTemporality
			}
			return metricdata.CumulativeTemporality
		}
	}
	return sdkmetric.DefaultTemporalitySelector
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
// exporters (and protobuf under them) are an opt-in package,
// github.com/fabric-runtime/fabric/otlp, so that a program that exports
// nothing links none of them; OTLP over gRPC is a further one,
// github.com/fabric-runtime/fabric/otlp/otlpgrpc.
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
