package adapterkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/lazy"
	"github.com/fabric-runtime/fabric/internal/wire"
)

// ServiceConnection is what a runtime host bound to a service receives
// (StartInput.Service): the service's id, adapter, type, ownership and
// sanitized connection. Credentials are not in it: they are in the
// environment variables the connection names (keys ending in _env).
type ServiceConnection = hostproto.ServiceBinding

// ServiceAdapter is implemented by an adapter whose descriptor declares
// capabilities.service: a long-lived service (a gateway, a shared server)
// that several runtimes of the adapter use. Serve detects it on the
// Adapter it is given. A host runs either one runtime (Adapter.Start) or
// one service (StartService, or AttachService): a service host takes no
// invocations, answers health through ServiceSession.Health and ends after
// stop, which calls ServiceSession.Stop.
//
// ctx lives as long as the host, as for Adapter.Start. The service must
// listen on loopback (or a private socket) and authenticate its clients
// with credentials it hands out through ServiceCredentials.
type ServiceAdapter interface {
	StartService(ctx context.Context, in ServiceStart) (ServiceSession, error)
}

// ServiceAttacher is optionally implemented by a ServiceAdapter that can
// attach to a service the caller runs (Fabric's AttachService): it checks
// the reference (it should probe that the service answers, with the
// credentials the reference names) and returns a session whose Health
// probes the service and whose Stop only detaches, never stopping the
// service. Without it, Serve attaches without probing: the connection is
// the reference's and health is unsupported.
type ServiceAttacher interface {
	AttachService(ctx context.Context, in ServiceAttach) (ServiceSession, error)
}

// ServiceStart is what the core sends to start a service.
type ServiceStart struct {
	ServiceID   string
	ServiceType string // resolved by the core from the descriptor
	AgentName   string
	BaseDir     string
	Config      contract.AgentConfig
	// Home is the service host's private directory (FABRIC_HOME), removed
	// when the service is released.
	Home string
}

// ServiceAttach is what the core sends to attach to a caller-owned
// service. Reference.Connection holds non-secret fields and the names of
// the environment variables holding credentials (keys ending in _env); the
// core has put those variables in the host's environment.
type ServiceAttach struct {
	ServiceStart
	Reference contract.ServiceReference
}

// ServiceSession is one running service (or attachment) in the host.
type ServiceSession interface {
	// Connection is the sanitized summary given to bound runtimes and
	// reported in the ServiceHandle: addresses, ports, paths and the names
	// of the environment variables that hold credentials (keys ending in
	// _env), never a credential value. Called once, after start.
	Connection() map[string]any
	// Health reports evidence for one check level without calling a model:
	// live (the service's process or session is observed), active (its
	// request interface answers) and ready (an authenticated request
	// succeeds, required setup observed). As Session.Health.
	Health(ctx context.Context, level string) (Health, error)
	// Stop stops the service (or, for an attachment, only detaches). It is
	// called once, with a context bounded by the stop timeout.
	Stop(ctx context.Context) error
}

// ServiceCredentials is optionally implemented by a ServiceSession whose
// clients need credentials: CredentialEnv maps environment variable names
// to secret values, which the core passes to every runtime host bound to
// the service (never into a document or a log). Each name should appear
// as the value of a *_env key of Connection. Called once, after start.
type ServiceCredentials interface {
	CredentialEnv() map[string]string
}

// ServiceMetadata is optionally implemented by a ServiceSession that
// reports metadata (version, readiness) for the ServiceHandle. Called
// once, after start.
type ServiceMetadata interface {
	ServiceMetadata() map[string]any
}

// CodeServiceUnsupported: the adapter implements no ServiceAdapter.
const CodeServiceUnsupported = "lifecycle_service_unsupported"

// envName is the shape of an environment variable name.
var envName = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) }}

// serviceSession lets the host's lifecycle state machine run a service:
// health and stop go to the service; invoke is refused before it gets
// here (host.invoke checks host.service).
type serviceSession struct{ ServiceSession }

func (serviceSession) Invoke(context.Context, Invocation) (contract.AgentRunResult, error) {
	return contract.AgentRunResult{}, Errorf(CodeInvalidOperation, "a service takes no invocations")
}

// referenceAttachment is the attachment of an adapter without
// ServiceAttacher: no probe, the reference's connection, no health.
type referenceAttachment struct{ conn map[string]any }

func (a referenceAttachment) Connection() map[string]any { return a.conn }
func (referenceAttachment) Health(context.Context, string) (Health, error) {
	return Health{}, errors.ErrUnsupported
}
func (referenceAttachment) Stop(context.Context) error { return nil }

// handleService answers service_start and service_attach (v2).
func (s *v2Server) handleService(req *wire.Request) (any, error) {
	if !isObject(req.Params) {
		return nil, rpcFailure(lifecycleFailure(contract.StagePrepare, CodeInvalidRequest, req.Method+" params must be an object"))
	}
	res, fail, end := s.startService(req.Method, req.Params)
	if fail != nil {
		if end {
			s.endAfter(req.ID)
		}
		return nil, rpcFailure(fail)
	}
	return res, nil
}

// startService runs a service_start or service_attach. end reports that
// the adapter was called and failed, after which the host must end.
func (h *host) startService(method string, raw json.RawMessage) (res *hostproto.ServiceStartResult, fail *hostproto.ErrorData, end bool) {
	const stage = contract.StagePrepare
	var p hostproto.ServiceStartParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, lifecycleFailure(stage, CodeInvalidStart, "Service payload does not match its typed contract: "+err.Error()), false
	}
	attach := method == hostproto.MethodServiceAttach
	switch {
	case p.ServiceID == "":
		return nil, lifecycleFailure(stage, CodeInvalidRuntime, "Service payload is missing a service ID"), false
	case attach && p.Reference == nil:
		return nil, lifecycleFailure(stage, CodeInvalidStart, "Service attach payload is missing a reference"), false
	}
	sa, ok := h.adapter.(ServiceAdapter)
	if !ok {
		return nil, lifecycleFailure(stage, CodeServiceUnsupported, "Adapter does not provide services"), false
	}
	in := ServiceStart{
		ServiceID: p.ServiceID, ServiceType: p.ServiceType, AgentName: p.AgentName,
		BaseDir: p.BaseDir, Config: p.Config, Home: os.Getenv(hostproto.EnvHome),
	}
	call := func(ctx context.Context) (ServiceSession, error) { return sa.StartService(ctx, in) }
	if attach {
		ref := *p.Reference
		if at, ok := h.adapter.(ServiceAttacher); ok {
			call = func(ctx context.Context) (ServiceSession, error) {
				return at.AttachService(ctx, ServiceAttach{ServiceStart: in, Reference: ref})
			}
		} else {
			call = func(context.Context) (ServiceSession, error) {
				return referenceAttachment{conn: maps.Clone(ref.Connection)}, nil
			}
		}
	}

	h.mu.Lock()
	switch h.phase {
	case phaseIdle:
	case phaseStopping, phaseStopped:
		h.mu.Unlock()
		return nil, lifecycleFailure(stage, CodeStopInProgress, "Lifecycle host is stopping"), false
	default:
		h.mu.Unlock()
		return nil, lifecycleFailure(stage, CodeAlreadyStarted, "Lifecycle host already owns a runtime or service"), false
	}
	ctx, cancel := context.WithCancel(h.life)
	done := make(chan struct{})
	h.phase, h.startCancel, h.startDone = phaseStarting, cancel, done
	h.mu.Unlock()
	defer close(done)

	ss, out, err := h.callService(ctx, method, call)
	h.mu.Lock()
	if err != nil {
		h.phase = phaseStopped
		h.mu.Unlock()
		if ss != nil {
			h.stopQuietly(serviceSession{ss})
		}
		cancel()
		f := h.adapterFailure(method, err)
		f.Stage = stage
		return nil, f, true
	}
	if h.phase != phaseStarting { // a shutdown began meanwhile
		h.mu.Unlock()
		h.stopQuietly(serviceSession{ss})
		cancel()
		return nil, lifecycleFailure(stage, CodeStopInProgress, "Lifecycle host stopped while the service was starting"), true
	}
	h.phase, h.session, h.runtimeID, h.service = phaseStarted, serviceSession{ss}, p.ServiceID, true
	h.mu.Unlock()
	h.log.Debug("adapterkit: service started", "service_id", p.ServiceID, "attach", attach)
	return out, nil, false
}

// callService calls the adapter and collects the session's report,
// recovering panics. A session returned with an error is returned too, to
// be stopped.
func (h *host) callService(ctx context.Context, method string, call func(context.Context) (ServiceSession, error)) (ss ServiceSession, res *hostproto.ServiceStartResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			h.recovered(method, v, &err)
		}
	}()
	ss, err = call(ctx)
	if err == nil && ss == nil {
		err = errors.New("adapter returned neither a service session nor an error")
	}
	if err != nil {
		return ss, nil, err
	}
	res, err = serviceReport(ss)
	return ss, res, err
}

// serviceReport collects what the core needs from a started service and
// checks that no credential value leaks into the connection or metadata.
func serviceReport(ss ServiceSession) (*hostproto.ServiceStartResult, error) {
	res := &hostproto.ServiceStartResult{}
	var err error
	if res.Connection, err = jsonObject(ss.Connection()); err != nil {
		return nil, fmt.Errorf("service connection: %w", err)
	}
	if m, ok := ss.(ServiceMetadata); ok {
		if res.Metadata, err = jsonObject(m.ServiceMetadata()); err != nil {
			return nil, fmt.Errorf("service metadata: %w", err)
		}
	}
	if c, ok := ss.(ServiceCredentials); ok {
		res.CredentialEnv = maps.Clone(c.CredentialEnv())
	}
	for name, value := range res.CredentialEnv {
		if !envName.Get().MatchString(name) {
			return nil, Errorf(CodeInvalidResponse, "service credential variable %q is not an environment variable name", name)
		}
		if value == "" {
			return nil, Errorf(CodeInvalidResponse, "service credential variable %s is empty", name)
		}
		for where, doc := range map[string]map[string]any{"connection": res.Connection, "metadata": res.Metadata} {
			if containsValue(doc, value) {
				return nil, Errorf(CodeInvalidResponse, "the service %s contains the value of credential variable %s", where, name)
			}
		}
	}
	return res, nil
}

// jsonObject deep-copies m through JSON, so that what is reported is what
// the core receives and the session cannot change it later.
func jsonObject(m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = json.Unmarshal(b, &out)
	return out, err
}

// containsValue reports whether a string in v (keys included) contains
// secret.
func containsValue(v any, secret string) bool {
	switch v := v.(type) {
	case string:
		return strings.Contains(v, secret)
	case map[string]any:
		for k, e := range v {
			if strings.Contains(k, secret) || containsValue(e, secret) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if containsValue(e, secret) {
				return true
			}
		}
	}
	return false
}
