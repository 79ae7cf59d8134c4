package fabric

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/relay"
	"github.com/fabric-runtime/fabric/internal/runtime"
	"github.com/fabric-runtime/fabric/internal/telemetry"
)

// WithTelemetryProviders makes the client trace and measure through the
// caller's OpenTelemetry providers instead of the exporters the OTEL_*
// environment variables choose (either may be nil). The client never
// shuts them down.
func WithTelemetryProviders(tp trace.TracerProvider, mp metric.MeterProvider) Option {
	return func(c *Client) { c.obs.tp, c.obs.mp = tp, mp }
}

// OTLPExporters builds the OTLP exporters the OTEL_* environment
// variables turn on. Package github.com/fabric-runtime/fabric/otlp has
// the implementation (otlp.Exporters); the methods that build the
// exporters take Fabric's internal export settings, so the interface
// names only the method that marks an implementation.
type OTLPExporters interface {
	// FabricOTLPExporters marks package otlp's exporters.
	FabricOTLPExporters()
}

// WithOTLPExporters makes the client export to the OTLP collector the
// OTEL_* environment variables name (read through WithEnv's lookup), as
// Fabric's binaries do (docs/telemetry.md); pass otlp.Exporters{}.
// Without it a program links no exporter, and OTEL_* variables that ask
// for export only log that none is linked; providers passed to
// WithTelemetryProviders win.
func WithOTLPExporters(e OTLPExporters) Option {
	return func(c *Client) {
		// otlp.Exporters is the one implementation and has the building
		// methods; anything else builds nothing, which initTelemetry reports.
		x, _ := e.(telemetry.Exporters)
		c.obs.exporters = x
	}
}

// observers are a client's telemetry: OpenTelemetry (from OTEL_* or the
// caller's providers) and, for configs that enable NeMo Relay, the ATOF
// listener that streams Relay records into invocations.
type observers struct {
	tp  trace.TracerProvider
	mp  metric.MeterProvider
	tel *telemetry.Telemetry
	// exporters build the OTLP exporters OTEL_* asks for (WithOTLPExporters).
	exporters telemetry.Exporters

	mu       sync.Mutex
	relay    *relay.Listener
	relayErr error
}

func (c *Client) initTelemetry() {
	tel, err := telemetry.New(context.Background(), telemetry.Options{
		LookupEnv: c.lookupEnv, ServiceName: "fabric", Logger: c.logger,
		TracerProvider: c.obs.tp, MeterProvider: c.obs.mp, Exporters: c.obs.exporters,
	})
	if err != nil {
		c.logger.Warn("fabric: telemetry is off: its configuration is invalid", "error", err)
		tel = telemetry.Disabled()
	}
	c.obs.tel = tel
}

// relayListener returns the client's ATOF listener, started on first use.
func (c *Client) relayListener() (*relay.Listener, error) {
	c.obs.mu.Lock()
	defer c.obs.mu.Unlock()
	if c.obs.relay == nil && c.obs.relayErr == nil {
		c.obs.relay, c.obs.relayErr = relay.NewListener(relay.Options{Logger: c.logger})
	}
	return c.obs.relay, c.obs.relayErr
}

// Shutdown flushes telemetry and closes the Relay listener. Runtimes are
// not stopped: stop them first.
func (c *Client) Shutdown(ctx context.Context) error {
	c.obs.mu.Lock()
	l := c.obs.relay
	c.obs.relay = nil
	c.obs.mu.Unlock()
	var errs []error
	if l != nil {
		errs = append(errs, l.Close(ctx))
	}
	errs = append(errs, c.obs.tel.Shutdown(ctx))
	return errors.Join(errs...)
}

// observeStart starts rt inside the runtime start span: the span's trace
// context goes to the host's environment and, when the plan enables Relay,
// the client's ATOF listener to the runtime. It returns what the runtime's
// invocations need for telemetry.
func (c *Client) observeStart(ctx context.Context, rt *runtime.Runtime) (runtimeObs, error) {
	sctx, end := c.obs.tel.RuntimeStart(ctx, rt.Handle())
	obs := newRuntimeObs(c.obs.tel, sctx, rt)
	tel := runtime.Telemetry{TraceEnv: telemetry.Environ(sctx)}
	var err error
	if tp := rt.Plan().TelemetryPlan; tp != nil && tp.RelayEnabled {
		if tel.Relay, err = c.relayListener(); err != nil {
			err = &RuntimeError{Failure: contract.Failure{Stage: contract.StageStart, Code: "relay_listener_failed", Message: "could not start the ATOF listener for Relay streaming", Err: err}}
		}
	}
	if err == nil {
		err = rt.Start(sctx, tel)
	}
	end(err)
	return obs, err
}

// invocationSpan starts an invocation's span and puts its trace context
// where the adapter gets it (runtime_context.telemetry.env). The returned
// options feed events to the span and then to events (which may be nil).
func (r *Runtime) invocationSpan(ctx context.Context, events func(contract.FabricEvent)) (context.Context, *telemetry.InvocationSpan, runtime.InvokeOptions) {
	ctx, span := r.obs.tel.Invocation(ctx, r.obs.info)
	if span == nil {
		return ctx, nil, runtime.InvokeOptions{Events: events}
	}
	return ctx, span, runtime.InvokeOptions{
		TraceEnv: telemetry.EnvMap(ctx),
		Events: func(ev contract.FabricEvent) {
			span.Event(ev)
			if events != nil {
				events(ev)
			}
		},
	}
}

// runtimeObs is what a runtime's invocations need for telemetry.
type runtimeObs struct {
	tel  *telemetry.Telemetry
	info telemetry.Invocation
}

func newRuntimeObs(tel *telemetry.Telemetry, startCtx context.Context, rt *runtime.Runtime) runtimeObs {
	h := rt.Handle()
	info := telemetry.Invocation{RuntimeID: h.RuntimeID, Agent: h.AgentName, Harness: h.Harness, AdapterID: h.AdapterID, Runtime: telemetry.RefFrom(startCtx)}
	if p := rt.Plan(); p != nil && p.ModelRole != "" {
		if m, ok := p.Config.Models[p.ModelRole]; ok {
			info.Model, info.Provider = m.Model, m.Provider
		}
	}
	return runtimeObs{tel: tel, info: info}
}
