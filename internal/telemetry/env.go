package telemetry

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

const (
	protoHTTPProtobuf = ProtocolHTTPProtobuf
	protoHTTPJSON     = ProtocolHTTPJSON
	protoGRPC         = ProtocolGRPC

	tempCumulative = TemporalityCumulative
	tempDelta      = TemporalityDelta
	tempLowMemory  = TemporalityLowMemory
)

// settings is everything read from the OTEL_* variables.
type settings struct {
	traces, metrics exporterSettings

	resource map[string]string // OTEL_RESOURCE_ATTRIBUTES with OTEL_SERVICE_NAME applied

	sampler    sdktrace.Sampler
	spanLimits sdktrace.SpanLimits
	bsp        bspSettings

	metricInterval, metricTimeout time.Duration
	temporality                   string
	exemplarFilter                string // always_on, always_off, trace_based

	// warnings are problems the spec says to log and ignore.
	warnings []string
}

// exporterSettings is one signal's OTLP exporter.
type exporterSettings struct {
	enabled     bool
	protocol    string
	endpoint    string // absolute URL; for HTTP it includes the signal path
	headers     map[string]string
	timeout     time.Duration
	gzip        bool
	certificate string // CA bundle file
	clientCert  string
	clientKey   string
}

type bspSettings struct {
	scheduleDelay, exportTimeout time.Duration
	maxQueue, maxBatch           int
}

// envReader reads variables through the caller's lookup and collects
// warnings.
type envReader struct {
	lookup   func(string) (string, bool)
	warnings []string
}

func (r *envReader) get(name string) string {
	if r.lookup == nil {
		return ""
	}
	v, ok := r.lookup(name)
	if !ok {
		return ""
	}
	return strings.TrimSpace(v)
}

// first returns the first non-empty variable of names.
func (r *envReader) first(names ...string) (string, string) {
	for _, n := range names {
		if v := r.get(n); v != "" {
			return n, v
		}
	}
	return "", ""
}

func (r *envReader) warnf(format string, args ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}

// millis reads a duration in milliseconds; a bad value is a warning and
// falls back to def.
func (r *envReader) millis(def time.Duration, names ...string) time.Duration {
	name, v := r.first(names...)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		r.warnf("%s: %q is not a number of milliseconds; using %s", name, v, def)
		return def
	}
	return time.Duration(n) * time.Millisecond
}

// count reads a non-negative integer; a bad value is a warning.
func (r *envReader) count(def int, names ...string) int {
	name, v := r.first(names...)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		r.warnf("%s: %q is not a non-negative integer; using %d", name, v, def)
		return def
	}
	return n
}

func (r *envReader) boolean(names ...string) bool {
	_, v := r.first(names...)
	return strings.EqualFold(v, "true")
}

// readSettings reads the OTEL_* variables. It returns an error only for a
// configuration that cannot be what the user meant (a malformed endpoint
// or header list); unknown names and bad numbers are warnings, as the
// OpenTelemetry specification asks.
func readSettings(lookup func(string) (string, bool)) (*settings, error) {
	r := &envReader{lookup: lookup}
	s := &settings{}
	if r.boolean("OTEL_SDK_DISABLED") {
		return s, nil
	}
	var err error
	if s.traces, err = r.exporter("TRACES", "OTEL_TRACES_EXPORTER", "/v1/traces"); err != nil {
		return nil, err
	}
	if s.metrics, err = r.exporter("METRICS", "OTEL_METRICS_EXPORTER", "/v1/metrics"); err != nil {
		return nil, err
	}
	if v := r.get("OTEL_LOGS_EXPORTER"); v != "" && v != "none" {
		r.warnf("OTEL_LOGS_EXPORTER: Fabric exports no OpenTelemetry logs; ignoring %q", v)
	}
	if !s.traces.enabled && !s.metrics.enabled {
		s.warnings = r.warnings
		return s, nil
	}

	s.resource = r.resourceAttrs()
	s.sampler = r.sampler()
	s.spanLimits = r.spanLimits()
	s.bsp = bspSettings{
		scheduleDelay: r.millis(5*time.Second, "OTEL_BSP_SCHEDULE_DELAY"),
		exportTimeout: r.millis(30*time.Second, "OTEL_BSP_EXPORT_TIMEOUT"),
		maxQueue:      r.count(2048, "OTEL_BSP_MAX_QUEUE_SIZE"),
		maxBatch:      r.count(512, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"),
	}
	if s.bsp.maxQueue == 0 {
		s.bsp.maxQueue = 2048
	}
	if s.bsp.maxBatch == 0 || s.bsp.maxBatch > s.bsp.maxQueue {
		s.bsp.maxBatch = min(512, s.bsp.maxQueue)
	}
	s.metricInterval = r.millis(60*time.Second, "OTEL_METRIC_EXPORT_INTERVAL")
	s.metricTimeout = r.millis(30*time.Second, "OTEL_METRIC_EXPORT_TIMEOUT")
	if s.metricInterval <= 0 {
		s.metricInterval = 60 * time.Second
	}
	if s.metricTimeout <= 0 {
		s.metricTimeout = 30 * time.Second
	}
	switch v := strings.ToLower(r.get("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE")); v {
	case "", tempCumulative:
		s.temporality = tempCumulative
	case tempDelta, tempLowMemory:
		s.temporality = v
	default:
		r.warnf("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: unknown value %q; using cumulative", v)
		s.temporality = tempCumulative
	}
	switch v := strings.ToLower(r.get("OTEL_METRICS_EXEMPLAR_FILTER")); v {
	case "":
		s.exemplarFilter = "trace_based"
	case "always_on", "always_off", "trace_based":
		s.exemplarFilter = v
	default:
		r.warnf("OTEL_METRICS_EXEMPLAR_FILTER: unknown value %q; using trace_based", v)
		s.exemplarFilter = "trace_based"
	}
	s.warnings = r.warnings
	return s, nil
}

// exporter reads one signal's exporter choice and OTLP settings. sig is
// TRACES or METRICS; path is the signal's OTLP/HTTP path.
//
// Unlike the specification's default (otlp), an unset OTEL_<SIG>_EXPORTER
// enables the signal only when an OTLP endpoint is configured, so that a
// Fabric with no OTEL_* variables never dials localhost.
func (r *envReader) exporter(sig, exporterVar, path string) (exporterSettings, error) {
	var es exporterSettings
	perSignal := func(suffix string) []string {
		return []string{"OTEL_EXPORTER_OTLP_" + sig + "_" + suffix, "OTEL_EXPORTER_OTLP_" + suffix}
	}
	endpointVar, endpoint := r.first("OTEL_EXPORTER_OTLP_" + sig + "_ENDPOINT")
	signalEndpoint := endpoint != ""
	if !signalEndpoint {
		endpointVar, endpoint = r.first("OTEL_EXPORTER_OTLP_ENDPOINT")
	}

	if v := r.get(exporterVar); v != "" {
		for name := range strings.SplitSeq(v, ",") {
			switch name = strings.ToLower(strings.TrimSpace(name)); name {
			case "otlp":
				es.enabled = true
			case "none", "":
			default:
				r.warnf("%s: exporter %q is not supported by Fabric (only otlp and none); ignoring it", exporterVar, name)
			}
		}
	} else {
		es.enabled = endpoint != ""
	}
	if !es.enabled {
		return es, nil
	}

	protoVar, proto := r.first(perSignal("PROTOCOL")...)
	switch proto = strings.ToLower(proto); proto {
	case "":
		es.protocol = protoHTTPProtobuf
	case protoHTTPProtobuf, protoGRPC:
		es.protocol = proto
	case protoHTTPJSON:
		es.protocol = proto
		if sig == "METRICS" {
			// The Go metric exporter has no JSON encoding; every OTLP/HTTP
			// receiver accepts protobuf on the same path.
			r.warnf("%s: http/json is not available for metrics; using http/protobuf", protoVar)
			es.protocol = protoHTTPProtobuf
		}
	default:
		r.warnf("%s: unknown protocol %q; using http/protobuf", protoVar, proto)
		es.protocol = protoHTTPProtobuf
	}
	grpc := es.protocol == protoGRPC

	insecure := r.boolean(perSignal("INSECURE")...)
	switch {
	case endpoint == "" && grpc:
		endpoint = "http://localhost:4317"
	case endpoint == "":
		endpoint = "http://localhost:4318" + path
	default:
		if !strings.Contains(endpoint, "://") {
			// A bare host:port: TLS unless OTEL_EXPORTER_OTLP_INSECURE says otherwise.
			if insecure {
				endpoint = "http://" + endpoint
			} else {
				endpoint = "https://" + endpoint
			}
		}
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return es, fmt.Errorf("telemetry: %s is not an http or https URL", endpointVar)
		}
		if u.User != nil {
			return es, fmt.Errorf("telemetry: %s must not carry credentials in the URL; use OTEL_EXPORTER_OTLP_HEADERS", endpointVar)
		}
		if !grpc && !signalEndpoint {
			// The generic endpoint is a base URL: append the signal's path.
			u.Path = strings.TrimSuffix(u.Path, "/") + path
		}
		endpoint = u.String()
	}
	es.endpoint = endpoint

	headers := map[string]string{}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_" + sig + "_HEADERS"} {
		v := r.get(name)
		if v == "" {
			continue
		}
		h, err := parseKeyValues(v)
		if err != nil {
			// The value may hold credentials: name the variable only.
			return es, fmt.Errorf("telemetry: %s: %w", name, err)
		}
		for k, val := range h {
			headers[k] = val // the per-signal list wins
		}
	}
	es.headers = headers
	es.timeout = r.millis(10*time.Second, perSignal("TIMEOUT")...)
	if es.timeout <= 0 {
		es.timeout = 10 * time.Second
	}
	switch cVar, c := r.first(perSignal("COMPRESSION")...); strings.ToLower(c) {
	case "", "none":
	case "gzip":
		es.gzip = true
	default:
		r.warnf("%s: unknown compression %q; using none", cVar, c)
	}
	_, es.certificate = r.first(perSignal("CERTIFICATE")...)
	_, es.clientCert = r.first(perSignal("CLIENT_CERTIFICATE")...)
	_, es.clientKey = r.first(perSignal("CLIENT_KEY")...)
	if (es.clientCert == "") != (es.clientKey == "") {
		return es, fmt.Errorf("telemetry: OTEL_EXPORTER_OTLP_%s_CLIENT_CERTIFICATE and _CLIENT_KEY (or their generic forms) must be set together", sig)
	}
	return es, nil
}

// parseKeyValues parses the W3C-baggage-like list of OTEL_*_HEADERS and
// OTEL_RESOURCE_ATTRIBUTES: key=value pairs separated by commas, values
// percent-encoded. Errors never quote the input.
func parseKeyValues(v string) (map[string]string, error) {
	out := map[string]string{}
	for i, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, val, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("entry %d is not key=value", i+1)
		}
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("entry %d has a malformed percent-encoding", i+1)
		}
		out[k] = dec
	}
	return out, nil
}

// resourceAttrs reads OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME.
func (r *envReader) resourceAttrs() map[string]string {
	attrs := map[string]string{}
	if v := r.get("OTEL_RESOURCE_ATTRIBUTES"); v != "" {
		parsed, err := parseKeyValues(v)
		if err != nil {
			// The specification says to discard the whole list.
			r.warnf("OTEL_RESOURCE_ATTRIBUTES: %v; ignoring the variable", err)
		} else {
			attrs = parsed
		}
	}
	if v := r.get("OTEL_SERVICE_NAME"); v != "" {
		attrs["service.name"] = v
	}
	return attrs
}

// sampler reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG.
func (r *envReader) sampler() sdktrace.Sampler {
	name := strings.ToLower(r.get("OTEL_TRACES_SAMPLER"))
	arg := r.get("OTEL_TRACES_SAMPLER_ARG")
	ratio := func() float64 {
		if arg == "" {
			return 1
		}
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || f < 0 || f > 1 {
			r.warnf("OTEL_TRACES_SAMPLER_ARG: %q is not a ratio between 0 and 1; using 1", arg)
			return 1
		}
		return f
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample())
	case "always_on":
		return sdktrace.AlwaysSample()
	case "always_off":
		return sdktrace.NeverSample()
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio())
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample())
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio()))
	}
	r.warnf("OTEL_TRACES_SAMPLER: sampler %q is not supported; using parentbased_always_on", name)
	return sdktrace.ParentBased(sdktrace.AlwaysSample())
}

// spanLimits reads the OTEL_*_LIMIT variables over the SDK's defaults.
func (r *envReader) spanLimits() sdktrace.SpanLimits {
	l := sdktrace.SpanLimits{
		AttributeValueLengthLimit:   sdktrace.DefaultAttributeValueLengthLimit,
		AttributeValueDepthLimit:    sdktrace.DefaultAttributeValueDepthLimit,
		AttributeCountLimit:         sdktrace.DefaultAttributeCountLimit,
		EventCountLimit:             sdktrace.DefaultEventCountLimit,
		LinkCountLimit:              sdktrace.DefaultLinkCountLimit,
		AttributePerEventCountLimit: sdktrace.DefaultAttributePerEventCountLimit,
		AttributePerLinkCountLimit:  sdktrace.DefaultAttributePerLinkCountLimit,
	}
	l.AttributeValueLengthLimit = r.limit(l.AttributeValueLengthLimit, "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT")
	l.AttributeCountLimit = r.limit(l.AttributeCountLimit, "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "OTEL_ATTRIBUTE_COUNT_LIMIT")
	l.EventCountLimit = r.limit(l.EventCountLimit, "OTEL_SPAN_EVENT_COUNT_LIMIT")
	l.LinkCountLimit = r.limit(l.LinkCountLimit, "OTEL_SPAN_LINK_COUNT_LIMIT")
	l.AttributePerEventCountLimit = r.limit(l.AttributePerEventCountLimit, "OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT")
	l.AttributePerLinkCountLimit = r.limit(l.AttributePerLinkCountLimit, "OTEL_LINK_ATTRIBUTE_COUNT_LIMIT")
	return l
}

func (r *envReader) limit(def int, names ...string) int {
	name, v := r.first(names...)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		r.warnf("%s: %q is not an integer; using the default", name, v)
		return def
	}
	return n
}
