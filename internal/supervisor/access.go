package supervisor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/renameio"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/access"
	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/deploy/desired"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// defaultKeyTTL is a key's life when grant names none.
const defaultKeyTTL = 30 * 24 * time.Hour

// gatewayRun is the running part of an access gateway service.
type gatewayRun struct {
	gw   *access.Gateway
	stop context.CancelFunc
	done chan error
}

// bindings are what a gateway serves: each attached agent with its
// generation and the definition's policies.
func (s *Supervisor) bindings(svc desired.Service) []access.Binding {
	a := svc.Access
	s.mu.Lock()
	st := s.state
	s.mu.Unlock()
	idem := a.Idempotency
	if idem == "" {
		// The official SDKs never send Idempotency-Key: optional is what
		// works with them out of the box (their retries are still matched).
		idem = contract.AccessIdempotencyOptional
	}
	var out []access.Binding
	for _, name := range svc.Agents {
		gen := ""
		if st != nil {
			if ag := st.Agent(name); ag != nil {
				gen = ag.Generation
			}
		}
		out = append(out, access.Binding{Agent: name, Generation: gen, Idempotency: idem,
			OnDisconnect: a.OnDisconnect, OnRevoke: a.OnRevoke, RetentionSeconds: a.RetentionSeconds})
	}
	return out
}

func (s *Supervisor) startGateway(ctx context.Context, r *serviceRun) error {
	a := r.svc.Access
	store := filepath.Join(s.opts.StateDir, "access", safeName(r.svc.ID))
	if err := os.MkdirAll(store, 0o700); err != nil {
		return err
	}
	listen := a.Listen
	if listen == "" {
		listen = contract.DefaultAccessListen
	}
	// A declared port 0 is chosen once and kept: clients reconnect to the
	// same address after the supervisor (and so the gateway) restarts.
	addrFile := filepath.Join(store, "listen.addr")
	declared := listen
	if _, port, err := net.SplitHostPort(listen); err == nil && port == "0" {
		if b, err := os.ReadFile(addrFile); err == nil {
			listen = strings.TrimSpace(string(b))
		}
	}
	opts := access.Options{Name: r.svc.Name, Listen: listen, StoreDir: store, Clients: a.Clients,
		Bindings: s.bindings(r.svc), Dispatcher: s, Logger: s.log.With("component", "access", "integration", r.svc.ID)}
	if a.TLS != nil {
		opts.TLSCert, opts.TLSKey = resolve(r.svc.BaseDir, a.TLS.Cert), resolve(r.svc.BaseDir, a.TLS.Key)
	}
	gw, err := access.New(ctx, opts)
	if err != nil && opts.Listen != declared {
		// The kept port is taken now: take a new one (status shows it).
		opts.Listen = declared
		gw, err = access.New(ctx, opts)
	}
	if err != nil {
		r.set(supervisorproto.StateFailed, "start_failed", "see the supervisor log, then run fabric deploy apply")
		r.event("start_failed", err.Error(), "")
		return err
	}
	if u, err := url.Parse(gw.URL()); err == nil {
		_ = renameio.WriteFile(addrFile, []byte(u.Host+"\n"))
	}
	gctx, stop := context.WithCancel(context.Background())
	run := &gatewayRun{gw: gw, stop: stop, done: make(chan error, 1)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		run.done <- gw.Serve(gctx)
	}()
	r.mu.Lock()
	r.gateway = run
	r.state, r.reason, r.action = supervisorproto.StateRunning, "", ""
	r.mu.Unlock()
	r.event("started", "serving at "+gw.URL(), "")
	return nil
}

func resolve(base, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(base, p)
}

func (s *Supervisor) stopGateway(ctx context.Context, r *serviceRun) error {
	r.mu.Lock()
	run := r.gateway
	r.gateway = nil
	r.mu.Unlock()
	if run == nil {
		return nil
	}
	run.stop()
	err := <-run.done
	if cerr := run.gw.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// rebindGateways gives every gateway its current agents and their
// generations (after agents were reconciled).
func (s *Supervisor) rebindGateways() {
	s.mu.Lock()
	var runs []*serviceRun
	for _, r := range s.services {
		if r.svc.Kind == desired.ServiceAccessGateway {
			runs = append(runs, r)
		}
	}
	s.mu.Unlock()
	for _, r := range runs {
		r.mu.Lock()
		run, svc := r.gateway, r.svc
		r.mu.Unlock()
		if run != nil {
			if err := run.gw.SetBindings(s.bindings(svc)); err != nil {
				s.log.Error("cannot re-bind the access gateway", "integration", svc.ID, "error", err)
			}
			run.gw.SetClients(svc.Access.Clients)
		}
	}
}

func (s *Supervisor) gatewayOf(id string) (*access.Gateway, *agentctl.Error) {
	s.mu.Lock()
	r := s.services[id]
	s.mu.Unlock()
	if r == nil || r.svc.Kind != desired.ServiceAccessGateway {
		return nil, &agentctl.Error{Code: supervisorproto.CodeNoSuchIntegration, Field: "payload.integration", Message: fmt.Sprintf("the deployment has no access gateway %q attached to any agent", id)}
	}
	r.mu.Lock()
	run := r.gateway
	r.mu.Unlock()
	if run == nil {
		return nil, &agentctl.Error{Code: supervisorproto.CodeNoSuchIntegration, Field: "payload.integration", Message: fmt.Sprintf("access gateway %s is not running (%s)", id, r.stateNow())}
	}
	return run.gw, nil
}

// accessOp answers an access request.
func (s *Supervisor) accessOp(_ context.Context, req *agentctl.Request) (any, *agentctl.Error) {
	var p supervisorproto.AccessPayload
	if err := decodeStrict(req.Payload, &p); err != nil {
		return nil, &agentctl.Error{Code: agentctl.CodeInvalidRequest, Field: "payload", Message: "payload: " + err.Error()}
	}
	gw, aerr := s.gatewayOf(p.Integration)
	if aerr != nil {
		return nil, aerr
	}
	ttl := defaultKeyTTL
	if p.TTLSeconds > 0 {
		ttl = seconds(p.TTLSeconds)
	}
	fail := func(err error) *agentctl.Error {
		return &agentctl.Error{Code: "access_failed", Message: err.Error()}
	}
	switch p.Op {
	case supervisorproto.AccessGrant:
		k, err := gw.Grant(p.Client, p.Agent, ttl)
		if err != nil {
			return nil, fail(err)
		}
		return k, nil
	case supervisorproto.AccessList:
		return gw.List(), nil
	case supervisorproto.AccessRevoke:
		if err := gw.Revoke(p.KeyID); err != nil {
			return nil, fail(err)
		}
		return map[string]string{"key_id": p.KeyID, "status": "revoked"}, nil
	case supervisorproto.AccessRotate:
		k, err := gw.Rotate(p.KeyID, ttl)
		if err != nil {
			return nil, fail(err)
		}
		return k, nil
	case supervisorproto.AccessReconcile:
		if err := gw.Reconcile(p.ResponseID, p.Outcome, p.Evidence); err != nil {
			return nil, fail(err)
		}
		return map[string]string{"response_id": p.ResponseID, "outcome": p.Outcome}, nil
	}
	return nil, &agentctl.Error{Code: agentctl.CodeInvalidRequest, Field: "payload.op", Message: "payload.op: must be grant, list, revoke, rotate or reconcile"}
}

// turnRecords is the supervisor's own record of turns it ran for the
// gateways, by request id: what a gateway that lost its acknowledgement
// (it crashed between admission and the answer) adopts, instead of ever
// sending a turn again. It lives in the supervisor's memory: a supervisor
// restart loses it, and such turns stay outcome_unknown.
type turnRecords struct {
	mu    sync.Mutex
	turns map[string]*turnRecord // agent + "\x00" + request id
	order []string
}

type turnRecord struct {
	running bool
	res     *contract.RunResult
}

const maxTurnRecords = 4096

func (t *turnRecords) begin(agent, id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.turns == nil {
		t.turns = map[string]*turnRecord{}
	}
	k := agent + "\x00" + id
	t.turns[k] = &turnRecord{running: true}
	t.order = append(t.order, k)
	for len(t.order) > maxTurnRecords {
		delete(t.turns, t.order[0])
		t.order = t.order[1:]
	}
}

func (t *turnRecords) end(agent, id string, res *contract.RunResult) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.turns[agent+"\x00"+id]; r != nil {
		r.running, r.res = false, res
	}
}

func (t *turnRecords) get(agent, id string) (*turnRecord, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.turns[agent+"\x00"+id]
	if !ok {
		return nil, false
	}
	c := *r
	return &c, true
}

// Invoke runs one turn for a gateway (access.Dispatcher).
func (s *Supervisor) Invoke(ctx context.Context, agent string, req contract.RunRequest, events func(contract.FabricEvent)) (*contract.RunResult, error) {
	s.mu.Lock()
	a := s.agents[agent]
	s.mu.Unlock()
	if a == nil {
		return nil, access.ErrUnavailable
	}
	rt, err := s.runtimeFor(ctx, a)
	if err != nil {
		return nil, err
	}
	defer s.turnEnded(a)
	if req.RequestID != "" {
		s.turns.begin(agent, req.RequestID)
	}
	res, err := s.srv.InvokeRuntime(ctx, agent, rt.ID(), req, events)
	if err != nil {
		var ae *agentctl.Error
		if info := fabric.ErrorInfo(err); (info != nil && info.Code == agentctl.CodeRuntimeBusy) || (errors.As(err, &ae) && ae.Code == agentctl.CodeRuntimeBusy) {
			err = errors.Join(access.ErrBusy, err)
		}
		if req.RequestID != "" {
			s.turns.end(agent, req.RequestID, nil)
		}
		return nil, err
	}
	if req.RequestID != "" {
		s.turns.end(agent, req.RequestID, res)
	}
	return res, nil
}

// Agent reports a deployed agent for a gateway (access.Dispatcher).
func (s *Supervisor) Agent(_ context.Context, agent string) (access.AgentInfo, error) {
	s.mu.Lock()
	a := s.agents[agent]
	s.mu.Unlock()
	if a == nil {
		return access.AgentInfo{}, access.ErrUnavailable
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	info := access.AgentInfo{Generation: a.spec.Generation, Epoch: fmt.Sprintf("%s#%d", a.spec.Generation, a.starts)}
	if a.rt != nil {
		info.RuntimeID = a.rt.ID()
		info.Health = contract.OutcomeUnknown
		if a.health != nil {
			info.Health = a.health.Outcome
		}
	} else if a.spec.Start == contract.StartOnDemand && a.state != supervisorproto.StateBlocked {
		info.OnDemand = true
		info.Epoch = fmt.Sprintf("%s#%d", a.spec.Generation, a.starts+1)
	}
	return info, nil
}

// Lookup returns the supervisor's record of a turn (access.Dispatcher).
func (s *Supervisor) Lookup(_ context.Context, agent, requestID string) (*contract.RunResult, bool, bool, error) {
	r, ok := s.turns.get(agent, requestID)
	if !ok {
		return nil, false, false, nil
	}
	if r.res == nil && !r.running {
		// It ended without a result: its outcome is not known here either.
		return nil, false, false, nil
	}
	return r.res, r.running, true, nil
}

// onDemandStart bounds the start of an on_demand agent for a request (the
// lease the queued request holds).
const onDemandStart = 2 * time.Minute

// runtimeFor returns the agent's runtime for a turn, starting it when the
// agent is start: on_demand and has none (one start however many requests
// arrive at once), and counts the turn in flight.
func (s *Supervisor) runtimeFor(ctx context.Context, a *agentRun) (*fabric.Runtime, error) {
	a.startMu.Lock()
	defer a.startMu.Unlock()
	a.mu.Lock()
	rt, state := a.rt, a.state
	if a.ret != nil {
		refusal := a.refusalLocked()
		a.mu.Unlock()
		return nil, refusal
	}
	a.mu.Unlock()
	if rt == nil && a.spec.Start == contract.StartOnDemand && (state == supervisorproto.StateOnDemand || state == supervisorproto.StateFailed || state == supervisorproto.StateStopped) {
		sctx, cancel := context.WithTimeout(ctx, onDemandStart)
		err := s.start(sctx, a)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", access.ErrStartFailed, err)
		}
		a.event("started_on_demand", "started for a request", a.runtimeID())
		a.mu.Lock()
		rt = a.rt
		a.mu.Unlock()
	}
	if rt == nil {
		return nil, access.ErrUnavailable
	}
	a.mu.Lock()
	a.turns++
	if a.idle != nil {
		a.idle.Stop()
		a.idle = nil
	}
	a.mu.Unlock()
	return rt, nil
}

// turnEnded arms an on_demand agent's idle stop once no turn is left.
func (s *Supervisor) turnEnded(a *agentRun) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.turns--
	if a.turns > 0 || a.spec.IdleStopSeconds <= 0 || a.rt == nil {
		return
	}
	a.idle = time.AfterFunc(time.Duration(a.spec.IdleStopSeconds)*time.Second, func() { s.idleStop(a) })
}

// idleStop stops an on_demand agent that had no turn for its idle time;
// the next request starts a new runtime (its in-memory conversation is
// lost, as the document says).
func (s *Supervisor) idleStop(a *agentRun) {
	a.startMu.Lock()
	defer a.startMu.Unlock()
	a.mu.Lock()
	busy, rt := a.turns > 0 || a.ret != nil, a.rt
	a.idle = nil
	a.mu.Unlock()
	if busy || rt == nil || s.srv.Stopping() {
		return
	}
	a.halt()
	a.mu.Lock()
	a.rt = nil
	a.mu.Unlock()
	_, _ = s.srv.StopRuntime(context.Background(), a.spec.Name, rt.ID())
	a.set(supervisorproto.StateOnDemand, "", "")
	a.event("idle_stopped", fmt.Sprintf("no turn for %d s", a.spec.IdleStopSeconds), rt.ID())
}
