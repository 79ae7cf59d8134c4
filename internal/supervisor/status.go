package supervisor

import (
	"os"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/access"
	"sort"

	"github.com/fabric-runtime/fabric/internal/modelproxy"
)

// StatusSchemaVersion versions the status document.
const StatusSchemaVersion = "fabric.deploy.status/v1alpha1"

// Status is the supervisor's view of its deployment. It never holds a
// credential value.
type Status struct {
	SchemaVersion string            `json:"schema_version"`
	Supervisor    SupervisorStatus  `json:"supervisor"`
	Deployment    *DeploymentStatus `json:"deployment"`
	Agents        []AgentStatus     `json:"agents"`
	Services      []ServiceStatus   `json:"services"`
	// Lost says what a restart of the supervisor could not bring back.
	Lost []string `json:"lost"`
}

// SupervisorStatus is the supervisor process.
type SupervisorStatus struct {
	Pid             int    `json:"pid"`
	Socket          string `json:"socket"`
	StartedAtMillis int64  `json:"started_at_millis"`
	State           string `json:"state"`
	// ModelProxy is the brokered model proxy's URL when it runs.
	ModelProxy string `json:"model_proxy,omitempty"`
	// Console is the console's URL; ConsoleTokenFile the owner-only file
	// that holds its sign-in token (the token is never in status).
	Console          string `json:"console,omitempty"`
	ConsoleTokenFile string `json:"console_token_file,omitempty"`
}

// DeploymentStatus identifies the deployment being served.
type DeploymentStatus struct {
	Name   string `json:"name"`
	UID    string `json:"uid"`
	Digest string `json:"digest"`
}

// AgentStatus is one deployed agent.
type AgentStatus struct {
	Name        string   `json:"name"`
	Sandbox     string   `json:"sandbox"`
	State       string   `json:"state"`
	Reason      string   `json:"reason,omitempty"`
	Action      string   `json:"action,omitempty"`
	RuntimeID   string   `json:"runtime_id,omitempty"`
	HostPid     int      `json:"host_pid,omitempty"`
	Generation  string   `json:"generation"`
	Restarts    int      `json:"restarts"`
	Invocations int64    `json:"invocations"`
	LastExit    string   `json:"last_exit,omitempty"`
	Attachments []string `json:"attachments"`
	// Health is the last ready check: its outcome and reason.
	Health *HealthStatus `json:"health,omitempty"`
	// Usage is the agent's brokered model usage, per route.
	Usage  map[string]modelproxy.Usage `json:"usage,omitempty"`
	Events []Event                     `json:"events"`
	// Turns are the agent's last turns, newest last.
	Turns []Turn `json:"turns"`
	// Interfaces are the runtime's harness interfaces (from its handle,
	// without secret values).
	Interfaces []contract.InterfaceInfo `json:"interfaces,omitempty"`
	// Package is the support-catalog entry the running runtime was
	// planned under (harness.package), for `fabric packages audit`.
	Package *contract.PackageSelection `json:"package,omitempty"`
	// Revocation is the catalog revocation that drains or stopped the
	// agent (fabric packages audit --apply); Package is then the
	// selection its retired runtime ran under.
	Revocation *Revocation `json:"revocation,omitempty"`
}

// HealthStatus summarizes a check report.
type HealthStatus struct {
	Level      string `json:"level"`
	Outcome    string `json:"outcome"`
	ReasonCode string `json:"reason_code,omitempty"`
	// Stages are the check's observations: stage and outcome, in order.
	Stages []string `json:"stages"`
}

func healthOf(h *contract.CheckReport) *HealthStatus {
	out := &HealthStatus{Outcome: h.Outcome, Stages: []string{}}
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

// ServiceStatus is one integration service.
type ServiceStatus struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	State    string   `json:"state"`
	Reason   string   `json:"reason,omitempty"`
	Action   string   `json:"action,omitempty"`
	Pid      int      `json:"pid,omitempty"`
	URL      string   `json:"url,omitempty"`
	Restarts int      `json:"restarts"`
	LastExit string   `json:"last_exit,omitempty"`
	Agents   []string `json:"agents"`
	// Generation is the definition's digest.
	Generation string  `json:"generation"`
	Events     []Event `json:"events"`
	// Access is an access gateway's own status: grants (never a
	// secret), live turns, store health.
	Access *access.Status `json:"access,omitempty"`
}

// Status reports the supervisor and every resource it owns.
func (s *Supervisor) Status() Status {
	st := Status{SchemaVersion: StatusSchemaVersion, Agents: []AgentStatus{}, Services: []ServiceStatus{}, Lost: []string{}}
	state := "serving"
	if s.srv.Stopping() {
		state = "stopping"
	}
	s.mu.Lock()
	st.Supervisor = SupervisorStatus{Pid: os.Getpid(), Socket: s.srv.Socket(), StartedAtMillis: s.started.UnixMilli(), State: state, Console: s.console[0], ConsoleTokenFile: s.console[1]}
	if s.proxy != nil {
		st.Supervisor.ModelProxy = s.proxy.URL()
	}
	if s.state != nil {
		st.Deployment = &DeploymentStatus{Name: s.state.Name, UID: s.state.UID, Digest: s.state.Digest}
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
		as := AgentStatus{Name: a.spec.Name, Sandbox: a.spec.Sandbox, State: a.state, Reason: a.reason, Action: a.action,
			Generation: a.spec.Generation, Restarts: a.restarts, LastExit: a.lastExit,
			Attachments: append([]string{}, a.spec.Attachments...), Events: append([]Event{}, a.events...),
			Turns: append([]Turn{}, a.recent...)}
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
		ss := ServiceStatus{ID: r.svc.ID, Name: r.svc.Name, Kind: r.svc.Kind, State: r.state, Reason: r.reason, Action: r.action,
			Restarts: r.restarts, LastExit: r.lastExit, Agents: append([]string{}, r.svc.Agents...), Generation: r.svc.Generation,
			Events: append([]Event{}, r.events...)}
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
