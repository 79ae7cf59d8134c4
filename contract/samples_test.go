package contract_test

import (
	"encoding/json"

	"github.com/fabric-runtime/fabric/contract"
)

func ptr[T any](v T) *T { return &v }

// Realistic documents, every block populated, shared by the schema, round
// trip and upstream compatibility tests.

func sampleFabricConfig() contract.FabricConfig {
	return contract.FabricConfig{
		SchemaVersion: contract.ConfigSchemaVersion,
		Metadata:      contract.MetadataConfig{Name: "research-agent", Description: ptr("Answers questions about a repository.")},
		Runtime: contract.RuntimeConfig{
			Artifacts:      ptr("artifacts"),
			InputSchema:    contract.SchemaText,
			OutputSchema:   contract.SchemaText,
			MaxTurns:       ptr[uint32](12),
			TimeoutSeconds: ptr(300.0),
			Limits:         &contract.LifecycleLimits{StartSeconds: 20, StopSeconds: 5, ExitGraceSeconds: 2, InvokeSeconds: 600},
		},
		Harness: &contract.HarnessConfig{
			AdapterID:  "nvidia.fabric.pi",
			Resolution: ptr(contract.ResolutionNPM),
			Settings:   map[string]any{"extensions": []any{"todo"}},
		},
		Models: map[string]contract.ModelConfig{
			"default": {
				Provider: "openai", Model: "gpt-4.1", APIKeyEnv: ptr("OPENAI_API_KEY"),
				BaseURL: ptr("http://127.0.0.1:8080/v1"), MaxTokens: ptr[uint64](4096),
				Temperature: ptr(0.2), TopP: ptr(0.9), Settings: map[string]any{"reasoning": "low"},
			},
			"summarizer": {Provider: "anthropic", Model: "claude-sonnet-4", APIKeyEnv: ptr("ANTHROPIC_API_KEY")},
		},
		Instructions: &contract.InstructionsConfig{System: &contract.InstructionConfig{Content: "Be brief.", Mode: contract.InstructionAppend}},
		Tools: &contract.ToolsConfig{
			Enabled: []string{"read", "bash"},
			Blocked: []string{"write"},
			Definitions: map[string]contract.ToolDefinition{
				"search": {Kind: "module", Ref: "./tools/search.js#search", Settings: map[string]any{"limit": 5}},
			},
		},
		MCP: &contract.MCPConfig{Servers: map[string]contract.MCPServerConfig{
			"docs": {
				Transport: contract.MCPTransportStreamableHTTP, URL: "https://mcp.example.com/mcp",
				Exposure: contract.MCPExposureHarnessNative, CustomHeaders: map[string]string{"X-Team": "fabric"},
				AllowedTools: []string{"search_docs"}, BlockedTools: []string{"delete_doc"},
				Authentication: &contract.MCPAuthentication{
					Type: "oauth2", ClientID: ptr("fabric-cli"), Scopes: []string{"docs.read"},
					EnableDynamicRegistration: ptr(false), AuthorizationTimeoutSeconds: ptr[uint64](120),
					TokenEndpointAuthMethod: ptr("none"),
				},
			},
			"fs": {
				Transport: contract.MCPTransportStdio, URL: "mcp-server-filesystem",
				Exposure: contract.MCPExposureFabricManaged, Args: []string{"/workspace"}, Env: map[string]string{"LOG": "1"},
			},
		}},
		Skills:    &contract.SkillsConfig{Paths: []string{"skills/review"}},
		Relay:     map[string]any{"project": "demo"},
		Telemetry: &contract.TelemetryConfig{Providers: map[string]contract.TelemetryProviderConfig{"relay": {Config: map[string]any{"output_dir": "relay"}}}},
		Environment: &contract.EnvironmentConfig{
			Provider: contract.EnvironmentLocal, ControlLocation: contract.ControlInEnv, Ownership: contract.OwnershipCaller,
			Workspace: ptr("/workspace"), Artifacts: ptr("/workspace/artifacts"), Env: map[string]string{"TZ": "UTC"},
			Connection: map[string]any{"host": "localhost"}, Settings: map[string]any{"keep": true}, Metadata: map[string]any{"owner": "ci"},
		},
		Discovery: &contract.DiscoveryConfig{LocalPaths: []string{"./adapters"}},
		Workflow:  &contract.WorkflowConfig{TargetID: "triage", Settings: map[string]any{"depth": 2}},
		Extra:     map[string]json.RawMessage{"x-team-notes": json.RawMessage(`{"owner":"fabric"}`)},
	}
}

func sampleDescriptor() contract.AdapterDescriptor {
	return contract.AdapterDescriptor{
		ContractVersion: contract.DescriptorV1Alpha2,
		AdapterID:       "nvidia.fabric.pi",
		AdapterKind:     contract.AdapterKindProcess,
		Runner:          map[string]any{"command": "node", "script": "dist/cli.js", "protocol": contract.HostProtocolV1},
		TargetTypes:     []string{"workflow"},
		Requirements:    contract.AdapterRequirements{Binaries: []string{"node"}, Env: []string{"OPENAI_API_KEY"}, VersionArgs: map[string][]string{"node": {"--version"}}},
		Config: contract.AdapterConfigSupport{
			Input:                  contract.ConfigInputAgentConfig,
			Accepts:                []string{contract.AcceptModels, contract.AcceptInstructionsSystem, contract.AcceptToolsEnabled},
			Generates:              []string{"settings.json"},
			SystemInstructionModes: []contract.InstructionMode{contract.InstructionReplace, contract.InstructionAppend},
		},
		Capabilities:         contract.RuntimeCapabilities{Cancellation: true, Metadata: map[string]any{"resumable": false}},
		Telemetry:            contract.AdapterTelemetrySupport{Providers: map[string]contract.AdapterTelemetryProvider{"relay": {Outputs: []string{"atif"}, IntegrationModes: []string{"hooks"}}}},
		SettingsSchema:       json.RawMessage(`{"type":"object","additionalProperties":false}`),
		ModelSchema:          json.RawMessage(`{"type":"object"}`),
		ToolDefinitionSchema: json.RawMessage(`{"type":"object","required":["kind","ref"]}`),
		WorkflowSchema:       json.RawMessage(`{"type":"object"}`),
		ExtensionSchemas:     map[string]json.RawMessage{"run_result": json.RawMessage(`{"type":"object"}`)},
		Limits:               &contract.DescriptorLimits{StartSeconds: 15},
		Doctor:               []contract.DoctorProbe{{Name: "node", Command: "node", Args: []string{"--version"}, Version: true}},
		Interfaces: []contract.InterfaceDeclaration{
			{Name: "dashboard", Kind: contract.InterfaceHTTP, Browser: true, PublicOrigins: true, Credential: contract.CredentialBearer,
				Lifecycles: []string{contract.InterfaceLifecycleRuntime}, HealthLevels: []string{contract.LevelLive, contract.LevelActive, contract.LevelReady},
				Settings: map[string]any{"theme": map[string]any{"enum": []any{"light", "dark"}}}},
			{Name: "terminal", Kind: contract.InterfaceTerminal, Lifecycles: []string{contract.InterfaceLifecycleRuntime}},
		},
	}
}

func sampleEnvironmentHandle() contract.EnvironmentHandle {
	return contract.EnvironmentHandle{
		EnvironmentID: "environment-1", Provider: contract.EnvironmentLocal,
		ControlLocation: contract.ControlInEnv, Ownership: contract.OwnershipFabric,
		Workspace: ptr("/workspace"), Artifacts: ptr("/workspace/artifacts"),
		Env: map[string]string{"HOME": "/workspace"}, Connection: map[string]any{"socket": "/run/x.sock"},
		Metadata: map[string]any{"pid": 42},
	}
}

func sampleArtifactManifest() contract.ArtifactManifest {
	return contract.ArtifactManifest{
		Root: ptr("/workspace/artifacts"),
		Artifacts: []contract.ArtifactRef{
			{Name: "report", Kind: "file", Path: "out/report.md", MediaType: ptr("text/markdown"), Metadata: map[string]any{"bytes": 120}},
			{Name: "trace", Kind: "atif", Path: "relay/trace.json"},
		},
	}
}

func sampleEvents() []contract.FabricEvent {
	return []contract.FabricEvent{
		{EventID: "event-1", TimestampMillis: 1767225600000, Kind: contract.EventInvocationStart, Message: "invocation started", Metadata: map[string]any{"invocation_id": "invocation-1"}},
		{EventID: "event-2", TimestampMillis: 1767225601000, Kind: contract.EventInvocationEnd, Message: "invocation ended"},
	}
}

func sampleRunPlan() contract.RunPlan {
	cfg := sampleFabricConfig()
	mcp := map[string]contract.MCPServerConfig{"docs": cfg.MCP.Servers["docs"]}
	return contract.RunPlan{
		AgentName: "research-agent", BaseDir: "/home/me/agent", Config: cfg,
		Capabilities: contract.RuntimeCapabilities{Cancellation: true},
		AdapterDescriptor: &contract.ResolvedAdapterDescriptor{
			Descriptor: sampleDescriptor(), Path: "/opt/fabric/pi.fabric-adapter.json", Root: "/opt/fabric", Source: contract.SourceInstalled,
		},
		CapabilityPlan: contract.CapabilityPlan{
			Routes: []contract.CapabilityRoute{
				{Kind: contract.RouteMCP, Name: "docs", Target: contract.TargetHarnessNative, Reason: "adapter accepts mcp"},
				{Kind: contract.RouteTools, Name: "write", Target: contract.TargetHarnessNative, Reason: "adapter accepts tools.blocked"},
			},
			Native:      contract.CapabilityTargetPlan{MCPServers: mcp, SkillPaths: []string{"/home/me/agent/skills/review"}, ToolsConfigured: true},
			Managed:     contract.CapabilityTargetPlan{MCPServers: map[string]contract.MCPServerConfig{}, SkillPaths: []string{}},
			Unsupported: contract.CapabilityTargetPlan{MCPServers: map[string]contract.MCPServerConfig{}, SkillPaths: []string{}},
			MCPServers:  mcp, SkillPaths: []string{"/home/me/agent/skills/review"},
			Tools:           contract.ToolsPlan{Enabled: []string{"read", "bash"}, Blocked: []string{"write"}},
			ToolsConfigured: true,
		},
		EnvironmentPlan: cfg.Environment,
		Resolution:      ptr(contract.ResolutionNPM),
		TelemetryPlan: &contract.TelemetryPlan{
			Providers: []string{contract.TelemetryRelay}, RelayEnabled: true, RelayConfig: map[string]any{"project": "demo"},
			RelayOutputDir: ptr("/home/me/agent/relay"), RelayProject: ptr("demo"), AdapterOutputs: []string{"atif"},
		},
		ModelRole: "default", HostProtocol: contract.HostProtocolV1,
		Limits:      &contract.LifecycleLimits{StartSeconds: 15},
		Diagnostics: []contract.Diagnostic{{Severity: contract.SeverityWarning, Code: "unknown_key", Path: "x-team-notes", Message: "unknown top-level key"}},
	}
}

func sampleRunResult(status string) contract.RunResult {
	r := contract.RunResult{
		AgentName: "research-agent", Harness: "pi", AdapterKind: contract.AdapterKindProcess, AdapterID: "nvidia.fabric.pi",
		RuntimeID: "runtime-1", InvocationID: "invocation-1", RequestID: "request-1",
		Status: status, Output: "The answer is 42.", Artifacts: sampleArtifactManifest(),
		Telemetry: &contract.TelemetryRef{RelayEnabled: true, Metadata: map[string]any{"trace": "relay/trace.json"}},
		Events:    sampleEvents(),
		Metadata:  map[string]any{"adapter_runner": "persistent_local_host", "host_pid": 4242},
		Usage:     &contract.RunUsage{InputTokens: ptr[uint64](1200), OutputTokens: ptr[uint64](80), TotalTokens: ptr[uint64](1280), CostUSD: ptr(0.0031)},
	}
	if status == contract.StatusFailed {
		r.Output = nil
		r.Error = &contract.ErrorInfo{Stage: contract.StageInvoke, Code: "adapter_failed", Message: "model endpoint returned 500", Retryable: true, Metadata: map[string]any{"status": 500}}
	}
	return r
}

func sampleAgentConfig() contract.AgentConfig {
	return contract.AgentConfig{
		Harness: &contract.AgentHarnessConfig{Settings: map[string]any{"extensions": []any{"todo"}}, Extensions: map[string]any{"x": 1}},
		Models: map[string]contract.AgentModel{
			"default": {
				Provider: "openai", Model: "gpt-4.1", APIKeyEnv: ptr("OPENAI_API_KEY"), BaseURL: ptr("http://127.0.0.1:8080/v1"),
				Temperature: ptr(0.2), Settings: map[string]any{"max_tokens": 4096, "top_p": 0.9}, Extensions: map[string]any{"cache": true},
			},
			"summarizer": {Provider: "anthropic", Model: "claude-sonnet-4", APIKeyEnv: ptr("ANTHROPIC_API_KEY")},
		},
		Instructions: &contract.AgentInstructionsConfig{
			System:     &contract.AgentInstruction{Content: "Be brief.", Mode: contract.InstructionAppend, Extensions: map[string]any{"source": "config"}},
			Extensions: map[string]any{},
		},
		Runtime: &contract.AgentRuntimeConfig{MaxTurns: ptr[uint32](12), Extensions: map[string]any{"checkpoint": false}},
		Tools: &contract.AgentToolsConfig{
			Enabled: []string{"read", "bash"},
			Blocked: []string{"write"},
			Definitions: map[string]contract.AgentToolDefinition{
				"search": {Kind: "module", Ref: "./tools/search.js#search", Settings: map[string]any{"limit": 5}, Extensions: map[string]any{"timeout": 10}},
			},
			Extensions: map[string]any{"approval": "never"},
		},
		MCP: &contract.AgentMCPConfig{
			Servers: map[string]contract.AgentMCPServer{
				"docs": {
					Transport: contract.MCPTransportStreamableHTTP, URL: "https://mcp.example.com/mcp",
					CustomHeaders: map[string]string{"X-Team": "fabric"},
					AllowedTools:  []string{"search_docs"}, BlockedTools: []string{"delete_doc"},
					Authentication: &contract.MCPAuthentication{
						Type: "oauth2", ClientID: ptr("fabric-cli"), ClientName: ptr("Fabric"), ClientSecretEnv: ptr("DOCS_SECRET"),
						RedirectURI: ptr("http://127.0.0.1:7777/callback"), Scopes: []string{"docs.read"},
						EnableDynamicRegistration: ptr(true), AuthorizationTimeoutSeconds: ptr[uint64](120),
						TokenEndpointAuthMethod: ptr("client_secret_post"),
					},
					Extensions: map[string]any{"lazy": true},
				},
				"ci": {
					Transport: contract.MCPTransportSSE, URL: "https://ci.example.com/sse",
					AllowedTools: []string{}, // expose none
					Authentication: &contract.MCPAuthentication{
						Type: "service_account", ClientID: ptr("fabric-bot"), ClientSecretEnv: ptr("CI_SECRET"),
						TokenURL: ptr("https://auth.example.com/token"), Scopes: []string{"ci.read"},
						TokenCacheBufferSeconds: ptr[uint64](30), TokenEndpointAuthMethod: ptr("client_secret_basic"),
					},
				},
				"fs": {Transport: contract.MCPTransportStdio, URL: "mcp-server-filesystem", Args: []string{"/workspace"}, Env: map[string]string{"LOG": "1"}},
			},
			Extensions: map[string]any{"startup_timeout": 30},
		},
		Skills:     &contract.AgentSkillConfig{Paths: []string{"/workspace/skills/review"}, Extensions: map[string]any{}},
		Workflow:   &contract.AgentWorkflowConfig{Entrypoint: contract.AgentWorkflowEntrypoint{Kind: "module", Ref: "./flows/triage.js#run", Extensions: map[string]any{"v": 2}}, Settings: map[string]any{"depth": 2}, Extensions: map[string]any{}},
		Extensions: map[string]any{"profile": "ci"},
	}
}

func sampleRuntimeContext() contract.RuntimeContext {
	return contract.RuntimeContext{
		RuntimeID: "runtime-1", InvocationID: "invocation-1", RequestID: "request-1",
		Environment: sampleEnvironmentHandle(),
		Artifacts:   sampleArtifactManifest(),
		Telemetry: &contract.RuntimeTelemetryContext{
			RelayEnabled: true, ConfigPath: ptr("/workspace/.fabric/relay.json"),
			Env: map[string]string{"RELAY_PROJECT": "demo"}, Metadata: map[string]any{"session": "s-1"},
		},
	}
}

func sampleAgentRunRequest() contract.AgentRunRequest {
	return contract.AgentRunRequest{
		Input:      "What does this repository do?",
		Context:    map[string]any{"task_id": "task-7", "rollout": map[string]any{"n": 1}},
		Extensions: map[string]any{"stream": false},
	}
}

func sampleAgentRunResult(status string) contract.AgentRunResult {
	r := contract.AgentRunResult{
		Status: status,
		Output: map[string]any{"text": "The answer is 42."},
		Usage:  &contract.RunUsage{InputTokens: ptr[uint64](1200), OutputTokens: ptr[uint64](80), TotalTokens: ptr[uint64](1280), CostUSD: ptr(0.0031), Extensions: map[string]any{"cached_tokens": 300}},
		Artifacts: []contract.AgentArtifact{
			{Name: "report", Kind: "file", Path: "out/report.md", MediaType: ptr("text/markdown"), Extensions: map[string]any{"bytes": 120}},
			{Name: "trace", Kind: "atif", Path: "relay/trace.json"},
		},
		Extensions: map[string]any{"session_id": "pi-123"},
	}
	switch status {
	case contract.StatusFailed:
		r.Output = nil
		r.Error = &contract.AgentRunError{Code: "model_error", Message: "model endpoint returned 500", Retryable: true, Extensions: map[string]any{"status": 500}}
	case contract.StatusCancelled:
		r.Output = "partial answer"
		r.Artifacts = nil
	}
	return r
}

func sampleRuntimeHandle() contract.RuntimeHandle {
	return contract.RuntimeHandle{
		RuntimeID: "runtime-1", RuntimeBinding: "fabric-runtime-binding-0123456789abcdef",
		AgentName: "research-agent", Harness: "pi", AdapterKind: contract.AdapterKindProcess, AdapterID: "nvidia.fabric.pi",
		Environment: sampleEnvironmentHandle(), Status: "active",
		Interfaces: []contract.InterfaceInfo{
			{Name: "dashboard", Kind: contract.InterfaceHTTP, Browser: true, Address: "127.0.0.1", Port: 3000, Path: "/",
				URL: "http://127.0.0.1:3000/", Credential: contract.CredentialBearer,
				CredentialFile: "/sandbox/artifacts/.fabric/pi/runtimes/runtime-1/interfaces/dashboard.token"},
			{Name: "terminal", Kind: contract.InterfaceTerminal,
				Argv:       []string{"/sandbox/artifacts/.fabric/pi/runtimes/runtime-1/interfaces/terminal"},
				MarkerFile: "/sandbox/artifacts/.fabric/pi/runtimes/runtime-1/interfaces/terminal.running"},
		},
	}
}

// samples returns at least one realistic document per schema name.
func samples() map[string][]any {
	return map[string][]any{
		"agent": {
			sampleFabricConfig(),
			contract.FabricConfig{SchemaVersion: contract.ConfigSchemaVersion, Metadata: contract.MetadataConfig{Name: "minimal"}},
			contract.FabricConfig{
				SchemaVersion: contract.ConfigSchemaVersion, Metadata: contract.MetadataConfig{Name: "sa"},
				Tools: &contract.ToolsConfig{Enabled: []string{}},
				MCP: &contract.MCPConfig{Servers: map[string]contract.MCPServerConfig{"ci": {
					Transport: contract.MCPTransportSSE, URL: "https://ci.example.com/sse", Exposure: contract.MCPExposureHarnessNative,
					AllowedTools:   []string{},
					Authentication: &contract.MCPAuthentication{Type: "service_account", ClientID: ptr("bot"), ClientSecretEnv: ptr("SECRET"), TokenURL: ptr("https://auth.example.com/token")},
				}}},
			},
		},
		"adapter-descriptor": {sampleDescriptor(), contract.AdapterDescriptor{ContractVersion: contract.DescriptorV1Alpha2, AdapterID: "x.minimal", AdapterKind: contract.AdapterKindProcess}},
		"run-plan":           {sampleRunPlan()},
		"run-request": {
			contract.RunRequest{RequestID: "request-1", Input: "hello", Context: map[string]any{"task_id": "t"}, Overrides: map[string]any{"max_turns": 3}},
			contract.RunRequest{RequestID: "request-2", Input: map[string]any{"messages": []any{"hi"}}},
		},
		"run-result": {
			sampleRunResult(contract.StatusSucceeded), sampleRunResult(contract.StatusFailed), sampleRunResult(contract.StatusCancelled),
			contract.RunResult{AgentName: "a", Harness: "h", AdapterKind: contract.AdapterKindProcess, RuntimeID: "runtime-1", InvocationID: "invocation-1", RequestID: "request-1", Status: contract.StatusSucceeded},
		},
		"fabric-event":      {sampleEvents()[0], sampleEvents()[1]},
		"error-info":        {*sampleRunResult(contract.StatusFailed).Error, contract.ErrorInfo{Stage: contract.StageConfig, Code: "invalid_config", Message: "bad"}},
		"artifact-manifest": {sampleArtifactManifest(), contract.ArtifactManifest{}},
		"runtime-handle":    {sampleRuntimeHandle()},
		"invocation-handle": {contract.InvocationHandle{InvocationID: "invocation-1", RequestID: "request-1", RuntimeID: "runtime-1"}},
		"environment-handle": {
			sampleEnvironmentHandle(),
			contract.EnvironmentHandle{EnvironmentID: "environment-2", Provider: "docker", ControlLocation: contract.ControlExternal, Ownership: contract.OwnershipCaller},
		},
		"service-handle": {contract.ServiceHandle{
			ServiceID: "service-1", ServiceBinding: "fabric-service-binding-1", AdapterID: "nvidia.fabric.hermes", ServiceType: "gateway",
			Ownership: contract.OwnershipFabric, Connection: map[string]any{"url": "http://127.0.0.1:9000"}, Metadata: map[string]any{"version": "1.2.0"},
		}},
		"service-reference": {contract.ServiceReference{AdapterID: "nvidia.fabric.hermes", ServiceType: "gateway", Connection: map[string]any{"url": "http://127.0.0.1:9000", "token_env": "HERMES_TOKEN"}}},
		"runtime-stop-result": {
			contract.RuntimeStopResult{RuntimeID: "runtime-1", Status: "stopped", Events: sampleEvents()},
			contract.RuntimeStopResult{RuntimeID: "runtime-1", Status: "failed", HostCrashed: true, Error: &contract.ErrorInfo{Stage: contract.StageStop, Code: "host_crashed", Message: "host exited with status 1"}},
		},
		"agent-config":      {sampleAgentConfig(), contract.AgentConfig{}},
		"runtime-context":   {sampleRuntimeContext()},
		"agent-run-request": {sampleAgentRunRequest(), contract.AgentRunRequest{Input: nil}},
		"agent-run-result": {
			sampleAgentRunResult(contract.StatusSucceeded), sampleAgentRunResult(contract.StatusFailed), sampleAgentRunResult(contract.StatusCancelled),
		},
		"check-request": {contract.CheckRequest{SchemaVersion: contract.CheckSchemaVersion, Scope: contract.ScopeRuntime, TimeoutSeconds: 2.5, RuntimeID: "runtime-1", Level: contract.LevelReady}},
		"check-report": {contract.CheckReport{
			SchemaVersion: contract.CheckSchemaVersion, Scope: contract.ScopeRuntime, RuntimeID: ptr("runtime-1"),
			RequestedLevel: ptr(contract.LevelReady), Outcome: contract.OutcomeFailed, ReasonCode: ptr(contract.ReasonProbeTimeout),
			Observations: []contract.CheckObservation{
				{Stage: "process", Level: contract.LevelLive, Outcome: contract.OutcomePassed, Source: "fabric", ObservedAtMillis: 1767225600000},
				{Stage: "adapter_health", Level: contract.LevelReady, Outcome: contract.OutcomeFailed, ReasonCode: ptr(contract.ReasonProbeTimeout), Source: "adapter", Message: "no answer in 2s"},
			},
			Runtime:         &contract.RuntimeObservation{State: "active", Activity: contract.ActivityBusy},
			Server:          &contract.ServerObservation{State: "running"},
			StartedAtMillis: 1767225600000, FinishedAtMillis: 1767225602000, ElapsedMillis: 2000,
			Metadata: map[string]any{"deadline_ms": 2500},
		}},
		"deployment":              sampleDeployments(),
		"batch":                   sampleBatchSpecs(),
		"batch-trial":             sampleBatchTrials(),
		"batch-summary":           sampleBatchSummaries(),
		"support-catalog":         sampleSupportCatalogs(),
		"trust":                   sampleTrusts(),
		"qualification-predicate": sampleQualificationStatements(),
		"runtime-package":         samplePackages(),
		"doctor-report": {contract.DoctorReport{
			AgentName: "research-agent", AdapterID: "nvidia.fabric.pi", Status: contract.DoctorWarn,
			Checks: []contract.DoctorCheck{
				{Name: "binary:node", Status: contract.DoctorPass, Message: "v22.3.0", Metadata: map[string]any{"path": "/usr/bin/node"}},
				{Name: "env:OPENAI_API_KEY", Status: contract.DoctorWarn, Message: "not set"},
			},
		}},
	}
}
