package contract

// RunPlan is the resolved plan for one FabricConfig and its selected
// adapter descriptor. The embedded descriptor is authoritative.
type RunPlan struct {
	AgentName         string                     `json:"agent_name"`
	BaseDir           string                     `json:"base_dir"`
	Config            FabricConfig               `json:"config"`
	Capabilities      RuntimeCapabilities        `json:"capabilities"`
	AdapterDescriptor *ResolvedAdapterDescriptor `json:"adapter_descriptor,omitempty"`
	CapabilityPlan    CapabilityPlan             `json:"capability_plan"`
	EnvironmentPlan   *EnvironmentConfig         `json:"environment_plan,omitempty"`
	Resolution        *ResolutionStrategy        `json:"resolution,omitempty"`
	TelemetryPlan     *TelemetryPlan             `json:"telemetry_plan,omitempty"`
	// Fabric extensions.
	ModelRole    string           `json:"model_role,omitempty"`
	HostProtocol string           `json:"host_protocol,omitempty"`
	Limits       *LifecycleLimits `json:"limits,omitempty"`
	Diagnostics  []Diagnostic     `json:"diagnostics,omitempty"`
	// Package is the support-catalog decision the plan was made under,
	// when the config selects a package (harness.package).
	Package *PackageSelection `json:"package,omitempty"`
}

// PackageSelection records which catalog entry a plan, runtime or
// deployment runs under, so an audit can tell what a revocation means
// for it.
type PackageSelection struct {
	// Requested is harness.package as the config wrote it.
	Requested string `json:"requested"`
	// Entry is the catalog entry selected, "ID@VERSION".
	Entry string `json:"entry"`
	// CatalogSerial is the serial of the catalog version that listed it.
	CatalogSerial int64 `json:"catalog_serial"`
	// PackageDigest is the sha256 of the package found on disk, equal to
	// the entry's.
	PackageDigest string `json:"package_digest" jsonschema:"pattern=^[0-9a-f]{64}$"`
	// State is the entry's support state when selected.
	State    string `json:"state"`
	Platform string `json:"platform"`
}

// Descriptor sources.
const (
	SourceBundled   = "bundled"
	SourceInstalled = "installed"
	SourceBaseDir   = "base_dir"
	SourceLocal     = "local"
)

// ResolvedAdapterDescriptor is the selected descriptor and where it came from.
type ResolvedAdapterDescriptor struct {
	Descriptor AdapterDescriptor `json:"descriptor"`
	Path       string            `json:"path"`
	Root       string            `json:"root"`
	Source     string            `json:"source" jsonschema:"enum=bundled,enum=installed,enum=base_dir,enum=local"`
}

// Capability route kinds and targets.
const (
	RouteTools  = "tools"
	RouteSkills = "skills"
	RouteMCP    = "mcp"

	TargetHarnessNative = "harness_native"
	TargetFabricManaged = "fabric_managed"
	TargetUnsupported   = "unsupported"
)

// CapabilityPlan routes tools, skills and MCP servers.
type CapabilityPlan struct {
	Routes          []CapabilityRoute          `json:"routes"`
	Native          CapabilityTargetPlan       `json:"native"`
	Managed         CapabilityTargetPlan       `json:"managed"`
	Unsupported     CapabilityTargetPlan       `json:"unsupported"`
	MCPServers      map[string]MCPServerConfig `json:"mcp_servers"`
	SkillPaths      []string                   `json:"skill_paths"`
	Tools           ToolsPlan                  `json:"tools"`
	ToolsConfigured bool                       `json:"tools_configured"`
}

// CapabilityRoute says who executes one capability and why.
type CapabilityRoute struct {
	Kind   string `json:"kind" jsonschema:"enum=tools,enum=skills,enum=mcp"`
	Name   string `json:"name"`
	Target string `json:"target" jsonschema:"enum=harness_native,enum=fabric_managed,enum=unsupported"`
	Reason string `json:"reason"`
}

// CapabilityTargetPlan groups capabilities for one target.
type CapabilityTargetPlan struct {
	MCPServers      map[string]MCPServerConfig `json:"mcp_servers"`
	SkillPaths      []string                   `json:"skill_paths"`
	ToolsConfigured bool                       `json:"tools_configured"`
}

// ToolsPlan is the effective tool policy.
type ToolsPlan struct {
	Enabled []string `json:"enabled"`
	Blocked []string `json:"blocked"`
}

// Telemetry provider names.
const (
	TelemetryRelay  = "relay"
	TelemetryNative = "native"
)

// TelemetryPlan is the resolved telemetry configuration.
type TelemetryPlan struct {
	Providers      []string       `json:"providers"`
	RelayEnabled   bool           `json:"relay_enabled"`
	RelayConfig    map[string]any `json:"relay_config,omitempty"`
	RelayOutputDir *string        `json:"relay_output_dir,omitempty"`
	RelayProject   *string        `json:"relay_project,omitempty"`
	NativeConfig   map[string]any `json:"native_config,omitempty"`
	AdapterOutputs []string       `json:"adapter_outputs"`
}

// Diagnostic severities.
const (
	SeverityWarning = "warning"
	SeverityError   = "error"
	SeverityInfo    = "info"
)

// Diagnostic is a non-fatal finding attached to a plan (duplicate adapter
// ids, unknown keys, ...).
type Diagnostic struct {
	Severity string         `json:"severity" jsonschema:"enum=info,enum=warning,enum=error"`
	Code     string         `json:"code"`
	Path     string         `json:"path,omitempty"`
	Message  string         `json:"message"`
	Metadata map[string]any `json:"metadata,omitempty"`
}
