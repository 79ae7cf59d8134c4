package supervisor

import (
	"os"
	"sort"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/modelproxy"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

func healthOf(h *contract.CheckReport) *supervisorproto.HealthStatus {
	out := &supervisorproto.HealthStatus{Outcome: h.Outcome, Stages: []string{}}
	if h.RequestedLevel != nil {
		out.Level = *h.RequestedLevel
	}
	if h.ReasonCode != nil {
		out.ReasonCode = *h.ReasonCode
	}
	for _, o := range h.Observations {
		out.Stages = append(out.Stages, o.Stage+": "+o.Outcome)
	}
	return out
}

// Status reports the supervisor and every resource it owns.
func (s *Supervisor) Status() supervisorproto.Status {
	st := supervisorproto.Status{SchemaVersion: supervisorproto.StatusSchemaVersion, Agents: []supervisorproto.AgentStatus{}, Services: []supervisorproto.ServiceStatus{}, Lost: []string{}}
	state := "serving"
	if s.srv.Stopping() {
		state = "stopping"
	}
	s.mu.Lock()
	st.Supervisor = supervisorproto.SupervisorStatus{Pid: os.Getpid(), Socket: s.srv.Socket(), StartedAtMillis: s.started.UnixMilli(), State: state, Console: s.console[0], ConsoleTokenFile: s.console[1]}
	if s.proxy != nil {
		st.Supervisor.ModelProxy = s.proxy.URL()
	}
	if s.state != nil {
		st.Deployment = &supervisorproto.DeploymentStatus{Name: s.state.Name, UID: s.state.UID, Digest: s.state.Digest}
	}
	st.Lost = append(st.Lost, s.restored...)
	var usage map[string]map[string]modelproxy.Usage
	if s.proxy != nil {
		usage = s.proxy.Usage()
	}
	agents := make([]*agentRun, 0, len(s.agents))
	for _, a := range s.agents {
		agents = append(agents, a)
	}
	services := make([]*serviceRun, 0, len(s.services))
	for _, r := range s.services {
		services = append(services, r)
	}
	s.mu.Unlock()
	for _, a := range agents {
		a.mu.Lock()
		as := supervisorproto.AgentStatus{Name: a.spec.Name, Sandbox: a.spec.Sandbox, State: a.state, Reason: a.reason, Action: a.action,
			Generation: a.spec.Generation, Restarts: a.restarts, LastExit: a.lastExit,
			Attachments: append([]string{}, a.spec.Attachments...), Events: append([]supervisorproto.Event{}, a.events...),
			Turns: append([]supervisorproto.Turn{}, a.recent...)}
		if a.rt != nil {
			as.RuntimeID, as.HostPid = a.rt.ID(), a.rt.HostPid()
			as.Interfaces = a.rt.Handle().Interfaces
			as.Package = a.rt.Handle().Package
		}
		if a.ret != nil {
			r := *a.ret.rec
			as.Revocation = &r
			if as.Package == nil {
				as.Package = r.Package
			}
		}
		if h := a.health; h != nil {
			as.Health = healthOf(h)
		}
		a.mu.Unlock()
		if as.RuntimeID != "" {
			as.Invocations = s.srv.Invocations(as.Name, as.RuntimeID)
		}
		for route, per := range usage {
			if u, ok := per[as.Name]; ok {
				if as.Usage == nil {
					as.Usage = map[string]modelproxy.Usage{}
				}
				as.Usage[route] = u
			}
		}
		st.Agents = append(st.Agents, as)
	}
	for _, r := range services {
		r.mu.Lock()
		ss := supervisorproto.ServiceStatus{ID: r.svc.ID, Name: r.svc.Name, Kind: r.svc.Kind, State: r.state, Reason: r.reason, Action: r.action,
			Restarts: r.restarts, LastExit: r.lastExit, Agents: append([]string{}, r.svc.Agents...), Generation: r.svc.Generation,
			Events: append([]supervisorproto.Event{}, r.events...)}
		if r.p != nil {
			ss.Pid = r.p.Pid()
		}
		gw := r.gateway
		r.mu.Unlock()
		if gw != nil {
			as := gw.gw.Status()
			ss.Access = &as
		}
		ss.URL = r.url()
		st.Services = append(st.Services, ss)
	}
	sort.Slice(st.Agents, func(i, j int) bool { return st.Agents[i].Name < st.Agents[j].Name })
	sort.Slice(st.Services, func(i, j int) bool { return st.Services[i].ID < st.Services[j].ID })
	return st
}
