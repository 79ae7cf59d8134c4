package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// ConfigSchemaVersion is the only FabricConfig schema version Fabric reads.
const ConfigSchemaVersion = "fabric.agent/v1alpha1"

// FabricConfig is the northbound, harness-neutral agent configuration.
//
// Top-level keys that Fabric does not know are kept in Extra: they survive a
// load/marshal round trip and are reported as warnings by the loader.
type FabricConfig struct {
	SchemaVersion string                     `json:"schema_version" jsonschema:"const=fabric.agent/v1alpha1"`
	Metadata      MetadataConfig             `json:"metadata"`
	Runtime       RuntimeConfig              `json:"runtime"`
	Harness       *HarnessConfig             `json:"harness,omitempty"`
	Models        map[string]ModelConfig     `json:"models,omitempty"`
	Instructions  *InstructionsConfig        `json:"instructions,omitempty"`
	Tools         *ToolsConfig               `json:"tools,omitempty"`
	MCP           *MCPConfig                 `json:"mcp,omitempty"`
	Skills        *SkillsConfig              `json:"skills,omitempty"`
	Relay         map[string]any             `json:"relay,omitempty"`
	Telemetry     *TelemetryConfig           `json:"telemetry,omitempty"`
	Environment   *EnvironmentConfig         `json:"environment,omitempty"`
	Discovery     *DiscoveryConfig           `json:"discovery,omitempty"`
	Workflow      *WorkflowConfig            `json:"workflow,omitempty"`
	Extra         map[string]json.RawMessage `json:"-"`
}

type fabricConfigNoMethods FabricConfig

// MarshalJSON writes the typed fields and then every preserved unknown key.
func (c FabricConfig) MarshalJSON() ([]byte, error) {
	base, err := json.Marshal(fabricConfigNoMethods(c))
	if err != nil {
		return nil, err
	}
	if len(c.Extra) == 0 {
		return base, nil
	}
	keys := make([]string, 0, len(c.Extra))
	for k := range c.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.Write(base[:len(base)-1])
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(c.Extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads the typed fields and keeps every unknown top-level key
// in Extra.
func (c *FabricConfig) UnmarshalJSON(data []byte) error {
	var typed fabricConfigNoMethods
	if err := json.Unmarshal(data, &typed); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	for _, k := range FabricConfigKeys() {
		delete(all, k)
	}
	if len(all) > 0 {
		typed.Extra = all
	} else {
		typed.Extra = nil
	}
	*c = FabricConfig(typed)
	return nil
}

// FabricConfigKeys lists the top-level keys FabricConfig knows, in document
// order (a new slice at each call).
func FabricConfigKeys() []string {
	return []string{
		"schema_version", "metadata", "runtime", "harness", "models", "instructions",
		"tools", "mcp", "skills", "relay", "telemetry", "environment", "discovery", "workflow",
	}
}

// MetadataConfig is human-readable agent identity.
type MetadataConfig struct {
	Name        string  `json:"name" jsonschema:"minLength=1"`
	Description *string `json:"description,omitempty"`
}

// Schema names for runtime.input_schema / output_schema.
const SchemaText = "text"

// RuntimeConfig is the invocation runtime contract.
type RuntimeConfig struct {
	Artifacts      *string  `json:"artifacts,omitempty"`
	InputSchema    string   `json:"input_schema,omitempty" jsonschema:"default=text"`
	OutputSchema   string   `json:"output_schema,omitempty" jsonschema:"default=text"`
	MaxTurns       *uint32  `json:"max_turns,omitempty" jsonschema:"minimum=1"`
	TimeoutSeconds *float64 `json:"timeout_seconds,omitempty" jsonschema:"exclusiveMinimum=0"`
	// Limits are Fabric extensions: per-config lifecycle deadlines, capped by
	// Fabric's hard limits.
	Limits *LifecycleLimits `json:"limits,omitempty"`
}

// LifecycleLimits overrides lifecycle deadlines, in seconds. Zero means the
// descriptor's value or Fabric's default; values above the hard caps are
// rejected.
type LifecycleLimits struct {
	StartSeconds     float64 `json:"start_seconds,omitempty" jsonschema:"minimum=0"`
	StopSeconds      float64 `json:"stop_seconds,omitempty" jsonschema:"minimum=0"`
	ExitGraceSeconds float64 `json:"exit_grace_seconds,omitempty" jsonschema:"minimum=0"`
	InvokeSeconds    float64 `json:"invoke_seconds,omitempty" jsonschema:"minimum=0"`
}

// ResolutionStrategy says how the harness is installed or made available.
type ResolutionStrategy string

// Resolution strategies.
const (
	ResolutionPreinstalled  ResolutionStrategy = "preinstalled"
	ResolutionImageProvided ResolutionStrategy = "image_provided"
	ResolutionPipUV         ResolutionStrategy = "pip_uv"
	ResolutionNPM           ResolutionStrategy = "npm"
	ResolutionSource        ResolutionStrategy = "source"
	ResolutionService       ResolutionStrategy = "service"
	ResolutionNativePlugin  ResolutionStrategy = "native_plugin"
)

// ResolutionStrategies lists every valid ResolutionStrategy (a new slice
// at each call).
func ResolutionStrategies() []ResolutionStrategy {
	return []ResolutionStrategy{ResolutionPreinstalled, ResolutionImageProvided, ResolutionPipUV, ResolutionNPM, ResolutionSource, ResolutionService, ResolutionNativePlugin}
}

// HarnessConfig selects the adapter.
type HarnessConfig struct {
	AdapterID  string              `json:"adapter_id" jsonschema:"minLength=1"`
	Resolution *ResolutionStrategy `json:"resolution,omitempty" jsonschema:"enum=preinstalled,enum=image_provided,enum=pip_uv,enum=npm,enum=source,enum=service,enum=native_plugin"`
	Settings   map[string]any      `json:"settings,omitempty"`
	// Package (a Fabric extension) selects the runtime package the harness
	// must come from, "ID@VERSION" or "ID" for the support catalog's signed
	// default. Planning then fails closed unless that package is on disk,
	// listed in the catalog in a selectable state and qualified for this
	// platform; it never falls back to another.
	Package string `json:"package,omitempty"`
}

// ModelConfig is one named model role. APIKeyEnv names an environment
// variable; the key itself never enters a config, plan or result.
type ModelConfig struct {
	Provider    string         `json:"provider" jsonschema:"minLength=1"`
	Model       string         `json:"model" jsonschema:"minLength=1"`
	APIKeyEnv   *string        `json:"api_key_env,omitempty"`
	BaseURL     *string        `json:"base_url,omitempty"`
	MaxTokens   *uint64        `json:"max_tokens,omitempty" jsonschema:"minimum=1"`
	Temperature *float64       `json:"temperature,omitempty"`
	TopP        *float64       `json:"top_p,omitempty" jsonschema:"minimum=0,maximum=1"`
	Settings    map[string]any `json:"settings,omitempty"`
}

// InstructionMode says how an instruction is applied.
type InstructionMode string

// Instruction modes.
const (
	InstructionReplace InstructionMode = "replace"
	InstructionAppend  InstructionMode = "append"
)

// InstructionsConfig holds portable instructions.
type InstructionsConfig struct {
	System *InstructionConfig `json:"system,omitempty"`
}

// InstructionConfig is one instruction value.
type InstructionConfig struct {
	Content string          `json:"content" jsonschema:"minLength=1,pattern=\\S"`
	Mode    InstructionMode `json:"mode,omitempty" jsonschema:"enum=replace,enum=append,default=replace"`
}

// ToolsConfig is the tool policy. Enabled nil keeps the harness default (the
// key is omitted); an empty, non-nil list disables every tool.
type ToolsConfig struct {
	Enabled     []string                  `json:"enabled,omitzero"`
	Blocked     []string                  `json:"blocked,omitempty"`
	Definitions map[string]ToolDefinition `json:"definitions,omitempty"`
}

// ToolDefinition is one named tool or tool group, validated by the
// descriptor's tool_definition_schema.
type ToolDefinition struct {
	Kind     string         `json:"kind" jsonschema:"minLength=1"`
	Ref      string         `json:"ref" jsonschema:"minLength=1"`
	Settings map[string]any `json:"settings,omitempty"`
}

// MCPConfig holds named MCP servers.
type MCPConfig struct {
	Servers map[string]MCPServerConfig `json:"servers,omitempty"`
}

// MCP transports and exposures.
const (
	MCPTransportStdio          = "stdio"
	MCPTransportSSE            = "sse"
	MCPTransportStreamableHTTP = "streamable-http"
	MCPExposureHarnessNative   = "harness_native"
	MCPExposureFabricManaged   = "fabric_managed"
)

// MCPServerConfig is one MCP server. AllowedTools nil exposes every tool the
// server offers (the key is omitted); an empty, non-nil list exposes none.
type MCPServerConfig struct {
	Transport      string             `json:"transport" jsonschema:"enum=stdio,enum=sse,enum=streamable-http"`
	URL            string             `json:"url" jsonschema:"minLength=1"`
	Exposure       string             `json:"exposure" jsonschema:"enum=harness_native,enum=fabric_managed"`
	Args           []string           `json:"args,omitempty"`
	Env            map[string]string  `json:"env,omitempty"`
	CustomHeaders  map[string]string  `json:"custom_headers,omitempty"`
	AllowedTools   []string           `json:"allowed_tools,omitzero"`
	BlockedTools   []string           `json:"blocked_tools,omitempty"`
	Authentication *MCPAuthentication `json:"authentication,omitempty"`
}

// MCPAuthentication is oauth2 or service_account authentication for an
// HTTP MCP server. Secrets are referenced by environment-variable name.
//
// One Go type carries both variants; like upstream, the JSON Schema is a
// oneOf of two closed objects discriminated by Type. oauth2 allows ClientID,
// ClientName, ClientSecretEnv, RedirectURI, Scopes, EnableDynamicRegistration,
// AuthorizationTimeoutSeconds and TokenEndpointAuthMethod; service_account
// requires ClientID, ClientSecretEnv and TokenURL and allows Scopes,
// TokenCacheBufferSeconds and TokenEndpointAuthMethod.
type MCPAuthentication struct {
	Type                        string   `json:"type" jsonschema:"enum=oauth2,enum=service_account"`
	ClientID                    *string  `json:"client_id,omitempty"`
	ClientName                  *string  `json:"client_name,omitempty"`
	ClientSecretEnv             *string  `json:"client_secret_env,omitempty"`
	RedirectURI                 *string  `json:"redirect_uri,omitempty"`
	Scopes                      []string `json:"scopes,omitempty"`
	EnableDynamicRegistration   *bool    `json:"enable_dynamic_registration,omitempty"`
	AuthorizationTimeoutSeconds *uint64  `json:"authorization_timeout_seconds,omitempty" jsonschema:"minimum=1"`
	TokenURL                    *string  `json:"token_url,omitempty"`
	TokenCacheBufferSeconds     *uint64  `json:"token_cache_buffer_seconds,omitempty"`
	TokenEndpointAuthMethod     *string  `json:"token_endpoint_auth_method,omitempty" jsonschema:"enum=none,enum=client_secret_post,enum=client_secret_basic"`
}

// SkillsConfig lists skill paths, resolved against base_dir.
type SkillsConfig struct {
	Paths []string `json:"paths,omitempty"`
}

// TelemetryConfig enables telemetry providers (relay, native).
type TelemetryConfig struct {
	Providers map[string]TelemetryProviderConfig `json:"providers,omitempty"`
}

// TelemetryProviderConfig is one provider's pass-through config.
type TelemetryProviderConfig struct {
	Config map[string]any `json:"config,omitempty"`
}

// Control locations and ownerships.
const (
	ControlExternal  = "external_control"
	ControlInEnv     = "in_env_control"
	OwnershipCaller  = "caller_owned"
	OwnershipFabric  = "fabric_owned"
	EnvironmentLocal = "local"
)

// EnvironmentConfig describes the execution environment.
type EnvironmentConfig struct {
	Provider        string            `json:"provider" jsonschema:"minLength=1"`
	ControlLocation string            `json:"control_location,omitempty" jsonschema:"enum=external_control,enum=in_env_control,default=in_env_control"`
	Ownership       string            `json:"ownership,omitempty" jsonschema:"enum=caller_owned,enum=fabric_owned,default=caller_owned"`
	Workspace       *string           `json:"workspace,omitempty"`
	Artifacts       *string           `json:"artifacts,omitempty"`
	Env             map[string]string `json:"env,omitempty"`
	Connection      map[string]any    `json:"connection,omitempty"`
	Settings        map[string]any    `json:"settings,omitempty"`
	Metadata        map[string]any    `json:"metadata,omitempty"`
}

// DiscoveryConfig lists extra descriptor files or directories.
type DiscoveryConfig struct {
	LocalPaths []string `json:"local_paths,omitempty"`
}

// WorkflowConfig selects a registered workflow target.
type WorkflowConfig struct {
	TargetID string         `json:"target_id" jsonschema:"minLength=1"`
	Settings map[string]any `json:"settings,omitempty"`
}

// SelectedModel returns the deterministic model role: "default" wins, else
// the single configured role. ok is false when there are no models; err is
// set when several roles exist without "default".
func (c *FabricConfig) SelectedModel() (role string, ok bool, err error) {
	if len(c.Models) == 0 {
		return "", false, nil
	}
	if _, has := c.Models["default"]; has {
		return "default", true, nil
	}
	if len(c.Models) == 1 {
		for k := range c.Models {
			return k, true, nil
		}
	}
	roles := make([]string, 0, len(c.Models))
	for k := range c.Models {
		roles = append(roles, k)
	}
	sort.Strings(roles)
	return "", false, fmt.Errorf("%d model roles %v and none is named \"default\"", len(roles), roles)
}
