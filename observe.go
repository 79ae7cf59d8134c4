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

// WithOTLPExporters makes the client export to the OTLP collector the
// OTEL_* environment variables name (read through WithEnv's lookup), as
// Fabric's binaries do (docs/telemetry.md); pass otlp.Exporters{} from
// package github.com/fabric-runtime/fabric/otlp. Without it a program
// links no exporter, and OTEL_* variables that ask for export only log
// that none is linked; providers passed to WithTelemetryProviders win.
func WithOTLPExporters(e telemetry.Exporters) Option {
	return func(c *Client) { c.obs.exporters = e }
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

// observeStart prepares a runtime's telemetry before its host starts: the
// runtime start span and its trace context in the host's environment,
// and, when the plan enables Relay, the ATOF sink in the plan's Relay
// config and the listener as a turn observer. It returns the plan to
// start (a copy when changed) and the context to start it in.
func (c *Client) observeStart(ctx context.Context, p *contract.RunPlan, ro *runtime.Options) (context.Context, *contract.RunPlan, func(error), error) {
	ro.RuntimeID = runtime.NewID("runtime")
	d := p.AdapterDescriptor.Descriptor
	harness := d.Harness
	if harness == "" {
		harness = d.AdapterID
	}
	env := p.EnvironmentPlan
	provider := contract.EnvironmentLocal
	if env != nil && env.Provider != "" {
		provider = env.Provider
	}
	sctx, end := c.obs.tel.RuntimeStart(ctx, contract.RuntimeHandle{
		RuntimeID: ro.RuntimeID, AgentName: p.AgentName, Harness: harness,
		AdapterKind: d.AdapterKind, AdapterID: d.AdapterID,
		Environment: contract.EnvironmentHandle{Provider: provider},
	})
	ro.ExtraEnv = append(ro.ExtraEnv, telemetry.Environ(sctx)...)
	if tp := p.TelemetryPlan; tp != nil && tp.RelayEnabled {
		l, err := c.relayListener()
		if err != nil {
			err = &RuntimeError{Failure: contract.Failure{Stage: contract.StageStart, Code: "relay_listener_failed", Message: "could not start the ATOF listener for Relay streaming", Err: err}}
			end(err)
			return ctx, p, nil, err
		}
		sc := l.SinkConfig(ro.RuntimeID)
		withSink, err := relay.WithSink(tp, sc)
		if err != nil {
			err = &ConfigError{Failure: contract.Failure{Stage: contract.StageStart, Code: "invalid_relay_config", Path: "relay", Message: err.Error(), Err: err}}
			end(err)
			return ctx, p, nil, err
		}
		cp := *p
		cp.TelemetryPlan = withSink
		p = &cp
		for k, v := range sc.Env {
			ro.ExtraEnv = append(ro.ExtraEnv, k+"="+v)
		}
		ro.Turns = relayObserver{l}
	}
	return sctx, p, end, nil
}

// relayObserver correlates Relay's ATOF records to invocations.
type relayObserver struct{ l *relay.Listener }

func (relayObserver) Name() string { return "relay" }

func (o relayObserver) BeginTurn(ids runtime.TurnIDs, emit func(context.Context, contract.FabricEvent) error) (func(context.Context) any, error) {
	turn, err := o.l.BeginTurn(relay.TurnKey{RuntimeID: ids.RuntimeID, InvocationID: ids.InvocationID, RequestID: ids.RequestID, Index: ids.Index}, emit)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) any { return turn.End(ctx) }, nil
}

// invocationSpan starts an invocation's span and puts its trace context
// where the adapter gets it (runtime_context.telemetry.env). The returned
// sink feeds the span and then events (which may be nil).
func (r *Runtime) invocationSpan(ctx context.Context, events func(contract.FabricEvent)) (context.Context, *telemetry.InvocationSpan, func(contract.FabricEvent)) {
	ctx, span := r.obs.tel.Invocation(ctx, r.obs.info)
	if span == nil {
		return ctx, nil, events
	}
	ctx = runtime.WithTelemetryEnv(ctx, telemetry.EnvMap(ctx))
	return ctx, span, func(ev contract.FabricEvent) {
		span.Event(ev)
		if events != nil {
			events(ev)
		}
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
