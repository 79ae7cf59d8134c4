package plan

import (
	"github.com/fabric-runtime/fabric/contract"
)

// AgentConfig projects a plan's config southbound: the adapter sees only the
// blocks it accepted (planning already failed on anything else), with
// resolved paths and no runtime identity. Fields the southbound contract
// does not carry (top_p, max_tokens, exposure) stay northbound.
func AgentConfig(p *contract.RunPlan) contract.AgentConfig {
	cfg := &p.Config
	var ac contract.AgentConfig
	if cfg.Harness != nil {
		ac.Harness = &contract.AgentHarnessConfig{Settings: cfg.Harness.Settings}
	}
	if len(cfg.Models) > 0 {
		ac.Models = make(map[string]contract.AgentModel, len(cfg.Models))
		for role, m := range cfg.Models {
			ac.Models[role] = contract.AgentModel{
				Provider: m.Provider, Model: m.Model, APIKeyEnv: m.APIKeyEnv,
				BaseURL: m.BaseURL, Temperature: m.Temperature, Settings: m.Settings,
			}
		}
	}
	if in := cfg.Instructions; in != nil && in.System != nil {
		mode := in.System.Mode
		if mode == "" {
			mode = contract.InstructionReplace
		}
		ac.Instructions = &contract.AgentInstructionsConfig{System: &contract.AgentInstruction{Content: in.System.Content, Mode: mode}}
	}
	if cfg.Runtime.MaxTurns != nil {
		ac.Runtime = &contract.AgentRuntimeConfig{MaxTurns: cfg.Runtime.MaxTurns}
	}
	if t := cfg.Tools; t != nil && (t.Enabled != nil || len(t.Blocked) > 0 || len(t.Definitions) > 0) {
		at := &contract.AgentToolsConfig{Enabled: t.Enabled, Blocked: t.Blocked}
		if len(t.Definitions) > 0 {
			at.Definitions = make(map[string]contract.AgentToolDefinition, len(t.Definitions))
			for name, d := range t.Definitions {
				at.Definitions[name] = contract.AgentToolDefinition{Kind: d.Kind, Ref: d.Ref, Settings: d.Settings}
			}
		}
		ac.Tools = at
	}
	if servers := p.CapabilityPlan.Native.MCPServers; len(servers) > 0 {
		am := &contract.AgentMCPConfig{Servers: make(map[string]contract.AgentMCPServer, len(servers))}
		for name, s := range servers {
			am.Servers[name] = contract.AgentMCPServer{
				Transport: s.Transport, URL: s.URL, Args: s.Args, Env: s.Env, CustomHeaders: s.CustomHeaders,
				AllowedTools: s.AllowedTools, BlockedTools: s.BlockedTools, Authentication: s.Authentication,
			}
		}
		ac.MCP = am
	}
	if paths := p.CapabilityPlan.Native.SkillPaths; len(paths) > 0 {
		ac.Skills = &contract.AgentSkillConfig{Paths: append([]string(nil), paths...)}
	}
	return ac
}
