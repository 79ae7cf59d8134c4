package contract

import "encoding/json"

// Descriptor contract versions Fabric reads.
const (
	DescriptorV1Alpha1 = "fabric.adapter/v1alpha1"
	DescriptorV1Alpha2 = "fabric.adapter/v1alpha2"
)

// Adapter kinds.
const (
	AdapterKindProcess      = "process"
	AdapterKindPython       = "python"
	AdapterKindHTTP         = "http"
	AdapterKindNativePlugin = "native_plugin"
)

// Host protocols a runner may select with its "protocol" key.
const (
	HostProtocolV1 = "fabric.host/v1"
	HostProtocolV2 = "fabric.host/v2"
)

// RunnerSpec is the typed view of a descriptor's runner. Unknown runner keys
// stay in the descriptor's Runner map.
type RunnerSpec struct {
	Command  string            `json:"command,omitempty"`
	Script   string            `json:"script,omitempty"`
	Module   string            `json:"module,omitempty"`
	Args     []string          `json:"args,omitempty"`
	Cwd      string            `json:"cwd,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	Protocol string            `json:"protocol,omitempty"`
	// Builtin names a bundled Go adapter (one compiled into the fabric
	// binary); the runtime re-executes the binary, or fabric-host, as its
	// host. The Go name follows the descriptor's JSON field, runner.builtin,
	// which published descriptors and package digests already carry; in
	// prose and every other identifier the concept is "bundled".
	Builtin string `json:"builtin,omitempty"`
}

// Runner decodes the descriptor's runner map into a RunnerSpec.
func (d *AdapterDescriptor) RunnerSpec() (RunnerSpec, error) {
	var r RunnerSpec
	if len(d.Runner) == 0 {
		return r, nil
	}
	b, err := json.Marshal(d.Runner)
	if err != nil {
		return r, err
	}
	err = json.Unmarshal(b, &r)
	return r, err
}

// Config inputs an adapter may declare.
const (
	ConfigInputAgentConfig  = "agent_config"
	ConfigInputFabricConfig = "fabric_config"
)

// ExtensionPoints lists the southbound blocks whose "extensions" map a
// descriptor may describe in extension_schemas (a new slice at each call).
func ExtensionPoints() []string {
	return []string{
		"agent_config", "harness", "model", "instructions", "instruction", "runtime",
		"skills", "mcp", "mcp_server", "tools", "tool_definition", "workflow",
		"workflow_entrypoint", "run_request", "run_result", "run_error", "artifact", "usage",
	}
}

// AdapterDescriptor is the language-neutral description of one adapter
// (`*.fabric-adapter.json`). Schemas are kept as raw JSON so they can be
// compiled exactly as written. Empty requirements, config and telemetry
// blocks are omitted when written (upstream defaults them to {});
// capabilities are always written.
type AdapterDescriptor struct {
	ContractVersion      string                     `json:"contract_version" jsonschema:"enum=fabric.adapter/v1alpha1,enum=fabric.adapter/v1alpha2"`
	AdapterID            string                     `json:"adapter_id" jsonschema:"minLength=1"`
	Harness              string                     `json:"harness,omitempty"`
	AdapterKind          string                     `json:"adapter_kind" jsonschema:"enum=process,enum=python,enum=http,enum=native_plugin"`
	Runner               map[string]any             `json:"runner,omitempty"`
	TargetTypes          []string                   `json:"target_types,omitempty"`
	Requirements         AdapterRequirements        `json:"requirements,omitzero"`
	Config               AdapterConfigSupport       `json:"config,omitzero"`
	Capabilities         RuntimeCapabilities        `json:"capabilities" jsonschema:"default={}"`
	Telemetry            AdapterTelemetrySupport    `json:"telemetry,omitzero"`
	SettingsSchema       json.RawMessage            `json:"settings_schema,omitempty"`
	ModelSchema          json.RawMessage            `json:"model_schema,omitempty"`
	ToolDefinitionSchema json.RawMessage            `json:"tool_definition_schema,omitempty"`
	WorkflowSchema       json.RawMessage            `json:"workflow_schema,omitempty"`
	ExtensionSchemas     map[string]json.RawMessage `json:"extension_schemas,omitempty"`
	// Fabric extensions (tolerated by upstream: the descriptor schema allows
	// additional properties).
	Limits *DescriptorLimits `json:"limits,omitempty"`
	Doctor []DoctorProbe     `json:"doctor,omitempty"`
	// Interfaces declares the harness interfaces the adapter supports
	// (interfaces.go); absent means none.
	Interfaces []InterfaceDeclaration `json:"interfaces,omitempty"`
	// ModelErrors map the adapter's error codes and messages to the
	// normalised model error codes (modelerrors.go); first match wins.
	ModelErrors []ModelErrorRule `json:"model_errors,omitempty"`
}

// DescriptorLimits are an adapter's default lifecycle deadlines in seconds.
type DescriptorLimits struct {
	StartSeconds     float64 `json:"start_seconds,omitempty"`
	StopSeconds      float64 `json:"stop_seconds,omitempty"`
	ExitGraceSeconds float64 `json:"exit_grace_seconds,omitempty"`
	InvokeSeconds    float64 `json:"invoke_seconds,omitempty"`
}

// DoctorProbe is an adapter-declared preflight check: run a binary with
// arguments and expect exit status 0 (for example `--version`).
type DoctorProbe struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	// Version, when true, records the first line of the output as the
	// binary's version.
	Version bool `json:"version,omitempty"`
}

// AdapterRequirements are checked by doctor, never at plan time.
type AdapterRequirements struct {
	Binaries    []string `json:"binaries,omitempty"`
	Env         []string `json:"env,omitempty"`
	Files       []string `json:"files,omitempty"`
	Services    []string `json:"services,omitempty"`
	PluginHooks []string `json:"plugin_hooks,omitempty"`
	// VersionArgs is a Fabric extension: arguments that make a required
	// binary print its version (for example {"codex": ["--version"]}).
	VersionArgs map[string][]string `json:"version_args,omitempty"`
}

// Config fields an adapter can accept (descriptor config.accepts).
const (
	AcceptModels                = "models"
	AcceptModelsBaseURL         = "models.base_url"
	AcceptModelsTemperature     = "models.temperature"
	AcceptModelsTopP            = "models.top_p"
	AcceptModelsMaxTokens       = "models.max_tokens"
	AcceptInstructionsSystem    = "instructions.system"
	AcceptRuntimeMaxTurns       = "runtime.max_turns"
	AcceptToolsEnabled          = "tools.enabled"
	AcceptToolsDefinitions      = "tools.definitions"
	AcceptToolsBlocked          = "tools.blocked"
	AcceptMCP                   = "mcp"
	AcceptMCPToolFilters        = "mcp.tool_filters"
	AcceptMCPAuthOAuth2         = "mcp.auth.oauth2"
	AcceptMCPAuthServiceAccount = "mcp.auth.service_account"
	AcceptSkills                = "skills"
	// v1alpha1 coarse fields.
	AcceptTools     = "tools"
	AcceptTelemetry = "telemetry"
)

// AdapterConfigSupport declares which normalized config fields the adapter
// translates.
type AdapterConfigSupport struct {
	Input                  string            `json:"input,omitempty" jsonschema:"enum=agent_config,enum=fabric_config"`
	Accepts                []string          `json:"accepts,omitempty"`
	Generates              []string          `json:"generates,omitempty"`
	SystemInstructionModes []InstructionMode `json:"system_instruction_modes,omitempty" jsonschema:"minItems=1,uniqueItems=true,enum=replace,enum=append"`
}

// RuntimeCapabilities are the lifecycle behaviours a runtime path implements.
type RuntimeCapabilities struct {
	Service      bool           `json:"service" jsonschema:"default=false"`
	Streaming    bool           `json:"streaming" jsonschema:"default=false"`
	Updates      bool           `json:"updates" jsonschema:"default=false"`
	Cancellation bool           `json:"cancellation" jsonschema:"default=false"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

// AdapterTelemetrySupport declares telemetry providers the adapter supports.
type AdapterTelemetrySupport struct {
	Providers map[string]AdapterTelemetryProvider `json:"providers,omitempty"`
}

// AdapterTelemetryProvider is one provider's outputs and integration modes.
type AdapterTelemetryProvider struct {
	Outputs          []string `json:"outputs,omitempty"`
	IntegrationModes []string `json:"integration_modes,omitempty"`
}

// Accepts reports whether the descriptor lists field in config.accepts.
func (d *AdapterDescriptor) Accepts(field string) bool {
	for _, a := range d.Config.Accepts {
		if a == field {
			return true
		}
	}
	return false
}
