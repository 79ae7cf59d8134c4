package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/host"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/plan"
)

// ServiceBinding binds a runtime to a service (Options.Service): the
// runtime's handle carries the service id, its host receives Service in
// start and Env in its environment.
type ServiceBinding struct {
	Service hostproto.ServiceBinding
	// Env holds credential variables (name to secret value) for the
	// runtime host's environment; the values are scrubbed from its
	// diagnostics and never written into a document.
	Env map[string]string
}

// bindService applies opts.Service to a runtime being started: the
// environment gains FABRIC_SERVICE_ID and the credential variables, the
// secrets gain their values.
func bindService(b *ServiceBinding, env, secrets []string) ([]string, []string) {
	if b == nil {
		return env, secrets
	}
	extra := maps.Clone(b.Env)
	if extra == nil {
		extra = map[string]string{}
	}
	extra[hostproto.EnvServiceID] = b.Service.ServiceID
	for _, v := range b.Env {
		secrets = append(secrets, v)
	}
	return mergeEnv(env, extra), secrets
}

// mergeEnv sets the variables of extra in env (a sorted KEY=VALUE list),
// replacing earlier values, and returns it sorted.
func mergeEnv(env []string, extra map[string]string) []string {
	out := make([]string, 0, len(env)+len(extra))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := extra[k]; !ok {
			out = append(out, kv)
		}
	}
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// ServiceLaunch says what a service host runs.
type ServiceLaunch struct {
	// Method is hostproto.MethodServiceStart (a Fabric-owned service) or
	// hostproto.MethodServiceAttach (an attachment to a caller-owned one).
	Method string
	// Params are sent with Method; AgentName, BaseDir and Config are filled
	// from the plan when empty. ServiceID is required.
	Params hostproto.ServiceStartParams
	// Env holds extra variables for the host (the credentials a reference
	// names); their values are scrubbed from the host's diagnostics.
	Env map[string]string
}

// ServiceHost is the adapter host process of one service or attachment:
// its own process group, private home and lifecycle deadlines, exactly as
// a runtime's host.
type ServiceHost struct {
	id     string
	host   *host.Host
	home   string
	limits contract.LifecycleLimits
	logger *slog.Logger

	stopOnce sync.Once
	stopErr  error
}

// LaunchService starts the plan's adapter host for a service and sends
// ServiceLaunch.Method within the start deadline. On failure nothing is
// left behind. The host speaks protocol v2 (services have no v1 binding).
func LaunchService(ctx context.Context, p *contract.RunPlan, opts Options, sl ServiceLaunch) (*ServiceHost, hostproto.ServiceStartResult, error) {
	opts.fill()
	var none hostproto.ServiceStartResult
	if err := CheckPlan(p, contract.StagePrepare); err != nil {
		return nil, none, err
	}
	if p.HostProtocol != contract.HostProtocolV2 {
		return nil, none, &contract.CapabilityError{Failure: contract.Failure{Stage: contract.StagePrepare, Code: "service_protocol_unsupported", Path: "harness.adapter_id", Message: fmt.Sprintf("services need host protocol %s; adapter %s speaks %q", contract.HostProtocolV2, p.AdapterDescriptor.Descriptor.AdapterID, p.HostProtocol)}}
	}
	id := sl.Params.ServiceID
	if id == "" {
		return nil, none, errors.New("runtime: LaunchService: no service id")
	}
	if sl.Params.AgentName == "" {
		sl.Params.AgentName = p.AgentName
	}
	if sl.Params.BaseDir == "" {
		sl.Params.BaseDir = p.BaseDir
	}
	if sl.Params.Config.Harness == nil {
		sl.Params.Config = plan.AgentConfig(p)
	}
	limits := limitsOf(p)
	fail := func(err error) error { return runtimeErr(contract.StagePrepare, err) }
	if err := os.MkdirAll(opts.StateDir, 0o700); err != nil {
		return nil, none, fail(fmt.Errorf("create state dir: %w", err))
	}
	home, err := os.MkdirTemp(opts.StateDir, id+"-")
	if err != nil {
		return nil, none, fail(fmt.Errorf("create service home: %w", err))
	}
	envv, path := hostEnv(p, &opts, id, home, "")
	extra := maps.Clone(sl.Env)
	if extra == nil {
		extra = map[string]string{}
	}
	extra[hostproto.EnvServiceID] = id
	envv = mergeEnv(envv, extra)
	bin, args, dir, err := command(p, &opts, path)
	if err != nil {
		os.RemoveAll(home)
		return nil, none, fail(err)
	}
	secrets := secretValues(&p.Config, opts.LookupEnv)
	for _, v := range sl.Env {
		secrets = append(secrets, v)
	}
	sctx, cancel := host.WithDeadline(ctx, seconds(limits.StartSeconds))
	defer cancel()
	h, err := host.Launch(sctx, host.Spec{
		Path: bin, Args: args, Dir: dir, Env: envv, Protocol: p.HostProtocol, Home: home,
		Secrets: secrets, ExitGrace: seconds(limits.ExitGraceSeconds), Logger: opts.Logger,
	})
	if err != nil {
		os.RemoveAll(home)
		return nil, none, fail(err)
	}
	res, err := h.StartService(sctx, sl.Method, sl.Params)
	if err != nil {
		tctx, tcancel := context.WithTimeout(context.Background(), seconds(limits.StopSeconds))
		h.Terminate(tctx)
		tcancel()
		os.RemoveAll(home)
		return nil, none, fail(err)
	}
	h.AddSecrets(slices.Collect(maps.Values(res.CredentialEnv))...)
	opts.Logger.Debug("service host started", "service_id", id, "adapter", p.AdapterDescriptor.Descriptor.AdapterID, "method", sl.Method, "pid", h.Pid())
	return &ServiceHost{id: id, host: h, home: home, limits: limits, logger: opts.Logger}, res, nil
}

// Pid is the service host's process id (and process group id).
func (s *ServiceHost) Pid() int { return s.host.Pid() }

// Exited is closed when the service host process has exited.
func (s *ServiceHost) Exited() <-chan struct{} { return s.host.Exited() }

// Home is the service host's private directory (removed at Stop).
func (s *ServiceHost) Home() string { return s.home }

// Health asks the service host for evidence at level, within ctx; a host
// that went away while asked gives an error wrapping ErrHostExited.
func (s *ServiceHost) Health(ctx context.Context, level string) (hostproto.HealthResult, error) {
	var budget int64
	if dl, ok := ctx.Deadline(); ok {
		budget = max(time.Until(dl).Milliseconds(), 1)
	}
	res, err := s.host.Health(ctx, hostproto.HealthParams{Level: level, TimeoutMillis: budget})
	if err == nil || ctx.Err() != nil {
		return res, err
	}
	var he *host.Error
	if errors.As(err, &he) && (he.Code == host.CodeHostCrashed || he.Code == host.CodeHostIO) {
		// The exit is noticed a moment after the channel breaks.
		select {
		case <-s.host.Exited():
			return res, fmt.Errorf("%w: %w", ErrHostExited, err)
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return res, err
}

// ErrHostExited: the service host exited.
var ErrHostExited = errors.New("service host exited")

// Stop sends stop (the host's session stops its service, or detaches),
// waits the exit grace, kills what is left of the host's process group and
// removes its home. Idempotent: later calls return the first result. The
// error is a *contract.RuntimeError (stage release) when the process group
// could not be confirmed gone; an adapter's failure to stop cleanly is
// logged, the host is gone anyway.
func (s *ServiceHost) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.stop(ctx) })
	return s.stopErr
}

func (s *ServiceHost) stop(ctx context.Context) error {
	stopDeadline := seconds(s.limits.StopSeconds)
	select {
	case <-s.host.Exited():
	default:
		sctx, cancel := host.WithDeadline(ctx, stopDeadline)
		if err := s.host.Stop(sctx, s.id); err != nil {
			// Not fatal: the host's process group is ended below.
			s.logger.Warn("service host did not stop cleanly", "service_id", s.id, "error", err)
		}
		cancel()
	}
	tctx, tcancel := context.WithTimeout(context.WithoutCancel(ctx), stopDeadline+seconds(s.limits.ExitGraceSeconds))
	termErr := s.host.Terminate(tctx)
	tcancel()
	if s.host.Killed() {
		s.logger.Warn("service host did not exit within its exit grace and was killed", "service_id", s.id)
	}
	if err := os.RemoveAll(s.home); err != nil && termErr == nil {
		termErr = fmt.Errorf("remove service home: %w", err)
	}
	if termErr != nil {
		return &contract.RuntimeError{Failure: contract.Failure{Stage: contract.StageRelease, Code: "host_termination_failed", Message: "could not confirm the service host's process group is gone", Err: termErr}}
	}
	return nil
}
