package fabric

import (
	"context"
	"errors"
	"sync"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/health"
)

// Check runs a bounded health check of this runtime: cumulative levels
// live, active and ready (default live), one deadline for the whole check
// (req.TimeoutSeconds, default 3 s). Scope and runtime id default to this
// runtime. A check never changes the runtime's state, never calls the model
// and never waits behind a running invocation; a timeout gives outcome
// unknown (probe_timeout), never failed. The error is a *ConfigError
// naming the field for an invalid request; otherwise the report says
// everything.
func (r *Runtime) Check(ctx context.Context, req contract.CheckRequest) (contract.CheckReport, error) {
	if req.Scope == "" {
		req.Scope = contract.ScopeRuntime
	}
	if req.RuntimeID == "" && req.Scope == contract.ScopeRuntime {
		req.RuntimeID = r.ID()
	}
	if err := normalizeCheck(&req); err != nil {
		return contract.CheckReport{}, err
	}
	if req.Scope != contract.ScopeRuntime || req.RuntimeID != r.ID() {
		path := "scope"
		if req.Scope == contract.ScopeRuntime {
			path = "runtime_id"
		}
		return contract.CheckReport{}, checkRequestError(path, "names another target than this runtime")
	}
	return r.rt.Check(ctx, req), nil
}

// Check answers a health check for a target of this client: a runtime it
// started (by runtime id) or a service it prepared or attached (by service
// id). A runtime or service this client does not hold is reported failed
// (runtime_unavailable / service_unavailable). The server scope belongs to
// a runtime server (fabric-agent-ctl); the local SDK reports it
// unsupported (unsupported_scope).
func (c *Client) Check(ctx context.Context, req contract.CheckRequest) (contract.CheckReport, error) {
	if err := normalizeCheck(&req); err != nil {
		return contract.CheckReport{}, err
	}
	switch req.Scope {
	case contract.ScopeServer:
		return health.Unsupported(req, contract.ReasonUnsupportedScope, "the local SDK has no runtime server; a sandbox's server answers through fabric-agent-ctl check"), nil
	case contract.ScopeRuntime:
		if r := c.live.runtime(req.RuntimeID); r != nil {
			return r.rt.Check(ctx, req), nil
		}
		return health.Missing(req, contract.ReasonRuntimeUnavailable, "this client holds no running runtime with this id"), nil
	default:
		if s := c.live.service(req.ServiceID); s != nil {
			return s.check(ctx, req), nil
		}
		return health.Missing(req, contract.ReasonServiceUnavailable, "this client holds no service with this id"), nil
	}
}

func normalizeCheck(req *contract.CheckRequest) error {
	if err := health.Normalize(req); err != nil {
		var he *health.Error
		if errors.As(err, &he) {
			return checkRequestError(he.Path, he.Message)
		}
		return err
	}
	return nil
}

func checkRequestError(path, msg string) error {
	return &ConfigError{Failure: contract.Failure{Stage: contract.StageConfig, Code: "invalid_check_request", Path: path, Message: path + ": " + msg}}
}

// checker is a service as Client.Check sees it.
type checker interface {
	check(ctx context.Context, req contract.CheckRequest) contract.CheckReport
}

// registry holds a client's live runtimes and services by id.
type registry struct {
	mu       sync.Mutex
	runtimes map[string]*Runtime
	services map[string]checker
}

func (g *registry) addRuntime(r *Runtime) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.runtimes == nil {
		g.runtimes = make(map[string]*Runtime)
	}
	g.runtimes[r.ID()] = r
}

func (g *registry) removeRuntime(r *Runtime) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.runtimes[r.ID()] == r {
		delete(g.runtimes, r.ID())
	}
}

func (g *registry) runtime(id string) *Runtime {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.runtimes[id]
}

func (g *registry) addService(id string, s checker) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.services == nil {
		g.services = make(map[string]checker)
	}
	g.services[id] = s
}

func (g *registry) removeService(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.services, id)
}

func (g *registry) service(id string) checker {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.services[id]
}
