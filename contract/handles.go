package contract

// EnvironmentHandle is a resolved execution environment.
type EnvironmentHandle struct {
	EnvironmentID   string            `json:"environment_id"`
	Provider        string            `json:"provider"`
	ControlLocation string            `json:"control_location" jsonschema:"enum=external_control,enum=in_env_control"`
	Ownership       string            `json:"ownership" jsonschema:"enum=caller_owned,enum=fabric_owned"`
	Workspace       *string           `json:"workspace,omitempty"`
	Artifacts       *string           `json:"artifacts,omitempty"`
	Env             map[string]string `json:"env,omitempty"`
	Connection      map[string]any    `json:"connection,omitempty"`
	Metadata        map[string]any    `json:"metadata,omitempty"`
}

// RuntimeHandle identifies one started runtime. RuntimeBinding is an opaque
// integrity value that Fabric checks on every call.
type RuntimeHandle struct {
	RuntimeID      string            `json:"runtime_id"`
	RuntimeBinding string            `json:"runtime_binding"`
	AgentName      string            `json:"agent_name"`
	Harness        string            `json:"harness"`
	AdapterKind    string            `json:"adapter_kind"`
	AdapterID      string            `json:"adapter_id,omitempty"`
	Environment    EnvironmentHandle `json:"environment"`
	// Status is a Fabric extension: starting, active, invoking, stopping,
	// stopped or failed at the time the handle was read.
	Status string `json:"status,omitempty"`
	// Interfaces is a Fabric extension: the harness interfaces this runtime
	// runs (dashboards, APIs, terminals), without secret values
	// (interfaces.go).
	Interfaces []InterfaceInfo `json:"interfaces,omitempty"`
	// ServiceID is the service the runtime was started with, if any.
	ServiceID string `json:"service_id,omitempty"`
	// Package is the support-catalog entry the runtime was planned under.
	Package *PackageSelection `json:"package,omitempty"`
	// Tainted is a Fabric extension: a helper operation run against this
	// runtime's state changed what it must not (Taints says which), so
	// the state is no longer the one the runtime started on. It is never
	// cleared while the runtime's home exists.
	Tainted bool           `json:"tainted,omitempty"`
	Taints  []RuntimeTaint `json:"taints,omitempty"`
}

// RuntimeTaint is one helper operation that tainted a runtime.
type RuntimeTaint struct {
	// Package is the package's id@version, Operation the operation's id
	// and Mode its mode.
	Package   string `json:"package"`
	Operation string `json:"operation"`
	Mode      string `json:"mode"`
	// At is when the operation ended (RFC 3339, UTC).
	At          string `json:"at"`
	Enforcement string `json:"enforcement"`
	// Violations are the changes outside the declared writes ("modified
	// /path"), at most 20, Truncated when there were more.
	Violations []string `json:"violations,omitempty"`
	Truncated  bool     `json:"truncated,omitempty"`
}

// InvocationHandle identifies one invocation.
type InvocationHandle struct {
	InvocationID string `json:"invocation_id"`
	RequestID    string `json:"request_id"`
	RuntimeID    string `json:"runtime_id"`
}

// ServiceHandle identifies a long-lived adapter service.
type ServiceHandle struct {
	ServiceID      string         `json:"service_id"`
	ServiceBinding string         `json:"service_binding"`
	AdapterID      string         `json:"adapter_id"`
	ServiceType    string         `json:"service_type"`
	Ownership      string         `json:"ownership" jsonschema:"enum=caller_owned,enum=fabric_owned"`
	Connection     map[string]any `json:"connection,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
	// Status is a Fabric extension: active, releasing, released or failed
	// at the time the handle was read.
	Status string `json:"status,omitempty" jsonschema:"enum=active,enum=releasing,enum=released,enum=failed"`
}

// Service statuses (ownership is OwnershipFabric or OwnershipCaller).
const (
	ServiceActive    = "active"
	ServiceReleasing = "releasing"
	ServiceReleased  = "released"
	ServiceFailed    = "failed"
)

// ServiceReference is the input for attaching to an existing service.
// Connection carries non-secret fields and credential references only.
type ServiceReference struct {
	AdapterID   string         `json:"adapter_id" jsonschema:"minLength=1"`
	ServiceType string         `json:"service_type" jsonschema:"minLength=1"`
	Connection  map[string]any `json:"connection,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// RuntimeStopResult is the answer to a stop.
type RuntimeStopResult struct {
	RuntimeID      string        `json:"runtime_id"`
	Status         string        `json:"status" jsonschema:"enum=stopped,enum=already_stopped,enum=failed"`
	AlreadyStopped bool          `json:"already_stopped,omitempty"`
	HostCrashed    bool          `json:"host_crashed,omitempty"`
	Error          *ErrorInfo    `json:"error,omitempty"`
	Events         []FabricEvent `json:"events,omitempty"`
}
