package hostproto

import (
	"encoding/json"

	"github.com/fabric-runtime/fabric/contract"
)

// Operations (v1) and methods (v2).
const (
	OpStart  = "start"
	OpInvoke = "invoke"
	OpStop   = "stop"
	// v2 only.
	MethodCancel = "cancel"
	MethodHealth = "health"
	// NotifyEvent is the v2 host-to-core notification carrying one event.
	NotifyEvent = "event"
	// NotifyEvents carries several events of one invocation, in order
	// (hosts batch what accumulated while the previous frame was written).
	NotifyEvents = "events"
)

// Environment variables given to every host process.
const (
	EnvRuntimeID = "FABRIC_RUNTIME_ID"
	EnvHome      = "FABRIC_HOME"
	EnvArtifacts = "FABRIC_ARTIFACTS"
	// EnvProtocol tells a Go host which protocol to speak (v1 or v2).
	EnvProtocol = "FABRIC_HOST_PROTOCOL"
	// EnvChannelFD is the file descriptor of the v2 channel (always 3).
	EnvChannelFD = "FABRIC_HOST_CHANNEL_FD"
	// EnvBundledAdapter names the bundled Go adapter a host binary serves
	// (the core sets it from the descriptor's runner.builtin).
	EnvBundledAdapter = "FABRIC_BUNDLED_ADAPTER"
	// EnvGoMaxProcs=1 says the core set GOMAXPROCS=1 for a bundled Go
	// host's own runtime (internal/host); the host unsets both before it
	// starts anything (adapterkit.Serve), so its children see the
	// environment the core was given.
	EnvGoMaxProcs = "FABRIC_HOST_GOMAXPROCS"
)

// ChannelFD is the descriptor number of the v2 channel in the host.
const ChannelFD = 3

// StartParams is the start payload (v1) and the start params (v2).
type StartParams struct {
	AgentName      string                   `json:"agent_name"`
	BaseDir        string                   `json:"base_dir"`
	Config         contract.AgentConfig     `json:"config"`
	RuntimeContext contract.RuntimeContext  `json:"runtime_context"`
	CapabilityPlan *contract.CapabilityPlan `json:"capability_plan,omitempty"`
	TelemetryPlan  *contract.TelemetryPlan  `json:"telemetry_plan,omitempty"`
	// Service is the service the runtime is bound to (v2 only, a Fabric
	// extension; absent for runtimes started without one).
	Service *ServiceBinding `json:"service,omitempty"`
}

// StartResult is what a v2 host answers to start (v1 hosts answer null or
// an object with the same fields).
type StartResult struct {
	HealthControl json.RawMessage `json:"health_control,omitempty"`
	Metadata      map[string]any  `json:"metadata,omitempty"`
	// Interfaces are the harness interfaces the session runs (never a
	// credential; see adapterkit/harnessui).
	Interfaces []contract.InterfaceInfo `json:"interfaces,omitempty"`
}

// AppendJSON encodes r as encoding/json does with HTML escaping off (the
// wire.Conn encoding). What nearly every start answers, nothing, is {}
// without reflection: encoding/json would build its encoders for the
// result's types, code and heap an idle host keeps for nothing.
func (r *StartResult) AppendJSON(dst []byte) ([]byte, error) {
	if len(r.HealthControl) == 0 && len(r.Metadata) == 0 && len(r.Interfaces) == 0 {
		return append(dst, "{}"...), nil
	}
	return appendJSONNoEscape(dst, r)
}

// InvokeParams is the invoke payload.
type InvokeParams struct {
	RuntimeContext contract.RuntimeContext  `json:"runtime_context"`
	Request        contract.AgentRunRequest `json:"request"`
}

// StopParams is the stop payload.
type StopParams struct {
	RuntimeID string `json:"runtime_id"`
}

// CancelParams asks a v2 host to cancel a running invocation.
type CancelParams struct {
	InvocationID string `json:"invocation_id"`
}

// CancelResult says whether a running invocation was found.
type CancelResult struct {
	Cancelled bool `json:"cancelled"`
}

// HealthParams asks a v2 host for evidence at one level, of the runtime
// or, with Interface, of one of its harness interfaces.
type HealthParams struct {
	Level         string `json:"level"`
	TimeoutMillis int64  `json:"timeout_millis"`
	Interface     string `json:"interface,omitempty"`
}

// HealthResult is a v2 host's answer to health.
type HealthResult struct {
	Outcome          string         `json:"outcome"`
	ReasonCode       string         `json:"reason_code,omitempty"`
	Activity         string         `json:"activity,omitempty"`
	Source           string         `json:"source,omitempty"`
	Message          string         `json:"message,omitempty"`
	ObservedAtMillis int64          `json:"observed_at_millis,omitempty"`
	Metadata         map[string]any `json:"metadata,omitempty"`
}

// EventParams is one v2 event notification.
type EventParams struct {
	InvocationID string    `json:"invocation_id"`
	Event        HostEvent `json:"event"`
}

// EventsParams is one v2 events notification: a batch, in order.
type EventsParams struct {
	InvocationID string      `json:"invocation_id"`
	Events       []HostEvent `json:"events"`
}

// HostEvent is an adapter event; the core assigns ids and sequence numbers.
type HostEvent struct {
	Kind            string         `json:"kind"`
	Message         string         `json:"message,omitempty"`
	TimestampMillis int64          `json:"timestamp_millis,omitempty"`
	Metadata        map[string]any `json:"metadata,omitempty"`
}

// ErrorData is the data of a v2 JSON-RPC error for a lifecycle failure:
// the same fields as a v1 failed outcome's error.
type ErrorData struct {
	Stage     string         `json:"stage"`
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Retryable bool           `json:"retryable"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// RPCLifecycleError is the JSON-RPC error code of every lifecycle failure
// in v2 (the first application code wire reserves); its data is ErrorData.
const RPCLifecycleError = 1000
