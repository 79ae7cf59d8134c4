package hostproto

import (
	"math"
	"unicode/utf8"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/wire"
)

// The host decodes a start payload without reflection, as it decodes an
// invoke's (invokejson.go): encoding/json would build its decoders and
// encoders for the whole of AgentConfig's and CapabilityPlan's types
// (about 120 KB of heap an idle host keeps, and reflect's code mapped for
// one call). The tables below leave out what is rare in a start (a
// config's MCP servers, a plan's MCP server configs): a payload carrying
// them, like any other key or value the tables do not know, goes to
// encoding/json, which stays the reference (startjson_test.go).

// StartParts is a start payload with presence: a member that is absent or
// null stays nil (the host tells a missing member from an empty one).
type StartParts struct {
	AgentName      string                   `json:"agent_name"`
	BaseDir        string                   `json:"base_dir"`
	Config         *contract.AgentConfig    `json:"config"`
	RuntimeContext *contract.RuntimeContext `json:"runtime_context"`
	CapabilityPlan *contract.CapabilityPlan `json:"capability_plan"`
	TelemetryPlan  *contract.TelemetryPlan  `json:"telemetry_plan"`
	Service        *ServiceBinding          `json:"service"`
}

// DecodeStartPayload decodes a start payload, which must be one valid JSON
// value, into p as json.Unmarshal would. It reports false, leaving p to be
// reset, for what it leaves to encoding/json.
func DecodeStartPayload(raw []byte, p *StartParts) bool {
	return startPartsObject.decode(raw, p)
}

type (
	agentConfig  = contract.AgentConfig
	harnessCfg   = contract.AgentHarnessConfig
	agentModel   = contract.AgentModel
	instructions = contract.AgentInstructionsConfig
	instruction  = contract.AgentInstruction
	runtimeCfg   = contract.AgentRuntimeConfig
	toolsCfg     = contract.AgentToolsConfig
	toolDef      = contract.AgentToolDefinition
	mcpCfg       = contract.AgentMCPConfig
	skillCfg     = contract.AgentSkillConfig
	workflowCfg  = contract.AgentWorkflowConfig
	entrypoint   = contract.AgentWorkflowEntrypoint
	capPlan      = contract.CapabilityPlan
	capRoute     = contract.CapabilityRoute
	targetPlan   = contract.CapabilityTargetPlan
	toolsPlan    = contract.ToolsPlan
	telPlan      = contract.TelemetryPlan
	mcpServer    = contract.MCPServerConfig
)

var (
	startPartsObject = object{fields: []field{
		{"agent_name", func(v any) any { return &v.(*StartParts).AgentName }, nil, 0},
		{"base_dir", func(v any) any { return &v.(*StartParts).BaseDir }, nil, 0},
		{"config", func(v any) any { return &v.(*StartParts).Config }, ptr[agentConfig]{&agentConfigObject}, 0},
		{"runtime_context", func(v any) any { return &v.(*StartParts).RuntimeContext }, ptr[runtimeCx]{&runtimeContextObject}, 0},
		{"capability_plan", func(v any) any { return &v.(*StartParts).CapabilityPlan }, ptr[capPlan]{&capPlanObject}, 0},
		{"telemetry_plan", func(v any) any { return &v.(*StartParts).TelemetryPlan }, ptr[telPlan]{&telPlanObject}, 0},
		{"service", func(v any) any { return &v.(*StartParts).Service }, ptr[ServiceBinding]{&serviceObject}, 0},
	}}
	agentConfigObject = object{fields: []field{
		{"harness", func(v any) any { return &v.(*agentConfig).Harness }, ptr[harnessCfg]{&harnessObject}, 0},
		{"models", func(v any) any { return &v.(*agentConfig).Models }, mapOf[agentModel]{&modelObject}, 0},
		{"instructions", func(v any) any { return &v.(*agentConfig).Instructions }, ptr[instructions]{&instructionsObject}, 0},
		{"runtime", func(v any) any { return &v.(*agentConfig).Runtime }, ptr[runtimeCfg]{&runtimeCfgObject}, 0},
		{"tools", func(v any) any { return &v.(*agentConfig).Tools }, ptr[toolsCfg]{&toolsObject}, 0},
		{"mcp", func(v any) any { return &v.(*agentConfig).MCP }, ptr[mcpCfg]{&mcpObject}, 0},
		{"skills", func(v any) any { return &v.(*agentConfig).Skills }, ptr[skillCfg]{&skillsObject}, 0},
		{"workflow", func(v any) any { return &v.(*agentConfig).Workflow }, ptr[workflowCfg]{&workflowObject}, 0},
		{"extensions", func(v any) any { return &v.(*agentConfig).Extensions }, nil, 0},
	}}
	harnessObject = object{fields: []field{
		{"settings", func(v any) any { return &v.(*harnessCfg).Settings }, nil, 0},
		{"extensions", func(v any) any { return &v.(*harnessCfg).Extensions }, nil, 0},
	}}
	modelObject = object{fields: []field{
		{"provider", func(v any) any { return &v.(*agentModel).Provider }, nil, 0},
		{"model", func(v any) any { return &v.(*agentModel).Model }, nil, 0},
		{"api_key_env", func(v any) any { return &v.(*agentModel).APIKeyEnv }, nil, 0},
		{"base_url", func(v any) any { return &v.(*agentModel).BaseURL }, nil, 0},
		{"temperature", func(v any) any { return &v.(*agentModel).Temperature }, nil, 0},
		{"settings", func(v any) any { return &v.(*agentModel).Settings }, nil, 0},
		{"extensions", func(v any) any { return &v.(*agentModel).Extensions }, nil, 0},
	}}
	instructionsObject = object{fields: []field{
		{"system", func(v any) any { return &v.(*instructions).System }, ptr[instruction]{&instructionObject}, 0},
		{"extensions", func(v any) any { return &v.(*instructions).Extensions }, nil, 0},
	}}
	instructionObject = object{fields: []field{
		{"content", func(v any) any { return &v.(*instruction).Content }, nil, 0},
		{"mode", func(v any) any { return (*string)(&v.(*instruction).Mode) }, nil, 0},
		{"extensions", func(v any) any { return &v.(*instruction).Extensions }, nil, 0},
	}}
	runtimeCfgObject = object{fields: []field{
		{"max_turns", func(v any) any { return &v.(*runtimeCfg).MaxTurns }, nil, 0},
		{"extensions", func(v any) any { return &v.(*runtimeCfg).Extensions }, nil, 0},
	}}
	toolsObject = object{fields: []field{
		{"enabled", func(v any) any { return &v.(*toolsCfg).Enabled }, nil, 0},
		{"blocked", func(v any) any { return &v.(*toolsCfg).Blocked }, nil, 0},
		{"definitions", func(v any) any { return &v.(*toolsCfg).Definitions }, mapOf[toolDef]{&toolDefObject}, 0},
		{"extensions", func(v any) any { return &v.(*toolsCfg).Extensions }, nil, 0},
	}}
	toolDefObject = object{fields: []field{
		{"kind", func(v any) any { return &v.(*toolDef).Kind }, nil, 0},
		{"ref", func(v any) any { return &v.(*toolDef).Ref }, nil, 0},
		{"settings", func(v any) any { return &v.(*toolDef).Settings }, nil, 0},
		{"extensions", func(v any) any { return &v.(*toolDef).Extensions }, nil, 0},
	}}
	// Servers are left to encoding/json.
	mcpObject = object{fields: []field{
		{"extensions", func(v any) any { return &v.(*mcpCfg).Extensions }, nil, 0},
	}}
	skillsObject = object{fields: []field{
		{"paths", func(v any) any { return &v.(*skillCfg).Paths }, nil, 0},
		{"extensions", func(v any) any { return &v.(*skillCfg).Extensions }, nil, 0},
	}}
	workflowObject = object{fields: []field{
		{"entrypoint", func(v any) any { return &v.(*workflowCfg).Entrypoint }, &entrypointObject, 0},
		{"settings", func(v any) any { return &v.(*workflowCfg).Settings }, nil, 0},
		{"extensions", func(v any) any { return &v.(*workflowCfg).Extensions }, nil, 0},
	}}
	entrypointObject = object{fields: []field{
		{"kind", func(v any) any { return &v.(*entrypoint).Kind }, nil, 0},
		{"ref", func(v any) any { return &v.(*entrypoint).Ref }, nil, 0},
		{"extensions", func(v any) any { return &v.(*entrypoint).Extensions }, nil, 0},
	}}
	capPlanObject = object{fields: []field{
		{"routes", func(v any) any { return &v.(*capPlan).Routes }, list[capRoute]{&capRouteObject}, 0},
		{"native", func(v any) any { return &v.(*capPlan).Native }, &targetPlanObject, 0},
		{"managed", func(v any) any { return &v.(*capPlan).Managed }, &targetPlanObject, 0},
		{"unsupported", func(v any) any { return &v.(*capPlan).Unsupported }, &targetPlanObject, 0},
		{"mcp_servers", func(v any) any { return &v.(*capPlan).MCPServers }, mapOf[mcpServer]{&mcpServerObject}, 0},
		{"skill_paths", func(v any) any { return &v.(*capPlan).SkillPaths }, nil, 0},
		{"tools", func(v any) any { return &v.(*capPlan).Tools }, &toolsPlanObject, 0},
		{"tools_configured", func(v any) any { return &v.(*capPlan).ToolsConfigured }, nil, 0},
	}}
	capRouteObject = object{fields: []field{
		{"kind", func(v any) any { return &v.(*capRoute).Kind }, nil, 0},
		{"name", func(v any) any { return &v.(*capRoute).Name }, nil, 0},
		{"target", func(v any) any { return &v.(*capRoute).Target }, nil, 0},
		{"reason", func(v any) any { return &v.(*capRoute).Reason }, nil, 0},
	}}
	targetPlanObject = object{fields: []field{
		{"mcp_servers", func(v any) any { return &v.(*targetPlan).MCPServers }, mapOf[mcpServer]{&mcpServerObject}, 0},
		{"skill_paths", func(v any) any { return &v.(*targetPlan).SkillPaths }, nil, 0},
		{"tools_configured", func(v any) any { return &v.(*targetPlan).ToolsConfigured }, nil, 0},
	}}
	// An MCP server's configuration is left to encoding/json: this table
	// takes only {} (a server with nothing set).
	mcpServerObject = object{}
	toolsPlanObject = object{fields: []field{
		{"enabled", func(v any) any { return &v.(*toolsPlan).Enabled }, nil, 0},
		{"blocked", func(v any) any { return &v.(*toolsPlan).Blocked }, nil, 0},
	}}
	telPlanObject = object{fields: []field{
		{"providers", func(v any) any { return &v.(*telPlan).Providers }, nil, 0},
		{"relay_enabled", func(v any) any { return &v.(*telPlan).RelayEnabled }, nil, 0},
		{"relay_config", func(v any) any { return &v.(*telPlan).RelayConfig }, nil, 0},
		{"relay_output_dir", func(v any) any { return &v.(*telPlan).RelayOutputDir }, nil, 0},
		{"relay_project", func(v any) any { return &v.(*telPlan).RelayProject }, nil, 0},
		{"native_config", func(v any) any { return &v.(*telPlan).NativeConfig }, nil, 0},
		{"adapter_outputs", func(v any) any { return &v.(*telPlan).AdapterOutputs }, nil, 0},
	}}
	serviceObject = object{fields: []field{
		{"service_id", func(v any) any { return &v.(*ServiceBinding).ServiceID }, nil, 0},
		{"adapter_id", func(v any) any { return &v.(*ServiceBinding).AdapterID }, nil, 0},
		{"service_type", func(v any) any { return &v.(*ServiceBinding).ServiceType }, nil, 0},
		{"ownership", func(v any) any { return &v.(*ServiceBinding).Ownership }, nil, 0},
		{"connection", func(v any) any { return &v.(*ServiceBinding).Connection }, nil, 0},
		{"metadata", func(v any) any { return &v.(*ServiceBinding).Metadata }, nil, 0},
	}}
)

// A mapOf handles a field of type map[string]S, S being its object's type.
// It decodes only; the start payload is never encoded by the host.
type mapOf[S any] struct{ of *object }

func (m mapOf[S]) decodeAt(val []byte, p any) bool {
	mp, ok := p.(*map[string]S)
	switch {
	case !ok:
		return false
	case wire.IsNull(val):
		*mp = nil
		return true
	}
	*mp = map[string]S{}
	return wire.ObjectMembers(val, func(key, elem []byte) bool {
		if !utf8.Valid(key) { // encoding/json would replace the bad bytes
			return false
		}
		var s S // each value decodes from zero; a repeated key's last wins
		if !wire.IsNull(elem) && !m.of.decode(elem, &s) {
			return false
		}
		(*mp)[string(key)] = s
		return true
	})
}

func (mapOf[S]) appendAt(dst []byte, _ any, _, _ bool) (_ []byte, ok, omit bool) {
	return dst, false, false
}

// stringList decodes a []string field as encoding/json does: null leaves
// nil, [] an empty list; an element that is not a string declines.
func stringList(val []byte, p *[]string) bool {
	if wire.IsNull(val) {
		*p = nil
		return true
	}
	*p = []string{}
	return wire.ArrayElements(val, func(elem []byte) bool {
		var s string // null decodes as ""
		if !wire.StringField(elem, &s) {
			return false
		}
		*p = append(*p, s)
		return true
	})
}

// uint32Ptr decodes a *uint32 field; a number out of range declines.
func uint32Ptr(val []byte, p **uint32) bool {
	var n *uint64
	if !wire.Uint64PtrField(val, &n) {
		return false
	}
	if n == nil {
		*p = nil
		return true
	}
	if *n > math.MaxUint32 {
		return false
	}
	v := uint32(*n)
	*p = &v
	return true
}
