package contract

// AgentConfig is the resolved, adapter-facing projection of FabricConfig sent
// in the host's start payload. Runtime identity never goes here.
type AgentConfig struct {
	Harness      *AgentHarnessConfig      `json:"harness,omitempty"`
	Models       map[string]AgentModel    `json:"models,omitempty"`
	Instructions *AgentInstructionsConfig `json:"instructions,omitempty"`
	Runtime      *AgentRuntimeConfig      `json:"runtime,omitempty"`
	Tools        *AgentToolsConfig        `json:"tools,omitempty"`
	MCP          *AgentMCPConfig          `json:"mcp,omitempty"`
	Skills       *AgentSkillConfig        `json:"skills,omitempty"`
	Workflow     *AgentWorkflowConfig     `json:"workflow,omitempty"`
	Extensions   map[string]any           `json:"extensions,omitempty"`
}

// AgentHarnessConfig carries the adapter's settings.
type AgentHarnessConfig struct {
	Settings   map[string]any `json:"settings,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// AgentModel is one model role projected southbound. Upstream has no
// max_tokens or top_p here: those reach an adapter only through Settings.
type AgentModel struct {
	Provider    string         `json:"provider" jsonschema:"minLength=1,pattern=\\S"`
	Model       string         `json:"model" jsonschema:"minLength=1,pattern=\\S"`
	APIKeyEnv   *string        `json:"api_key_env,omitempty"`
	BaseURL     *string        `json:"base_url,omitempty"`
	Temperature *float64       `json:"temperature,omitempty"`
	Settings    map[string]any `json:"settings,omitempty"`
	Extensions  map[string]any `json:"extensions,omitempty"`
}

// AgentInstructionsConfig carries instructions southbound.
type AgentInstructionsConfig struct {
	System     *AgentInstruction `json:"system,omitempty"`
	Extensions map[string]any    `json:"extensions,omitempty"`
}

// AgentInstruction is one instruction value southbound.
type AgentInstruction struct {
	Content    string          `json:"content" jsonschema:"minLength=1,pattern=\\S"`
	Mode       InstructionMode `json:"mode,omitempty" jsonschema:"enum=replace,enum=append,default=replace"`
	Extensions map[string]any  `json:"extensions,omitempty"`
}

// AgentRuntimeConfig is adapter-applied runtime behaviour.
type AgentRuntimeConfig struct {
	MaxTurns   *uint32        `json:"max_turns,omitempty" jsonschema:"minimum=1"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// AgentToolsConfig is the effective tool policy southbound. Enabled nil keeps
// the harness default (the key is omitted); an empty, non-nil list disables
// every tool.
type AgentToolsConfig struct {
	Enabled     []string                       `json:"enabled,omitzero"`
	Blocked     []string                       `json:"blocked,omitempty"`
	Definitions map[string]AgentToolDefinition `json:"definitions,omitempty"`
	Extensions  map[string]any                 `json:"extensions,omitempty"`
}

// AgentToolDefinition is one tool definition southbound.
type AgentToolDefinition struct {
	Kind       string         `json:"kind" jsonschema:"minLength=1,pattern=\\S"`
	Ref        string         `json:"ref" jsonschema:"minLength=1,pattern=\\S"`
	Settings   map[string]any `json:"settings,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// AgentMCPConfig carries MCP servers routed to the adapter.
type AgentMCPConfig struct {
	Servers    map[string]AgentMCPServer `json:"servers,omitempty"`
	Extensions map[string]any            `json:"extensions,omitempty"`
}

// AgentMCPServer is one MCP server southbound. AllowedTools nil exposes every
// tool the server offers (the key is omitted); an empty, non-nil list exposes
// none.
type AgentMCPServer struct {
	Transport      string             `json:"transport" jsonschema:"minLength=1,pattern=\\S"`
	URL            string             `json:"url" jsonschema:"minLength=1,pattern=\\S"`
	Args           []string           `json:"args,omitempty"`
	Env            map[string]string  `json:"env,omitempty"`
	CustomHeaders  map[string]string  `json:"custom_headers,omitempty"`
	AllowedTools   []string           `json:"allowed_tools,omitzero"`
	BlockedTools   []string           `json:"blocked_tools,omitempty"`
	Authentication *MCPAuthentication `json:"authentication,omitempty"`
	Extensions     map[string]any     `json:"extensions,omitempty"`
}

// AgentSkillConfig carries resolved skill paths.
type AgentSkillConfig struct {
	Paths      []string       `json:"paths,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// AgentWorkflowConfig selects a workflow entry point.
type AgentWorkflowConfig struct {
	Entrypoint AgentWorkflowEntrypoint `json:"entrypoint"`
	Settings   map[string]any          `json:"settings,omitempty"`
	Extensions map[string]any          `json:"extensions,omitempty"`
}

// AgentWorkflowEntrypoint is an adapter-declared workflow entry point.
type AgentWorkflowEntrypoint struct {
	Kind       string         `json:"kind" jsonschema:"minLength=1,pattern=\\S"`
	Ref        string         `json:"ref" jsonschema:"minLength=1,pattern=\\S"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// RuntimeContext is generated for every invocation of a started runtime.
type RuntimeContext struct {
	RuntimeID    string                   `json:"runtime_id"`
	InvocationID string                   `json:"invocation_id"`
	RequestID    string                   `json:"request_id"`
	Environment  EnvironmentHandle        `json:"environment"`
	Artifacts    ArtifactManifest         `json:"artifacts"`
	Telemetry    *RuntimeTelemetryContext `json:"telemetry,omitempty"`
}

// RuntimeTelemetryContext is the telemetry context passed to adapters.
type RuntimeTelemetryContext struct {
	RelayEnabled bool              `json:"relay_enabled"`
	ConfigPath   *string           `json:"config_path,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	Metadata     map[string]any    `json:"metadata,omitempty"`
}

// AgentRunRequest is the southbound invocation request.
type AgentRunRequest struct {
	Input      any            `json:"input"`
	Context    map[string]any `json:"context,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
	// RelaySessionRoot is not part of the agent-run-request schema shipped in
	// nemo-fabric-adapter-contract 0.3.0, which is closed: hosts built on it
	// reject a request that carries the key (lifecycle_invalid_request). Leave
	// it nil unless the host is known to accept it.
	RelaySessionRoot *string `json:"relay_session_root,omitempty"`
}

// AgentRunResult is the adapter's terminal result. Error is required when
// Status is failed and must be absent when it is succeeded.
type AgentRunResult struct {
	Status     string          `json:"status" jsonschema:"enum=succeeded,enum=failed,enum=cancelled"`
	Output     any             `json:"output"`
	Error      *AgentRunError  `json:"error,omitempty"`
	Usage      *RunUsage       `json:"usage,omitempty"`
	Artifacts  []AgentArtifact `json:"artifacts,omitempty"`
	Extensions map[string]any  `json:"extensions,omitempty"`
}

// AgentRunError is an adapter-reported error.
type AgentRunError struct {
	Code       string         `json:"code" jsonschema:"minLength=1,pattern=\\S"`
	Message    string         `json:"message" jsonschema:"minLength=1,pattern=\\S"`
	Retryable  bool           `json:"retryable" jsonschema:"default=false"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// AgentArtifact is one artifact produced by the adapter, with a path
// relative to the artifact root: no leading slash or backslash, no drive
// letter, no ".." segment.
type AgentArtifact struct {
	Name       string         `json:"name" jsonschema:"minLength=1,pattern=\\S"`
	Kind       string         `json:"kind" jsonschema:"minLength=1,pattern=\\S"`
	Path       string         `json:"path" jsonschema:"minLength=1,pattern=\\S"`
	MediaType  *string        `json:"media_type,omitempty" jsonschema:"minLength=1,pattern=\\S"`
	Extensions map[string]any `json:"extensions,omitempty"`
}
