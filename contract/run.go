package contract

import "encoding/json"

// Run statuses shared by RunResult and AgentRunResult.
const (
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Error stages.
const (
	StageConfig   = "config"
	StagePlan     = "plan"
	StagePrepare  = "prepare"
	StageStart    = "start"
	StageInvoke   = "invoke"
	StageStop     = "stop"
	StageRelease  = "release"
	StageArtifact = "artifact"
)

// RunRequest is one northbound invocation request.
type RunRequest struct {
	RequestID string         `json:"request_id"`
	Input     any            `json:"input"`
	Context   map[string]any `json:"context,omitempty"`
	Overrides map[string]any `json:"overrides,omitempty"`
}

// RunResult is the normalized result of one invocation.
type RunResult struct {
	AgentName    string           `json:"agent_name"`
	Harness      string           `json:"harness"`
	AdapterKind  string           `json:"adapter_kind"`
	AdapterID    string           `json:"adapter_id,omitempty"`
	RuntimeID    string           `json:"runtime_id"`
	InvocationID string           `json:"invocation_id"`
	RequestID    string           `json:"request_id"`
	Status       string           `json:"status" jsonschema:"enum=succeeded,enum=failed,enum=cancelled"`
	Output       any              `json:"output"`
	Error        *ErrorInfo       `json:"error,omitempty"`
	Artifacts    ArtifactManifest `json:"artifacts"`
	Telemetry    *TelemetryRef    `json:"telemetry,omitempty"`
	Events       []FabricEvent    `json:"events"`
	Metadata     map[string]any   `json:"metadata"`
	Usage        *RunUsage        `json:"usage,omitempty"`
}

// RunUsage is normalized model usage.
type RunUsage struct {
	InputTokens  *uint64        `json:"input_tokens,omitempty"`
	OutputTokens *uint64        `json:"output_tokens,omitempty"`
	TotalTokens  *uint64        `json:"total_tokens,omitempty"`
	CostUSD      *float64       `json:"cost_usd,omitempty" jsonschema:"minimum=0"`
	Extensions   map[string]any `json:"extensions,omitempty"`
}

// TelemetryRef says whether Relay ran for a result.
type TelemetryRef struct {
	RelayEnabled bool           `json:"relay_enabled"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

// ErrorInfo is the normalized error of a result or lifecycle failure.
type ErrorInfo struct {
	Stage     string         `json:"stage" jsonschema:"enum=config,enum=plan,enum=prepare,enum=start,enum=invoke,enum=stop,enum=release,enum=artifact"`
	Code      string         `json:"code" jsonschema:"minLength=1"`
	Message   string         `json:"message"`
	Retryable bool           `json:"retryable" jsonschema:"default=false"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// Event kinds emitted by the core. Adapters add their own kinds.
const (
	EventRuntimeStart    = "runtime_start"
	EventInvocationStart = "invocation_start"
	EventInvocationEnd   = "invocation_end"
	EventRuntimeStop     = "runtime_stop"
)

// FabricEvent is one normalized event.
type FabricEvent struct {
	EventID         string         `json:"event_id"`
	TimestampMillis int64          `json:"timestamp_millis"`
	Kind            string         `json:"kind" jsonschema:"minLength=1"`
	Message         string         `json:"message"`
	Metadata        map[string]any `json:"metadata,omitempty"`
}

// ArtifactManifest lists artifacts with paths relative to Root. A nil
// Artifacts list is written as [] (never null), as upstream schemas require.
type ArtifactManifest struct {
	Root      *string       `json:"root,omitempty"`
	Artifacts []ArtifactRef `json:"artifacts" jsonschema:"default=[]"`
}

type artifactManifestNoMethods ArtifactManifest

// MarshalJSON writes the manifest with a nil artifact list as [].
func (m ArtifactManifest) MarshalJSON() ([]byte, error) {
	if m.Artifacts == nil {
		m.Artifacts = []ArtifactRef{}
	}
	return json.Marshal(artifactManifestNoMethods(m))
}

// ArtifactRef is one artifact.
type ArtifactRef struct {
	Name      string         `json:"name"`
	Kind      string         `json:"kind"`
	Path      string         `json:"path"`
	MediaType *string        `json:"media_type,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}
