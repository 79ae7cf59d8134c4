package contract

// CheckSchemaVersion is the version of CheckRequest and CheckReport.
const CheckSchemaVersion = "fabric.check/v1alpha1"

// Check scopes, levels, outcomes and activities.
const (
	ScopeServer  = "server"
	ScopeRuntime = "runtime"
	ScopeService = "service"

	LevelLive   = "live"
	LevelActive = "active"
	LevelReady  = "ready"

	OutcomePassed      = "passed"
	OutcomeFailed      = "failed"
	OutcomeUnknown     = "unknown"
	OutcomeUnsupported = "unsupported"

	ActivityIdle     = "idle"
	ActivityBusy     = "busy"
	ActivityStopping = "stopping"
	ActivityStopped  = "stopped"
	ActivityUnknown  = "unknown"
)

// Check reasons.
const (
	ReasonServerStopping         = "server_stopping"
	ReasonCapabilitiesUnverified = "capabilities_unverified"
	ReasonRuntimeUnavailable     = "runtime_unavailable"
	ReasonServiceUnavailable     = "service_unavailable"
	ReasonAgentExited            = "agent_exited"
	ReasonSessionClosed          = "session_closed"
	ReasonEndpointUnavailable    = "endpoint_unavailable"
	ReasonHealthFailed           = "health_failed"
	ReasonProbeTimeout           = "probe_timeout"
	ReasonProbeError             = "probe_error"
	ReasonObservationChanged     = "observation_changed"
	ReasonUnsupportedAdapter     = "unsupported_adapter"
	ReasonUnsupportedLevel       = "unsupported_level"
	ReasonUnsupportedScope       = "unsupported_scope"
)

// CheckRequest asks for a bounded health check of one scope.
type CheckRequest struct {
	SchemaVersion  string  `json:"schema_version"`
	Scope          string  `json:"scope" jsonschema:"enum=server,enum=runtime,enum=service"`
	TimeoutSeconds float64 `json:"timeout_seconds" jsonschema:"exclusiveMinimum=0"`
	RuntimeID      string  `json:"runtime_id,omitempty"`
	ServiceID      string  `json:"service_id,omitempty"`
	Level          string  `json:"level,omitempty" jsonschema:"enum=live,enum=active,enum=ready"`
	// Interface (runtime scope only, a Fabric extension) checks one of the
	// runtime's harness interfaces instead of the runtime itself; its
	// outcome never decides the runtime's own check.
	Interface string `json:"interface,omitempty"`
}

// CheckReport is the answer to a CheckRequest.
type CheckReport struct {
	SchemaVersion    string              `json:"schema_version"`
	Scope            string              `json:"scope" jsonschema:"enum=server,enum=runtime,enum=service"`
	RuntimeID        *string             `json:"runtime_id"`
	ServiceID        *string             `json:"service_id,omitempty"`
	RequestedLevel   *string             `json:"requested_level,omitempty"`
	Interface        *string             `json:"interface,omitempty"`
	Outcome          string              `json:"outcome" jsonschema:"enum=passed,enum=failed,enum=unknown,enum=unsupported"`
	ReasonCode       *string             `json:"reason_code,omitempty"`
	Observations     []CheckObservation  `json:"observations"`
	Runtime          *RuntimeObservation `json:"runtime,omitempty"`
	Server           *ServerObservation  `json:"server,omitempty"`
	StartedAtMillis  int64               `json:"started_at_millis"`
	FinishedAtMillis int64               `json:"finished_at_millis"`
	ElapsedMillis    int64               `json:"elapsed_millis"`
	Metadata         map[string]any      `json:"metadata,omitempty"`
}

// CheckObservation is one attempted stage of a check, in evaluation order.
type CheckObservation struct {
	Stage            string         `json:"stage"`
	Level            string         `json:"level,omitempty"`
	Outcome          string         `json:"outcome" jsonschema:"enum=passed,enum=failed,enum=unknown,enum=unsupported"`
	ReasonCode       *string        `json:"reason_code,omitempty"`
	Source           string         `json:"source"`
	ObservedAtMillis int64          `json:"observed_at_millis,omitempty"`
	Message          string         `json:"message,omitempty"`
	Metadata         map[string]any `json:"metadata,omitempty"`
}

// RuntimeObservation is the runtime's state and activity when checked.
type RuntimeObservation struct {
	State    string `json:"state"`
	Activity string `json:"activity" jsonschema:"enum=idle,enum=busy,enum=stopping,enum=stopped,enum=unknown"`
}

// ServerObservation is the control server's state when checked.
type ServerObservation struct {
	State string `json:"state"`
}
