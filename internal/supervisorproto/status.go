package supervisorproto

import (
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/modelproxy"
)

// Agent states as status reports them.
const (
	StateStarting   = "starting"
	StateRunning    = "running"
	StateRestarting = "restarting"
	StateFailed     = "failed"  // exited and not restarted (policy never, or max reached), or a start failed
	StateBlocked    = "blocked" // cannot start until an operator acts (Reason, Action say what)
	StateStopped    = "stopped"
	// StateOnDemand: a start: on_demand agent with no runtime; the next
	// access gateway request starts one.
	StateOnDemand = "on_demand"
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
	Access *AccessStatus `json:"access,omitempty"`
}

// Event is one lifecycle event of a resource.
type Event struct {
	AtMillis  int64  `json:"at_millis"`
	Kind      string `json:"kind"`
	Message   string `json:"message"`
	RuntimeID string `json:"runtime_id,omitempty"`
}

// Turn is one turn an agent ran (through fabric-agent-ctl invoke or an
// access gateway), newest last in AgentStatus.Turns.
type Turn struct {
	RuntimeID    string `json:"runtime_id"`
	InvocationID string `json:"invocation_id"`
	RequestID    string `json:"request_id"`
	Status       string `json:"status"`
	// ErrorCode is the failed or cancelled turn's error code.
	ErrorCode       string   `json:"error_code,omitempty"`
	StartedAtMillis int64    `json:"started_at_millis"`
	DurationMillis  int64    `json:"duration_millis"`
	InputTokens     *uint64  `json:"input_tokens,omitempty"`
	OutputTokens    *uint64  `json:"output_tokens,omitempty"`
	CostUSD         *float64 `json:"cost_usd,omitempty"`
}
