package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/deploy/desired"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// brokeredKeyEnv carries an agent's placeholder for its brokered model
// route in its host environment; every model role of its config names it.
const brokeredKeyEnv = "FABRIC_BROKERED_MODEL_KEY"

// maxEvents bounds the events kept per resource.
const maxEvents = 20

// agentRun is one deployed agent: its current runtime and the watcher
// that applies its restart policy.
type agentRun struct {
	s    *Supervisor
	spec desired.Agent
	lifecycle

	rt        *fabric.Runtime
	health    *contract.CheckReport
	placeheld string // the route this agent holds a placeholder on

	// On-demand agents: startMu makes one start of concurrent requests;
	// turns counts turns in flight; idle stops the runtime when it fires.
	startMu sync.Mutex
	turns   int
	idle    *time.Timer
	// starts counts runtimes started for the agent: the conversation epoch
	// access gateways see.
	starts int
	recent []supervisorproto.Turn // the last turns, newest last

	// inflight counts the turns admitted (server.Options.Admit) and not
	// ended; ret, once set, is the revocation that retires the agent.
	inflight int
	ret      *retirement
}

func (a *agentRun) running() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state == supervisorproto.StateRunning && a.rt != nil
}

// blockedError is a start that cannot happen until an operator acts.
type blockedError struct{ reason, action, msg string }

func (e *blockedError) Error() string { return e.msg }

// load turns the agent's desired config into a loaded config with its
// inference route bound, and the per-runtime host environment.
func (s *Supervisor) load(a *agentRun) (*fabric.Loaded, []string, error) {
	spec := a.spec
	l, err := s.opts.Client.ParseConfig(spec.Config, spec.Name+".json", fabric.LoadOptions{BaseDir: spec.BaseDir})
	if err != nil {
		return nil, nil, err
	}
	var env []string
	if inf := spec.Inference; inf != nil {
		baseURL, keyEnv := inf.BaseURL, ""
		if inf.Brokered {
			s.mu.Lock()
			proxy := s.proxy
			svc := s.services[inf.Binding]
			s.mu.Unlock()
			if proxy == nil || svc == nil || !svc.healthy() {
				return nil, nil, &blockedError{reason: "integration_unavailable", action: "fix integration " + inf.Binding + " (see its status), then run fabric deploy apply",
					msg: fmt.Sprintf("the brokered model route %s is not serving", inf.Binding)}
			}
			ph, err := proxy.Grant(routeName(inf.Binding), spec.Name)
			if err != nil {
				return nil, nil, err
			}
			a.mu.Lock()
			a.placeheld = routeName(inf.Binding)
			a.mu.Unlock()
			baseURL, keyEnv = proxy.BaseURL(routeName(inf.Binding)), brokeredKeyEnv
			env = append(env, brokeredKeyEnv+"="+ph)
		} else if c := inf.Credential; c != nil {
			v, ok := s.credential(*c)
			if !ok {
				return nil, nil, credentialRequired(*c)
			}
			keyEnv = desired.EnvName(inf.Binding, *c)
			env = append(env, keyEnv+"="+v)
		}
		bindModel(&l.Config, inf, baseURL, keyEnv)
	}
	if ws := workspaceOf(spec); ws != "" {
		if err := os.MkdirAll(ws, 0o755); err != nil {
			return nil, nil, fmt.Errorf("create workspace %s: %w", ws, err)
		}
	}
	return l, env, nil
}

func credentialRequired(c contract.CredentialRef) error {
	what := "environment variable " + c.Env
	if c.File == "" {
		return &blockedError{reason: supervisorproto.CodeCredentialRequired, action: "set " + c.Env + " and run fabric deploy apply again",
			msg: "credential " + what + " is not known to this supervisor (env credentials live in its memory only)"}
	}
	return &blockedError{reason: supervisorproto.CodeCredentialRequired, action: "make " + c.File + " readable, then run fabric deploy apply",
		msg: "credential file " + c.File + " cannot be read"}
}

// bindModel points every model role at the route. A config without any
// model role gets a default one when the route names a model.
func bindModel(cfg *contract.FabricConfig, inf *desired.Inference, baseURL, keyEnv string) {
	if len(cfg.Models) == 0 && inf.Model == "" {
		// Nothing names a model: the route is attached (the agent holds its
		// credential) but there is no role to point at it.
		return
	}
	if len(cfg.Models) == 0 {
		provider := "openai"
		if inf.API == contract.InferenceAnthropicMessages {
			provider = "anthropic"
		}
		cfg.Models = map[string]contract.ModelConfig{"default": {Provider: provider, Model: inf.Model}}
	}
	for role, m := range cfg.Models {
		if baseURL != "" {
			u := baseURL
			m.BaseURL = &u
		}
		if keyEnv != "" {
			k := keyEnv
			m.APIKeyEnv = &k
		}
		if inf.Model != "" {
			m.Model = inf.Model
		}
		cfg.Models[role] = m
	}
}

func workspaceOf(a desired.Agent) string {
	var cfg struct {
		Environment *struct {
			Workspace *string `json:"workspace"`
		} `json:"environment"`
	}
	if err := jsonUnmarshal(a.Config, &cfg); err != nil || cfg.Environment == nil || cfg.Environment.Workspace == nil {
		return ""
	}
	ws := *cfg.Environment.Workspace
	if !filepath.IsAbs(ws) {
		ws = filepath.Join(a.BaseDir, ws)
	}
	return ws
}

// startOnce starts one runtime for the agent and its watcher.
func (s *Supervisor) startOnce(ctx context.Context, a *agentRun) error {
	l, env, err := s.load(a)
	if err != nil {
		return err
	}
	// Every turn is followable: the console watches them live.
	opts := []fabric.StartOption{fabric.WithFollowableTurns()}
	if len(env) > 0 {
		opts = append(opts, fabric.WithHostEnvVars(env...))
	}
	rt, err := s.srv.StartAgent(ctx, a.spec.Name, a.spec.Source, l, opts...)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.rt, a.state, a.reason, a.action, a.health = rt, supervisorproto.StateRunning, "", "", nil
	a.starts++
	a.mu.Unlock()
	a.event("runtime_started", "runtime started", rt.ID())
	return nil
}

// start starts the agent's first runtime (synchronously, for apply) and
// then watches it.
func (s *Supervisor) start(ctx context.Context, a *agentRun) error {
	a.set(supervisorproto.StateStarting, "", "")
	err := s.startOnce(ctx, a)
	if err != nil {
		s.markStartFailure(a, err)
		return err
	}
	s.watch(a)
	return nil
}

func (s *Supervisor) markStartFailure(a *agentRun, err error) {
	var be *blockedError
	if errors.As(err, &be) {
		a.set(supervisorproto.StateBlocked, be.reason, be.action)
		a.event("blocked", be.msg, "")
		return
	}
	msg := err.Error()
	if info := fabric.ErrorInfo(err); info != nil {
		msg = info.Code + ": " + info.Message
	}
	a.set(supervisorproto.StateFailed, "start_failed", "fix the agent's config, then run fabric deploy apply")
	a.mu.Lock()
	a.lastExit = msg
	a.mu.Unlock()
	a.event("start_failed", msg, "")
}

// watch runs the agent's watcher: when its host exits on its own, the
// runtime is cleaned up and, as the policy allows, a new runtime (a new
// runtime id) replaces it. A running invocation is never replayed: the
// client that sent it gets its failure.
func (s *Supervisor) watch(a *agentRun) {
	stop, done := a.watching()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(done)
		for {
			a.mu.Lock()
			rt := a.rt
			a.mu.Unlock()
			if rt == nil {
				return
			}
			select {
			case <-stop:
				return
			case <-rt.Exited():
			}
			if s.srv.Stopping() {
				return
			}
			id := rt.ID()
			_, _ = s.srv.StopRuntime(context.Background(), a.spec.Name, id)
			a.mu.Lock()
			a.rt = nil
			a.lastExit = "the runtime's host exited on its own"
			restarts := a.restarts
			a.mu.Unlock()
			a.event("runtime_exited", "the adapter host exited on its own; its in-memory conversation is lost", id)
			s.log.Warn("agent runtime exited", "agent", a.spec.Name, "runtime_id", id)
			if !s.restartLoop(a, stop, restarts) {
				return
			}
		}
	}()
}

// restartLoop restarts the agent as its policy allows; it reports whether
// a runtime is running again.
func (s *Supervisor) restartLoop(a *agentRun, stop <-chan struct{}, restarts int) bool {
	pol := a.spec.Restart
	for {
		if pol.Policy == contract.RestartNever || restarts >= pol.Max {
			why := "restart policy never"
			if pol.Policy != contract.RestartNever {
				why = fmt.Sprintf("restarted %d times, the policy's max", restarts)
			}
			a.set(supervisorproto.StateFailed, "exited", "run fabric deploy apply to start it again ("+why+")")
			a.event("not_restarted", why, "")
			return false
		}
		a.set(supervisorproto.StateRestarting, "", "")
		t := time.NewTimer(backoff(pol, restarts))
		select {
		case <-stop:
			t.Stop()
			return false
		case <-t.C:
		}
		restarts++
		a.mu.Lock()
		a.restarts = restarts
		a.mu.Unlock()
		err := s.startOnce(context.Background(), a)
		if err == nil {
			a.event("restarted", fmt.Sprintf("restart %d of at most %d", restarts, pol.Max), a.runtimeID())
			return true
		}
		s.markStartFailure(a, err)
		var be *blockedError
		if errors.As(err, &be) {
			return false
		}
	}
}

func (a *agentRun) runtimeID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rt == nil {
		return ""
	}
	return a.rt.ID()
}

// backoff is the wait before restart n+1: the initial wait doubled per
// earlier restart, capped.
func backoff(p contract.RestartPolicy, n int) time.Duration {
	initial, limit := 1.0, 30.0
	if len(p.BackoffSeconds) == 2 {
		initial, limit = p.BackoffSeconds[0], p.BackoffSeconds[1]
	}
	d := initial
	for i := 0; i < n && d < limit; i++ {
		d *= 2
	}
	return seconds(min(d, limit))
}

// stopAgent ends the agent's watcher, stops its runtime and revokes its
// placeholder.
func (s *Supervisor) stopAgent(ctx context.Context, a *agentRun) error {
	a.halt()
	err := s.stopRuntime(ctx, a)
	a.set(supervisorproto.StateStopped, "", "")
	return err
}

// stopRuntime stops the agent's runtime (if any) and revokes its
// placeholder; the watcher is the caller's.
func (s *Supervisor) stopRuntime(ctx context.Context, a *agentRun) error {
	a.mu.Lock()
	if a.idle != nil {
		a.idle.Stop()
		a.idle = nil
	}
	rt, route := a.rt, a.placeheld
	a.rt, a.placeheld = nil, ""
	a.mu.Unlock()
	if route != "" {
		s.mu.Lock()
		proxy := s.proxy
		s.mu.Unlock()
		if proxy != nil {
			proxy.Revoke(route, a.spec.Name)
		}
	}
	var err error
	if rt != nil {
		_, err = s.srv.StopRuntime(ctx, a.spec.Name, rt.ID())
		a.event("runtime_stopped", "runtime stopped", rt.ID())
	}
	return err
}

// check runs a bounded ready check of the agent's runtime and keeps it.
func (s *Supervisor) check(ctx context.Context, a *agentRun, timeout time.Duration) *contract.CheckReport {
	a.mu.Lock()
	rt := a.rt
	a.mu.Unlock()
	if rt == nil {
		return nil
	}
	to := min(max(timeout.Seconds(), 0.1), 120)
	rep, err := s.srv.CheckRuntime(ctx, a.spec.Name, rt.ID(), contract.CheckRequest{Level: contract.LevelReady, TimeoutSeconds: to})
	if err != nil {
		return nil
	}
	a.mu.Lock()
	a.health = &rep
	a.mu.Unlock()
	return &rep
}
