package supervisor

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/deploy/desired"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// startConcurrency bounds agents started at once by one reconcile.
const startConcurrency = 8

// reconcile makes the running deployment match st. creds (when not nil)
// replaces the env credentials apply handed over. timeout bounds the
// readiness wait (0: no readiness checks).
func (s *Supervisor) reconcile(ctx context.Context, st *desired.State, creds map[string]string, timeout time.Duration) supervisorproto.ApplyResult {
	deadline := time.Now().Add(timeout)
	res := supervisorproto.ApplyResult{Changes: []supervisorproto.Change{}, Recovery: []string{}}
	s.mu.Lock()
	if creds != nil {
		s.creds = make(map[string]string, len(creds))
		for k, v := range creds {
			s.creds[k] = v
		}
	}
	s.state = st
	s.mu.Unlock()

	// Services first: agents are bound to them at start.
	keep := map[string]bool{}
	for _, svc := range st.Services {
		keep[svc.ID] = true
	}
	for _, id := range s.stopServices(ctx, keep) {
		if id != "model-proxy" {
			res.Changes = append(res.Changes, supervisorproto.Change{Resource: id, Action: supervisorproto.ActionDelete, Reason: "no longer attached by any agent"})
		}
	}
	for _, svc := range st.Services {
		s.mu.Lock()
		cur := s.services[svc.ID]
		s.mu.Unlock()
		action, reason := supervisorproto.ActionCreate, "attached by "+joinNames(svc.Agents)
		if cur != nil {
			if cur.svc.Generation == svc.Generation && cur.healthy() && s.boundStill(cur) {
				res.Changes = append(res.Changes, supervisorproto.Change{Resource: svc.ID, Action: supervisorproto.ActionNoop, Reason: "unchanged and healthy"})
				cur.mu.Lock()
				cur.svc.Agents = svc.Agents
				cur.mu.Unlock()
				continue
			}
			action, reason = supervisorproto.ActionReplace, "its definition changed"
			if cur.svc.Generation == svc.Generation {
				action, reason = supervisorproto.ActionReplace, "it was not running ("+cur.stateNow()+")"
			}
			if svc.Kind == desired.ServiceModelRoute {
				action = supervisorproto.ActionUpdate
			}
			if svc.Kind == desired.ServiceMCPProcess {
				_ = s.stopService(ctx, cur)
			}
		}
		r := &serviceRun{s: s, svc: svc}
		if cur != nil {
			r.carry(&cur.lifecycle)
		}
		s.mu.Lock()
		s.services[svc.ID] = r
		s.mu.Unlock()
		if err := s.startService(ctx, r); err != nil {
			reason += "; failed: " + err.Error()
			r.mu.Lock()
			if r.action != "" {
				res.Recovery = append(res.Recovery, svc.ID+": "+r.action)
			}
			r.mu.Unlock()
		}
		res.Changes = append(res.Changes, supervisorproto.Change{Resource: svc.ID, Action: action, Reason: reason})
	}

	// Agents: removed ones first, then create or replace what changed.
	want := map[string]bool{}
	for _, a := range st.Agents {
		want[a.Name] = true
	}
	s.mu.Lock()
	var gone []*agentRun
	for name, a := range s.agents {
		if !want[name] {
			gone = append(gone, a)
			delete(s.agents, name)
		}
	}
	s.mu.Unlock()
	for _, a := range gone {
		_ = s.stopAgent(ctx, a)
		res.Changes = append(res.Changes, supervisorproto.Change{Resource: "agent/" + a.spec.Name, Action: supervisorproto.ActionDelete, Reason: "no longer declared"})
	}
	s.liftRevocations(st)
	type job struct {
		a      *agentRun
		change supervisorproto.Change
	}
	var jobs []job
	for _, spec := range st.Agents {
		s.mu.Lock()
		cur := s.agents[spec.Name]
		s.mu.Unlock()
		res0 := "agent/" + spec.Name
		if ch, retired := s.keepRetired(ctx, cur, spec); retired {
			res.Changes = append(res.Changes, ch)
			continue
		}
		if cur != nil && cur.spec.Generation == spec.Generation && (cur.running() || cur.stateNow() == supervisorproto.StateOnDemand) {
			res.Changes = append(res.Changes, supervisorproto.Change{Resource: res0, Action: supervisorproto.ActionNoop, Reason: "unchanged and " + cur.stateNow()})
			continue
		}
		ch := supervisorproto.Change{Resource: res0, Action: supervisorproto.ActionCreate, Reason: "declared"}
		if cur != nil {
			if cur.spec.Generation != spec.Generation {
				ch = supervisorproto.Change{Resource: res0, Action: supervisorproto.ActionReplace, Reason: "its config or attachments changed: a new runtime replaces the old one, whose in-memory conversation is lost"}
			} else {
				ch = supervisorproto.Change{Resource: res0, Action: supervisorproto.ActionReplace, Reason: "it was not running (" + cur.stateNow() + ")"}
			}
			_ = s.stopAgent(ctx, cur)
		}
		a := &agentRun{s: s, spec: spec}
		a.state = supervisorproto.StateStarting
		if cur != nil {
			a.carry(&cur.lifecycle)
			if cur.spec.Generation != spec.Generation {
				a.restarts = 0
			}
		}
		s.mu.Lock()
		s.agents[spec.Name] = a
		s.mu.Unlock()
		jobs = append(jobs, job{a, ch})
	}
	sem := make(chan struct{}, startConcurrency)
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if jobs[i].a.spec.Start == contract.StartOnDemand {
				jobs[i].a.set(supervisorproto.StateOnDemand, "", "")
				jobs[i].change.Reason += "; started by its first request (start: on_demand)"
				return
			}
			if err := s.start(ctx, jobs[i].a); err != nil {
				jobs[i].change.Reason += "; failed: " + err.Error()
			}
		}()
	}
	wg.Wait()
	for _, j := range jobs {
		res.Changes = append(res.Changes, j.change)
	}
	s.rebindGateways()

	// Readiness: every agent that runs is checked at the ready level.
	if timeout > 0 {
		s.mu.Lock()
		runs := make([]*agentRun, 0, len(s.agents))
		for _, a := range s.agents {
			runs = append(runs, a)
		}
		s.mu.Unlock()
		var cwg sync.WaitGroup
		for _, a := range runs {
			cwg.Add(1)
			sem <- struct{}{}
			go func() {
				defer cwg.Done()
				defer func() { <-sem }()
				left := time.Until(deadline)
				if left > 10*time.Second {
					left = 10 * time.Second
				}
				s.check(ctx, a, left)
			}()
		}
		cwg.Wait()
	}
	res.Outcome = supervisorproto.OutcomeSucceeded
	s.mu.Lock()
	for _, a := range s.agents {
		a.mu.Lock()
		ok := (a.state == supervisorproto.StateRunning && (a.health == nil || a.health.Outcome != contract.OutcomeFailed)) || a.state == supervisorproto.StateOnDemand
		if !ok {
			res.Outcome = supervisorproto.OutcomeDegraded
			if a.action != "" {
				res.Recovery = append(res.Recovery, "agent/"+a.spec.Name+": "+a.action)
			} else if a.health != nil && a.health.Outcome == contract.OutcomeFailed {
				res.Recovery = append(res.Recovery, fmt.Sprintf("agent/%s: its ready check failed (%s); see fabric deploy status", a.spec.Name, healthOf(a.health).ReasonCode))
			}
		}
		a.mu.Unlock()
	}
	for _, r := range s.services {
		if !r.healthy() {
			res.Outcome = supervisorproto.OutcomeDegraded
		}
	}
	s.mu.Unlock()
	sort.SliceStable(res.Changes, func(i, j int) bool { return res.Changes[i].Resource < res.Changes[j].Resource })
	sort.Strings(res.Recovery)
	res.Recovery = compact(res.Recovery)
	res.Status = s.Status()
	return res
}

// boundStill reports whether a running service still holds what it bound
// (its process is ours and still listens on its port).
func (s *Supervisor) boundStill(r *serviceRun) bool {
	if r.svc.Kind != desired.ServiceMCPProcess {
		return true
	}
	r.mu.Lock()
	p := r.p
	r.mu.Unlock()
	if p == nil {
		return false
	}
	owns, err := p.OwnsListener(uint16(r.svc.MCP.Port))
	return err != nil || owns
}

func joinNames(names []string) string {
	if len(names) == 0 {
		return "no agent"
	}
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}

func compact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
