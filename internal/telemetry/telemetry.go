package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of Fabric's spans and metrics.
const ScopeName = "github.com/fabric-runtime/fabric"

// DefaultServiceName is service.name when neither OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES nor Options.ServiceName sets one.
const DefaultServiceName = "fabric"

// Options configures New.
type Options struct {
	// LookupEnv reads the OTEL_* (and HTTP(S)_PROXY, NO_PROXY) variables.
	// Nil means no variable is set: telemetry is off unless a provider
	// below is given. Pass os.LookupEnv to honour the process environment.
	LookupEnv func(string) (string, bool)

	// ServiceName and ServiceVersion are the resource's service.name and
	// service.version; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win.
	ServiceName    string
	ServiceVersion string
	// Attributes are extra resource attributes (never secrets);
	// OTEL_RESOURCE_ATTRIBUTES wins on conflicts.
	Attributes map[string]string

	// TracerProvider and MeterProvider, when set, are used instead of the
	// exporters the environment would choose for that signal. They belong
	// to the caller: Shutdown does not shut them down. An application that
	// already runs OpenTelemetry passes its own; tests pass in-memory ones.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider

	// Exporters builds the OTLP exporters of the signals the OTEL_*
	// variables turn on (package otlp). Nil: such a signal stays off, and
	// a warning says that this program links no exporter.
	Exporters Exporters

	// Logger receives configuration warnings and export failures; nil
	// discards them.
	Logger *slog.Logger
}

// Telemetry is one process's tracer and meter. A nil *Telemetry, and one
// built with nothing configured, is valid and does nothing.
type Telemetry struct {
	tracer trace.Tracer // nil: tracing off
	inst   *instruments // nil: metrics off

	shutdowns []func(context.Context) error
	flushes   []func(context.Context) error
	closeOnce sync.Once
	closeErr  error
}

// Disabled returns a Telemetry that records nothing.
func Disabled() *Telemetry { return &Telemetry{} }

// New builds the providers the options and OTEL_* variables ask for. With
// none it returns a disabled Telemetry. It returns an error for a setting
// that cannot be what the user meant (a malformed endpoint URL or header
// list, an unreadable certificate); errors name the variable, never its
// value. Unknown exporter or protocol names are logged and ignored, as
// the OpenTelemetry specification asks.
func New(ctx context.Context, o Options) (*Telemetry, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s, err := readSettings(o.LookupEnv)
	if err != nil {
		return nil, err
	}
	for _, w := range s.warnings {
		log.Warn("telemetry: " + w)
	}
	if o.Exporters == nil {
		for _, sig := range []struct {
			name string
			es   *exporterSettings
			own  bool
		}{{"traces", &s.traces, o.TracerProvider != nil}, {"metrics", &s.metrics, o.MeterProvider != nil}} {
			if sig.es.enabled && !sig.own {
				log.Warn("telemetry: the OTEL_* variables turn on OTLP export, but this program links no OTLP exporter (fabric.WithOTLPExporters); the signal is off", "signal", sig.name)
			}
			sig.es.enabled = false
		}
	}
	t := &Telemetry{}
	if !s.traces.enabled && !s.metrics.enabled && o.TracerProvider == nil && o.MeterProvider == nil {
		return t, nil
	}

	var res *resource.Resource
	if s.traces.enabled || s.metrics.enabled {
		res = buildResource(o, s.resource)
	}

	tp := o.TracerProvider
	if tp == nil && s.traces.enabled {
		exp, err := o.Exporters.SpanExporter(ctx, s.traces.export("", o.LookupEnv))
		if err != nil {
			return nil, err
		}
		sdkTP := sdktrace.NewTracerProvider(
			sdktrace.WithResource(res),
			sdktrace.WithSampler(s.sampler),
			sdktrace.WithRawSpanLimits(s.spanLimits),
			sdktrace.WithBatcher(&spanExporter{SpanExporter: exp, fail: &failureLog{log: log, signal: "traces"}},
				sdktrace.WithBatchTimeout(s.bsp.scheduleDelay),
				sdktrace.WithExportTimeout(s.bsp.exportTimeout),
				sdktrace.WithMaxQueueSize(s.bsp.maxQueue),
				sdktrace.WithMaxExportBatchSize(s.bsp.maxBatch)),
		)
		t.shutdowns = append(t.shutdowns, sdkTP.Shutdown)
		t.flushes = append(t.flushes, sdkTP.ForceFlush)
		tp = sdkTP
	}
	if tp != nil {
		t.tracer = tp.Tracer(ScopeName)
	}

	mp := o.MeterProvider
	if mp == nil && s.metrics.enabled {
		exp, err := o.Exporters.MetricExporter(ctx, s.metrics.export(s.temporality, o.LookupEnv))
		if err != nil {
			_ = t.Shutdown(ctx)
			return nil, err
		}
		filter := exemplar.TraceBasedFilter
		switch s.exemplarFilter {
		case "always_on":
			filter = exemplar.AlwaysOnFilter
		case "always_off":
			filter = exemplar.AlwaysOffFilter
		}
		reader := sdkmetric.NewPeriodicReader(&metricExporter{Exporter: exp, fail: &failureLog{log: log, signal: "metrics"}},
			sdkmetric.WithInterval(s.metricInterval), sdkmetric.WithTimeout(s.metricTimeout))
		sdkMP := sdkmetric.NewMeterProvider(
			sdkmetric.WithResource(res),
			sdkmetric.WithReader(reader),
			sdkmetric.WithExemplarFilter(filter),
			sdkmetric.WithCardinalityLimit(2000),
		)
		t.shutdowns = append(t.shutdowns, sdkMP.Shutdown)
		t.flushes = append(t.flushes, sdkMP.ForceFlush)
		mp = sdkMP
	}
	if mp != nil {
		inst, err := newInstruments(mp.Meter(ScopeName))
		if err != nil {
			_ = t.Shutdown(ctx)
			return nil, err
		}
		t.inst = inst
	}
	return t, nil
}

// buildResource assembles the resource without the SDK's environment
// detectors (which read the process environment).
func buildResource(o Options, fromEnv map[string]string) *resource.Resource {
	m := map[string]string{"service.name": DefaultServiceName}
	if o.ServiceName != "" {
		m["service.name"] = o.ServiceName
	}
	if o.ServiceVersion != "" {
		m["service.version"] = o.ServiceVersion
	}
	for k, v := range o.Attributes {
		m[k] = v
	}
	for k, v := range fromEnv {
		m[k] = v
	}
	m["telemetry.sdk.name"] = "opentelemetry"
	m["telemetry.sdk.language"] = "go"
	m["telemetry.sdk.version"] = sdk.Version()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	attrs := make([]attribute.KeyValue, 0, len(keys))
	for _, k := range keys {
		attrs = append(attrs, attribute.String(k, m[k]))
	}
	return resource.NewSchemaless(attrs...)
}

// Enabled reports whether anything is recorded.
func (t *Telemetry) Enabled() bool { return t != nil && (t.tracer != nil || t.inst != nil) }

// TracingEnabled reports whether spans are recorded.
func (t *Telemetry) TracingEnabled() bool { return t != nil && t.tracer != nil }

// ForceFlush exports everything recorded so far.
func (t *Telemetry) ForceFlush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	for _, f := range t.flushes {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// Shutdown flushes and stops the providers New created (not those passed
// in Options). It is safe to call more than once; later calls return the
// first call's result. ctx bounds the final export.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.closeOnce.Do(func() {
		var errs []error
		for _, f := range t.shutdowns {
			errs = append(errs, f(ctx))
		}
		t.closeErr = errors.Join(errs...)
	})
	return t.closeErr
}
