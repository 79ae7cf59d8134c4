package telemetry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"golang.org/x/net/http/httpproxy"
	"google.golang.org/grpc/credentials"
)

// Every exporter option below is set explicitly, even to its default, so
// that the exporters' own reading of the process environment (which they
// do before applying options) never decides anything: the caller's lookup
// is the only source.

// tlsConfig builds the client TLS configuration of an https endpoint.
func tlsConfig(es exporterSettings) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if es.certificate != "" {
		pem, err := os.ReadFile(es.certificate)
		if err != nil {
			return nil, fmt.Errorf("telemetry: reading the OTLP CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("telemetry: the OTLP CA certificate file %s holds no PEM certificate", es.certificate)
		}
		cfg.RootCAs = pool
	}
	if es.clientCert != "" {
		pair, err := tls.LoadX509KeyPair(es.clientCert, es.clientKey)
		if err != nil {
			return nil, fmt.Errorf("telemetry: loading the OTLP client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// proxyFunc resolves HTTP(S)_PROXY and NO_PROXY through the caller's
// lookup (upper case first, as net/http does).
func proxyFunc(lookup func(string) (string, bool)) func(*http.Request) (*url.URL, error) {
	get := func(names ...string) string {
		for _, n := range names {
			if lookup == nil {
				return ""
			}
			if v, ok := lookup(n); ok && v != "" {
				return v
			}
		}
		return ""
	}
	cfg := httpproxy.Config{
		HTTPProxy:  get("HTTP_PROXY", "http_proxy"),
		HTTPSProxy: get("HTTPS_PROXY", "https_proxy"),
		NoProxy:    get("NO_PROXY", "no_proxy"),
	}
	pf := cfg.ProxyFunc()
	return func(r *http.Request) (*url.URL, error) { return pf(r.URL) }
}

func isHTTPS(endpoint string) bool { return strings.HasPrefix(endpoint, "https://") }

func newSpanExporter(ctx context.Context, es exporterSettings, lookup func(string) (string, bool)) (sdktrace.SpanExporter, error) {
	var tcfg *tls.Config
	if isHTTPS(es.endpoint) {
		var err error
		if tcfg, err = tlsConfig(es); err != nil {
			return nil, err
		}
	}
	if es.protocol == protoGRPC {
		opts := []otlptracegrpc.Option{
			otlptracegrpc.WithEndpointURL(es.endpoint),
			otlptracegrpc.WithHeaders(es.headers),
			otlptracegrpc.WithTimeout(es.timeout),
			otlptracegrpc.WithCompressor(compressor(es.gzip)),
		}
		if tcfg != nil {
			opts = append(opts, otlptracegrpc.WithTLSCredentials(credentials.NewTLS(tcfg)))
		} else {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	comp := otlptracehttp.NoCompression
	if es.gzip {
		comp = otlptracehttp.GzipCompression
	}
	enc := otlptracehttp.EncodingProtobuf
	if es.protocol == protoHTTPJSON {
		enc = otlptracehttp.EncodingJSON
	}
	opts := []otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(es.endpoint),
		otlptracehttp.WithHeaders(es.headers),
		otlptracehttp.WithTimeout(es.timeout),
		otlptracehttp.WithCompression(comp),
		otlptracehttp.WithEncoding(enc),
		otlptracehttp.WithProxy(proxyFunc(lookup)),
	}
	if tcfg != nil {
		opts = append(opts, otlptracehttp.WithTLSClientConfig(tcfg))
	} else {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	return otlptracehttp.New(ctx, opts...)
}

func newMetricExporter(ctx context.Context, es exporterSettings, temporality string, lookup func(string) (string, bool)) (sdkmetric.Exporter, error) {
	var tcfg *tls.Config
	if isHTTPS(es.endpoint) {
		var err error
		if tcfg, err = tlsConfig(es); err != nil {
			return nil, err
		}
	}
	sel := temporalitySelector(temporality)
	if es.protocol == protoGRPC {
		opts := []otlpmetricgrpc.Option{
			otlpmetricgrpc.WithEndpointURL(es.endpoint),
			otlpmetricgrpc.WithHeaders(es.headers),
			otlpmetricgrpc.WithTimeout(es.timeout),
			otlpmetricgrpc.WithCompressor(compressor(es.gzip)),
			otlpmetricgrpc.WithTemporalitySelector(sel),
			otlpmetricgrpc.WithAggregationSelector(sdkmetric.DefaultAggregationSelector),
		}
		if tcfg != nil {
			opts = append(opts, otlpmetricgrpc.WithTLSCredentials(credentials.NewTLS(tcfg)))
		} else {
			opts = append(opts, otlpmetricgrpc.WithInsecure())
		}
		return otlpmetricgrpc.New(ctx, opts...)
	}
	comp := otlpmetrichttp.NoCompression
	if es.gzip {
		comp = otlpmetrichttp.GzipCompression
	}
	opts := []otlpmetrichttp.Option{
		otlpmetrichttp.WithEndpointURL(es.endpoint),
		otlpmetrichttp.WithHeaders(es.headers),
		otlpmetrichttp.WithTimeout(es.timeout),
		otlpmetrichttp.WithCompression(comp),
		otlpmetrichttp.WithProxy(proxyFunc(lookup)),
		otlpmetrichttp.WithTemporalitySelector(sel),
		otlpmetrichttp.WithAggregationSelector(sdkmetric.DefaultAggregationSelector),
	}
	if tcfg != nil {
		opts = append(opts, otlpmetrichttp.WithTLSClientConfig(tcfg))
	} else {
		opts = append(opts, otlpmetrichttp.WithInsecure())
	}
	return otlpmetrichttp.New(ctx, opts...)
}

func compressor(gzip bool) string {
	if gzip {
		return "gzip"
	}
	return "none"
}

// temporalitySelector maps the OTLP temporality preference.
func temporalitySelector(pref string) sdkmetric.TemporalitySelector {
	switch pref {
	case tempDelta:
		return func(k sdkmetric.InstrumentKind) metricdata.Temporality {
			switch k {
			case sdkmetric.InstrumentKindUpDownCounter, sdkmetric.InstrumentKindObservableUpDownCounter:
				return metricdata.CumulativeTemporality
			}
			return metricdata.DeltaTemporality
		}
	case tempLowMemory:
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
