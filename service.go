package fabric

import (
	"context"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/runtime"
	"github.com/fabric-runtime/fabric/internal/service"
)

// Service is a long-lived adapter service shared by runtimes of one
// adapter (for example a gateway process): Fabric-owned when prepared by
// PrepareService, caller-owned when attached by AttachService. Start
// runtimes with it through WithService. It is safe for concurrent use.
type Service struct {
	s   *service.Service
	reg *registry
}

// StartOption adjusts how a runtime is started.
type StartOption func(*startConfig)

type startConfig struct {
	service *Service
	env     []string
	follow  bool
}

// WithFollowableTurns makes every turn of the runtime followable (Follow,
// ResumeStream), not only those started by InvokeStream: Invoke also keeps
// the turn's events in a bounded log, for watchers such as a console. A
// watcher that falls behind loses records (StreamRecord.Dropped says how
// many); it never holds the harness back.
func WithFollowableTurns() StartOption {
	return func(c *startConfig) { c.follow = true }
}

// WithHostEnvVars adds "NAME=value" entries to this runtime's adapter host
// environment, after everything else (a per-runtime credential a
// supervisor resolved, say). Values are treated as secrets: they are
// scrubbed from diagnostics and never enter the plan, handle or result.
func WithHostEnvVars(env ...string) StartOption {
	return func(c *startConfig) { c.env = append(c.env, env...) }
}

// WithService binds the runtime to a service of the same adapter: the
// runtime's handle carries the service id, its adapter host receives the
// service's connection (and its credentials as environment variables,
// never in documents), and the service cannot be released until the
// runtime is stopped. A service of another adapter is refused with a
// *CapabilityError (service_adapter_mismatch); a released or failed
// service with a *StateError.
func WithService(s *Service) StartOption {
	return func(c *startConfig) { c.service = s }
}

func startOptions(opts []StartOption) startConfig {
	var sc startConfig
	for _, o := range opts {
		if o != nil {
			o(&sc)
		}
	}
	return sc
}

// refuse refuses, before planning, what a runtime bound to a service
// cannot run: services reject interfaces here, in the SDK, once per path.
func (sc *startConfig) refuse(cfg *contract.FabricConfig) error {
	if sc.service == nil {
		return nil
	}
	return service.RejectInterfaces(cfg, contract.StageStart)
}

// bind reserves the service (if any) for a runtime about to start from p
// and sets it in ro; the returned function must be called with the
// started runtime, or nil if the start failed.
func (sc *startConfig) bind(p *contract.RunPlan, ro *runtime.Options) (func(*runtime.Runtime), error) {
	if sc.service == nil {
		return func(*runtime.Runtime) {}, nil
	}
	b, done, err := sc.service.s.Acquire(p.AdapterDescriptor.Descriptor.AdapterID)
	if err != nil {
		return nil, err
	}
	ro.Service = b
	return func(rt *runtime.Runtime) {
		if rt == nil {
			done(nil)
			return
		}
		done(rt)
	}, nil
}

// PrepareService plans a loaded config and starts its adapter's service,
// owned by Fabric: a service host (an adapter host in its own process
// group, with a private home and Fabric's start and stop deadlines) runs
// it until Release. The adapter must declare capabilities.service
// (*CapabilityError service_unsupported otherwise). A config that enables
// harness.settings.interfaces is refused with a *CapabilityError
// (service_interfaces_unsupported) before anything is started.
func (c *Client) PrepareService(ctx context.Context, l *Loaded) (*Service, error) {
	if err := service.RejectInterfaces(&l.Config, contract.StagePrepare); err != nil {
		return nil, err
	}
	p, err := c.Plan(ctx, l)
	if err != nil {
		return nil, err
	}
	s, err := service.Prepare(ctx, p, c.serviceOptions())
	if err != nil {
		return nil, err
	}
	return c.track(s), nil
}

// AttachService attaches to a service the caller runs, described by ref:
// its adapter must be the config's, the adapter must declare
// capabilities.service and provide ref.ServiceType, and ref.Connection
// must hold no credential value: credentials are named by keys ending in
// _env (for example token_env) whose variables are set in the caller's
// environment. When the adapter can, the service is probed before
// AttachService returns. Fabric owns only the attachment: Release detaches
// and never stops the service. Reference problems are *ConfigError or
// *CapabilityError naming the field; none holds a credential value.
func (c *Client) AttachService(ctx context.Context, l *Loaded, ref contract.ServiceReference) (*Service, error) {
	if err := service.RejectInterfaces(&l.Config, contract.StagePrepare); err != nil {
		return nil, err
	}
	p, err := c.Plan(ctx, l)
	if err != nil {
		return nil, err
	}
	s, err := service.Attach(ctx, p, ref, c.serviceOptions())
	if err != nil {
		return nil, err
	}
	return c.track(s), nil
}

func (c *Client) serviceOptions() service.Options {
	return service.Options{Runtime: c.runtimeOptions()}
}

func (c *Client) track(s *service.Service) *Service {
	svc := &Service{s: s, reg: &c.live}
	c.live.addService(s.ID(), svc)
	return svc
}

// Handle returns the service's handle: service_id, the opaque
// service_binding, adapter_id, service_type, ownership, the sanitized
// connection (never a credential value), metadata and current status.
func (s *Service) Handle() contract.ServiceHandle { return s.s.Handle() }

// ID returns the service id.
func (s *Service) ID() string { return s.s.ID() }

// Status returns active, releasing, released or failed.
func (s *Service) Status() string { return s.s.Status() }

// HostPid returns the process id (and process group id) of the service's
// host: the service host of a Fabric-owned service, the attachment host
// of a caller-owned one. It is for diagnostics and conformance checks,
// as Runtime.HostPid: release the service with Release, never with a
// signal of your own.
func (s *Service) HostPid() int { return s.s.HostPid() }

// VerifyHandle checks that h is this service's handle, unforged; a
// mismatch is a *StateError (service_handle_mismatch).
func (s *Service) VerifyHandle(h contract.ServiceHandle) error { return s.s.VerifyHandle(&h) }

// Release stops a Fabric-owned service (its host's whole process group)
// or detaches from a caller-owned one, which keeps running. While a
// runtime started with the service is not stopped it is refused with a
// retryable *StateError whose Code is "service_in_use" (its metadata lists
// the runtime ids). Once released, later calls return nil.
func (s *Service) Release(ctx context.Context) error {
	err := s.s.Release(ctx)
	if err == nil {
		s.reg.removeService(s.ID())
	}
	return err
}

// Check runs a bounded health check of this service (scope "service"):
// live, the service host process is observed; active, the service answers
// its request interface; ready, the adapter observes its required setup.
// Scope and service id default to this service; one deadline covers the
// whole check (req.TimeoutSeconds, default 3 s); a timeout gives unknown
// (probe_timeout), never failed. The error is a *ConfigError for an
// invalid request.
func (s *Service) Check(ctx context.Context, req contract.CheckRequest) (contract.CheckReport, error) {
	if req.Scope == "" {
		req.Scope = contract.ScopeService
	}
	if req.ServiceID == "" && req.Scope == contract.ScopeService {
		req.ServiceID = s.ID()
	}
	if err := normalizeCheck(&req); err != nil {
		return contract.CheckReport{}, err
	}
	if req.Scope != contract.ScopeService || req.ServiceID != s.ID() {
		path := "scope"
		if req.Scope == contract.ScopeService {
			path = "service_id"
		}
		return contract.CheckReport{}, checkRequestError(path, "names another target than this service")
	}
	return s.s.Check(ctx, req), nil
}

// check serves Client.Check.
func (s *Service) check(ctx context.Context, req contract.CheckRequest) contract.CheckReport {
	return s.s.Check(ctx, req)
}
