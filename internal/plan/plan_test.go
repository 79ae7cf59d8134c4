package plan

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/contract/validate"
	"github.com/fabric-runtime/fabric/internal/catalog"
)

// testDescriptor accepts a chosen set of fields; extra JSON is merged in.
func testDescriptor(id string, accepts []string, extra string) []byte {
	d := map[string]any{
		"contract_version": "fabric.adapter/v1alpha2",
		"adapter_id":       id,
		"adapter_kind":     "process",
		"runner":           map[string]any{"command": "true"},
		"config":           map[string]any{"accepts": accepts},
	}
	if extra != "" {
		var more map[string]any
		if err := json.Unmarshal([]byte(extra), &more); err != nil {
			panic(err)
		}
		for k, v := range more {
			d[k] = v
		}
	}
	b, _ := json.Marshal(d)
	return b
}

var allAccepts = []string{"models", "models.base_url", "models.temperature", "models.top_p", "models.max_tokens", "instructions.system", "runtime.max_turns", "tools.enabled", "tools.blocked", "tools.definitions", "mcp", "mcp.tool_filters", "mcp.auth.oauth2", "skills"}

func testCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Discover(catalog.Options{Bundled: []catalog.Bundled{
		{Name: "open.json", Data: testDescriptor("test.open", allAccepts, `{
			"settings_schema": {"type":"object","additionalProperties":false,"properties":{
				"port_range":{"type":"object","properties":{"start":{"type":"integer","minimum":1024},"end":{"type":"integer"}}},
				"flag":{"type":"boolean"}}},
			"model_schema": {"type":"object","required":["provider","model","api_key_env"],"properties":{"api_key_env":{"type":"string","minLength":1}}},
			"tool_definition_schema": {"type":"object","properties":{"kind":{"const":"module"}},"required":["kind","ref"]},
			"workflow_schema": {"type":"object","required":["target_id"]},
			"config": {"accepts": `+mustJSON(allAccepts)+`, "system_instruction_modes": ["replace"]},
			"telemetry": {"providers": {"relay": {"outputs": ["atif"]}}}
		}`)},
		{Name: "closed.json", Data: testDescriptor("test.closed", []string{}, "")},
		{Name: "v2.json", Data: testDescriptor("test.v2", []string{"models"}, `{"runner":{"command":"x","protocol":"fabric.host/v2"},"capabilities":{"streaming":true,"cancellation":true,"service":true}}`)},
		{Name: "http.json", Data: testDescriptor("test.http", nil, `{"adapter_kind":"http"}`)},
		{Name: "legacy.json", Data: testDescriptor("test.legacy", []string{"models", "tools"}, `{"contract_version":"fabric.adapter/v1alpha1","harness":"legacy"}`)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func baseConfig(adapter string) contract.FabricConfig {
	return contract.FabricConfig{
		SchemaVersion: contract.ConfigSchemaVersion,
		Metadata:      contract.MetadataConfig{Name: "agent"},
		Runtime:       contract.RuntimeConfig{InputSchema: "text", OutputSchema: "text"},
		Harness:       &contract.HarnessConfig{AdapterID: adapter},
	}
}

func ptr[T any](v T) *T { return &v }

type finding struct{ code, path string }

func findings(err error) []finding {
	var out []finding
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var ce *contract.ConfigError
		var ke *contract.CapabilityError
		switch {
		case errors.As(e, &ce):
			out = append(out, finding{ce.Code, ce.Path})
		case errors.As(e, &ke):
			out = append(out, finding{ke.Code, ke.Path})
		default:
			out = append(out, finding{"?", e.Error()})
		}
	}
	walk(err)
	return out
}

func TestResolveRules(t *testing.T) {
	cat := testCatalog(t)
	tests := []struct {
		name    string
		adapter string
		mutate  func(*contract.FabricConfig)
		want    []finding // nil = plan succeeds
	}{
		{"smallest config", "test.closed", func(*contract.FabricConfig) {}, nil},
		{"missing harness", "", func(c *contract.FabricConfig) { c.Harness = nil }, []finding{{"missing_adapter", "harness.adapter_id"}}},
		{"unknown adapter", "nope", func(*contract.FabricConfig) {}, []finding{{"unknown_adapter", "harness.adapter_id"}}},
		{"valid settings", "test.open", func(c *contract.FabricConfig) {
			c.Harness.Settings = map[string]any{"port_range": map[string]any{"start": 2000}}
		}, nil},
		{"settings below minimum", "test.open", func(c *contract.FabricConfig) {
			c.Harness.Settings = map[string]any{"port_range": map[string]any{"start": 80}}
		}, []finding{{"invalid_settings", "harness.settings.port_range.start"}}},
		{"unknown setting", "test.open", func(c *contract.FabricConfig) {
			c.Harness.Settings = map[string]any{"nope": 1}
		}, []finding{{"invalid_settings", "harness.settings"}}},
		{"settings without schema", "test.closed", func(c *contract.FabricConfig) {
			c.Harness.Settings = map[string]any{"x": 1}
		}, []finding{{"settings_not_accepted", "harness.settings.x"}}},
		{"empty settings without schema", "test.closed", func(c *contract.FabricConfig) { c.Harness.Settings = map[string]any{} }, nil},
		{"models accepted", "test.open", func(c *contract.FabricConfig) {
			c.Models = map[string]contract.ModelConfig{"default": {Provider: "openai", Model: "m", APIKeyEnv: ptr("KEY")}}
		}, nil},
		{"models not accepted", "test.closed", func(c *contract.FabricConfig) {
			c.Models = map[string]contract.ModelConfig{"default": {Provider: "openai", Model: "m"}}
		}, []finding{{"unsupported_field", "models"}}},
		{"model fails model_schema", "test.open", func(c *contract.FabricConfig) {
			c.Models = map[string]contract.ModelConfig{"default": {Provider: "openai", Model: "m"}}
		}, []finding{{"invalid_model", "models.default"}}},
		{"single non-default role", "test.v2", func(c *contract.FabricConfig) {
			c.Models = map[string]contract.ModelConfig{"main": {Provider: "p", Model: "m"}}
		}, nil},
		{"two roles without default", "test.v2", func(c *contract.FabricConfig) {
			c.Models = map[string]contract.ModelConfig{"a": {Provider: "p", Model: "m"}, "b": {Provider: "p", Model: "m"}}
		}, []finding{{"ambiguous_model_role", "models"}}},
		{"two roles with default", "test.v2", func(c *contract.FabricConfig) {
			c.Models = map[string]contract.ModelConfig{"default": {Provider: "p", Model: "m"}, "b": {Provider: "p", Model: "m"}}
		}, nil},
		{"base_url not accepted", "test.v2", func(c *contract.FabricConfig) {
			c.Models = map[string]contract.ModelConfig{"default": {Provider: "p", Model: "m", BaseURL: ptr("http://x")}}
		}, []finding{{"unsupported_field", "models.default.base_url"}}},
		{"temperature not accepted", "test.v2", func(c *contract.FabricConfig) {
			c.Models = map[string]contract.ModelConfig{"default": {Provider: "p", Model: "m", Temperature: ptr(0.5)}}
		}, []finding{{"unsupported_field", "models.default.temperature"}}},
		{"instructions replace", "test.open", func(c *contract.FabricConfig) {
			c.Instructions = &contract.InstructionsConfig{System: &contract.InstructionConfig{Content: "be brief", Mode: "replace"}}
		}, nil},
		{"instructions append not allowed", "test.open", func(c *contract.FabricConfig) {
			c.Instructions = &contract.InstructionsConfig{System: &contract.InstructionConfig{Content: "be brief", Mode: "append"}}
		}, []finding{{"unsupported_instruction_mode", "instructions.system.mode"}}},
		{"instructions not accepted", "test.closed", func(c *contract.FabricConfig) {
			c.Instructions = &contract.InstructionsConfig{System: &contract.InstructionConfig{Content: "x", Mode: "replace"}}
		}, []finding{{"unsupported_field", "instructions.system"}}},
		{"max_turns not accepted", "test.closed", func(c *contract.FabricConfig) { c.Runtime.MaxTurns = ptr(uint32(3)) }, []finding{{"unsupported_field", "runtime.max_turns"}}},
		{"max_turns accepted", "test.open", func(c *contract.FabricConfig) { c.Runtime.MaxTurns = ptr(uint32(3)) }, nil},
		{"tool in both lists", "test.open", func(c *contract.FabricConfig) {
			c.Tools = &contract.ToolsConfig{Enabled: []string{"Bash", "Read"}, Blocked: []string{"Read"}}
		}, []finding{{"tool_conflict", "tools.blocked[0]"}}},
		{"tools accepted", "test.open", func(c *contract.FabricConfig) {
			c.Tools = &contract.ToolsConfig{Enabled: []string{"Bash"}, Blocked: []string{"WebFetch"}}
		}, nil},
		{"empty enabled disables all tools but still needs accept", "test.closed", func(c *contract.FabricConfig) {
			c.Tools = &contract.ToolsConfig{Enabled: []string{}}
		}, []finding{{"unsupported_field", "tools.enabled"}}},
		{"blocked not accepted", "test.closed", func(c *contract.FabricConfig) {
			c.Tools = &contract.ToolsConfig{Blocked: []string{"x"}}
		}, []finding{{"unsupported_field", "tools.blocked"}}},
		{"v1alpha1 coarse tools", "test.legacy", func(c *contract.FabricConfig) {
			c.Tools = &contract.ToolsConfig{Blocked: []string{"x"}}
		}, nil},
		{"tool definition valid", "test.open", func(c *contract.FabricConfig) {
			c.Tools = &contract.ToolsConfig{Definitions: map[string]contract.ToolDefinition{"t": {Kind: "module", Ref: "a.js"}}}
		}, nil},
		{"tool definition invalid", "test.open", func(c *contract.FabricConfig) {
			c.Tools = &contract.ToolsConfig{Definitions: map[string]contract.ToolDefinition{"t": {Kind: "python", Ref: "a"}}}
		}, []finding{{"invalid_tool_definition", "tools.definitions.t.kind"}}},
		{"mcp harness native", "test.open", func(c *contract.FabricConfig) {
			c.MCP = &contract.MCPConfig{Servers: map[string]contract.MCPServerConfig{"gh": {Transport: "stdio", URL: "gh-mcp", Exposure: "harness_native"}}}
		}, nil},
		{"mcp fabric managed", "test.open", func(c *contract.FabricConfig) {
			c.MCP = &contract.MCPConfig{Servers: map[string]contract.MCPServerConfig{"gh": {Transport: "stdio", URL: "gh-mcp", Exposure: "fabric_managed"}}}
		}, []finding{{"unsupported_mcp_exposure", "mcp.servers.gh.exposure"}}},
		{"mcp not accepted", "test.closed", func(c *contract.FabricConfig) {
			c.MCP = &contract.MCPConfig{Servers: map[string]contract.MCPServerConfig{"gh": {Transport: "stdio", URL: "gh-mcp", Exposure: "harness_native"}}}
		}, []finding{{"unsupported_field", "mcp.servers"}}},
		{"mcp service account not accepted", "test.open", func(c *contract.FabricConfig) {
			c.MCP = &contract.MCPConfig{Servers: map[string]contract.MCPServerConfig{"gh": {Transport: "streamable-http", URL: "http://x", Exposure: "harness_native", Authentication: &contract.MCPAuthentication{Type: "service_account"}}}}
		}, []finding{{"unsupported_field", "mcp.servers.gh.authentication"}}},
		{"skills not accepted", "test.closed", func(c *contract.FabricConfig) {
			c.Skills = &contract.SkillsConfig{Paths: []string{"/s"}}
		}, []finding{{"unsupported_field", "skills.paths"}}},
		{"workflow without schema", "test.closed", func(c *contract.FabricConfig) {
			c.Workflow = &contract.WorkflowConfig{TargetID: "w"}
		}, []finding{{"unsupported_field", "workflow"}}},
		{"workflow with schema", "test.open", func(c *contract.FabricConfig) {
			c.Workflow = &contract.WorkflowConfig{TargetID: "w"}
		}, nil},
		{"relay telemetry supported", "test.open", func(c *contract.FabricConfig) {
			c.Telemetry = &contract.TelemetryConfig{Providers: map[string]contract.TelemetryProviderConfig{"relay": {}}}
		}, nil},
		{"native telemetry unsupported", "test.open", func(c *contract.FabricConfig) {
			c.Telemetry = &contract.TelemetryConfig{Providers: map[string]contract.TelemetryProviderConfig{"native": {}}}
		}, []finding{{"unsupported_telemetry_provider", "telemetry.providers.native"}}},
		{"unknown telemetry provider", "test.open", func(c *contract.FabricConfig) {
			c.Telemetry = &contract.TelemetryConfig{Providers: map[string]contract.TelemetryProviderConfig{"datadog": {}}}
		}, []finding{{"unknown_telemetry_provider", "telemetry.providers.datadog"}}},
		{"http adapter kind", "test.http", func(*contract.FabricConfig) {}, []finding{{"unsupported_adapter_kind", "harness.adapter_id"}}},
		{"limit over cap", "test.closed", func(c *contract.FabricConfig) {
			c.Runtime.Limits = &contract.LifecycleLimits{StartSeconds: 600}
		}, []finding{{"limit_exceeds_cap", "runtime.limits.start_seconds"}}},
		{"limit under cap", "test.closed", func(c *contract.FabricConfig) {
			c.Runtime.Limits = &contract.LifecycleLimits{StartSeconds: 30, StopSeconds: 5}
		}, nil},
		{"timeout over backstop", "test.closed", func(c *contract.FabricConfig) { c.Runtime.TimeoutSeconds = ptr(7200.0) }, []finding{{"limit_exceeds_cap", "runtime.timeout_seconds"}}},
		{"non-local environment", "test.closed", func(c *contract.FabricConfig) {
			c.Environment = &contract.EnvironmentConfig{Provider: "k8s"}
		}, []finding{{"unsupported_environment_provider", "environment.provider"}}},
		{"several findings at once", "test.closed", func(c *contract.FabricConfig) {
			c.Runtime.MaxTurns = ptr(uint32(2))
			c.Skills = &contract.SkillsConfig{Paths: []string{"/s"}}
		}, []finding{{"unsupported_field", "runtime.max_turns"}, {"unsupported_field", "skills.paths"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := baseConfig(tt.adapter)
			tt.mutate(&cfg)
			p, err := Resolve(cfg, Options{BaseDir: "/base", Catalog: cat})
			if tt.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if p == nil || p.AdapterDescriptor == nil {
					t.Fatal("plan has no descriptor")
				}
				return
			}
			if err == nil {
				t.Fatalf("plan succeeded, want %v", tt.want)
			}
			got := findings(err)
			if len(got) != len(tt.want) {
				t.Fatalf("findings = %v, want %v (err: %v)", got, tt.want, err)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("finding %d = %v, want %v (err: %v)", i, got[i], tt.want[i], err)
				}
			}
		})
	}
}

func TestCapabilityErrorNamesAdapterAndField(t *testing.T) {
	cfg := baseConfig("test.closed")
	cfg.Runtime.MaxTurns = ptr(uint32(2))
	_, err := Resolve(cfg, Options{Catalog: testCatalog(t)})
	var ke *contract.CapabilityError
	if !errors.As(err, &ke) {
		t.Fatalf("want CapabilityError, got %T %v", err, err)
	}
	if ke.Stage != contract.StagePlan || !strings.Contains(ke.Error(), "test.closed") || !strings.Contains(ke.Error(), "runtime.max_turns") {
		t.Fatalf("error does not name adapter and field: %v", ke)
	}
}

func TestSettingsPreservedWithoutDefaults(t *testing.T) {
	cat, err := catalog.Discover(catalog.Options{Bundled: []catalog.Bundled{{Name: "d.json", Data: testDescriptor("test.defaults", nil,
		`{"settings_schema":{"type":"object","properties":{"a":{"type":"integer","default":7},"b":{"type":"string"}}}}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig("test.defaults")
	cfg.Harness.Settings = map[string]any{"b": "x"}
	p, err := Resolve(cfg, Options{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Config.Harness.Settings) != 1 || p.Config.Harness.Settings["b"] != "x" {
		t.Fatalf("settings changed by planning: %v", p.Config.Harness.Settings)
	}
}

func TestPlanContents(t *testing.T) {
	cfg := baseConfig("test.open")
	cfg.Models = map[string]contract.ModelConfig{"default": {Provider: "openai", Model: "m", APIKeyEnv: ptr("KEY")}, "fast": {Provider: "openai", Model: "f", APIKeyEnv: ptr("KEY")}}
	cfg.Tools = &contract.ToolsConfig{Enabled: []string{"Bash"}, Blocked: []string{"WebFetch"}}
	cfg.Skills = &contract.SkillsConfig{Paths: []string{"/skills/a"}}
	cfg.MCP = &contract.MCPConfig{Servers: map[string]contract.MCPServerConfig{"gh": {Transport: "stdio", URL: "gh", Exposure: "harness_native"}}}
	cfg.Telemetry = &contract.TelemetryConfig{Providers: map[string]contract.TelemetryProviderConfig{"relay": {}}}
	cfg.Relay = map[string]any{"project": "p", "output_dir": "/out"}
	p, err := Resolve(cfg, Options{BaseDir: "/base", Catalog: testCatalog(t)})
	if err != nil {
		t.Fatal(err)
	}
	if p.ModelRole != "default" || p.AgentName != "agent" || p.BaseDir != "/base" {
		t.Errorf("identity: role=%q name=%q base=%q", p.ModelRole, p.AgentName, p.BaseDir)
	}
	if p.HostProtocol != contract.HostProtocolV1 {
		t.Errorf("host protocol %q", p.HostProtocol)
	}
	kinds := map[string]int{}
	for _, r := range p.CapabilityPlan.Routes {
		kinds[r.Kind]++
		if r.Target != contract.TargetHarnessNative || r.Reason == "" {
			t.Errorf("route %+v", r)
		}
	}
	if kinds["tools"] != 2 || kinds["skills"] != 1 || kinds["mcp"] != 1 {
		t.Errorf("routes by kind: %v", kinds)
	}
	if !p.TelemetryPlan.RelayEnabled || *p.TelemetryPlan.RelayProject != "p" || p.TelemetryPlan.AdapterOutputs[0] != "atif" {
		t.Errorf("telemetry plan: %+v", p.TelemetryPlan)
	}
	if p.EnvironmentPlan.ControlLocation != contract.ControlInEnv || p.EnvironmentPlan.Ownership != contract.OwnershipCaller {
		t.Errorf("environment plan: %+v", p.EnvironmentPlan)
	}
	if p.Limits.StartSeconds != MaxStartSeconds || p.Limits.InvokeSeconds != MaxInvokeSeconds {
		t.Errorf("limits: %+v", p.Limits)
	}
}

func TestCapabilitiesIntersectWithHostProtocol(t *testing.T) {
	p, err := Resolve(baseConfig("test.v2"), Options{Catalog: testCatalog(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Capabilities.Streaming || !p.Capabilities.Cancellation || !p.Capabilities.Service {
		t.Errorf("v2 capabilities: %+v", p.Capabilities)
	}
	if p.HostProtocol != contract.HostProtocolV2 {
		t.Errorf("protocol %q", p.HostProtocol)
	}
}

func TestAgentConfigProjectionValidatesSouthbound(t *testing.T) {
	cfg := baseConfig("test.open")
	cfg.Harness.Settings = map[string]any{"flag": true}
	cfg.Models = map[string]contract.ModelConfig{"default": {Provider: "openai", Model: "m", APIKeyEnv: ptr("KEY"), BaseURL: ptr("http://127.0.0.1:1/v1"), TopP: ptr(0.5)}}
	cfg.Instructions = &contract.InstructionsConfig{System: &contract.InstructionConfig{Content: "be brief"}}
	cfg.Tools = &contract.ToolsConfig{Enabled: []string{}, Blocked: []string{"x"}}
	cfg.Skills = &contract.SkillsConfig{Paths: []string{"/s"}}
	cfg.MCP = &contract.MCPConfig{Servers: map[string]contract.MCPServerConfig{"gh": {Transport: "stdio", URL: "gh", Exposure: "harness_native", AllowedTools: []string{}}}}
	p, err := Resolve(cfg, Options{Catalog: testCatalog(t)})
	if err != nil {
		t.Fatal(err)
	}
	ac := AgentConfig(p)
	b, err := json.Marshal(ac)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Validate("agent-config", b); err != nil {
		t.Fatalf("projection does not validate: %v\n%s", err, b)
	}
	s := string(b)
	for _, want := range []string{`"mode":"replace"`, `"enabled":[]`, `"allowed_tools":[]`, `"paths":["/s"]`, `"api_key_env":"KEY"`} {
		if !strings.Contains(s, want) {
			t.Errorf("projection lacks %s: %s", want, s)
		}
	}
	if strings.Contains(s, "top_p") || strings.Contains(s, "exposure") {
		t.Errorf("northbound-only fields leaked southbound: %s", s)
	}
}
