package otlp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"golang.org/x/net/http/httpproxy"
	"google.golang.org/grpc/credentials"

	"github.com/fabric-runtime/fabric/internal/telemetry"
)

// Exporters builds Fabric's OTLP exporters (HTTP/protobuf, HTTP/JSON for
// traces, gRPC) as the OTEL_* variables configure them.
type Exporters struct{}

// Every exporter option below is set explicitly, even to its default, so
// that the exporters' own reading of the process environment (which they
// do before applying options) never decides anything: the caller's lookup
// is the only source.

// tlsConfig builds the client TLS configuration of an https endpoint.
func tlsConfig(es telemetry.Export) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if es.Certificate != "" {
		pem, err := os.ReadFile(es.Certificate)
		if err != nil {
			return nil, fmt.Errorf("telemetry: reading the OTLP CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("telemetry: the OTLP CA certificate file %s holds no PEM certificate", es.Certificate)
		}
		cfg.RootCAs = pool
	}
	if es.ClientCert != "" {
		pair, err := tls.LoadX509KeyPair(es.ClientCert, es.ClientKey)
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

// SpanExporter builds the OTLP trace exporter e describes.
func (Exporters) SpanExporter(ctx context.Context, es telemetry.Export) (sdktrace.SpanExporter, error) {
	var tcfg *tls.Config
	if isHTTPS(es.Endpoint) {
		var err error
		if tcfg, err = tlsConfig(es); err != nil {
			return nil, err
		}
	}
	if es.Protocol == telemetry.ProtocolGRPC {
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
	comp := otlptracehttp.NoCompression
	if es.Gzip {
		comp = otlptracehttp.GzipCompression
	}
	enc := otlptracehttp.EncodingProtobuf
	if es.Protocol == telemetry.ProtocolHTTPJSON {
		enc = otlptracehttp.EncodingJSON
	}
	opts := []otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(es.Endpoint),
		otlptracehttp.WithHeaders(es.Headers),
		otlptracehttp.WithTimeout(es.Timeout),
		otlptracehttp.WithCompression(comp),
		otlptracehttp.WithEncoding(enc),
		otlptracehttp.WithProxy(proxyFunc(es.LookupEnv)),
	}
	if tcfg != nil {
		opts = append(opts, otlptracehttp.WithTLSClientConfig(tcfg))
	} else {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	return otlptracehttp.New(ctx, opts...)
}

// MetricExporter builds the OTLP metric exporter e describes.
func (Exporters) MetricExporter(ctx context.Context, es telemetry.Export) (sdkmetric.Exporter, error) {
	var tcfg *tls.Config
	if isHTTPS(es.Endpoint) {
		var err error
		if tcfg, err = tlsConfig(es); err != nil {
			return nil, err
		}
	}
	sel := temporalitySelector(es.Temporality)
	if es.Protocol == telemetry.ProtocolGRPC {
		opts := []otlpmetricgrpc.Option{
			otlpmetricgrpc.WithEndpointURL(es.Endpoint),
			otlpmetricgrpc.WithHeaders(es.Headers),
			otlpmetricgrpc.WithTimeout(es.Timeout),
			otlpmetricgrpc.WithCompressor(compressor(es.Gzip)),
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
	if es.Gzip {
		comp = otlpmetrichttp.GzipCompression
	}
	opts := []otlpmetrichttp.Option{
		otlpmetrichttp.WithEndpointURL(es.Endpoint),
		otlpmetrichttp.WithHeaders(es.Headers),
		otlpmetrichttp.WithTimeout(es.Timeout),
		otlpmetrichttp.WithCompression(comp),
		otlpmetrichttp.WithProxy(proxyFunc(es.LookupEnv)),
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
	case telemetry.TemporalityDelta:
		return func(k sdkmetric.InstrumentKind) metricdata.Temporality {
			switch k {
			case sdkmetric.InstrumentKindUpDownCounter, sdkmetric.InstrumentKindObservableUpDownCounter:
				return metricdata.CumulativeTemporality
			}
			return metricdata.DeltaTemporality
		}
	case telemetry.TemporalityLowMemory:
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
