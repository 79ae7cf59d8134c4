package plan

import (
	"fmt"
	"slices"

	"github.com/fabric-runtime/fabric/contract"
)

// capabilityPlan checks the tool policy, tool definitions, skills and MCP
// servers against the descriptor and routes each one. A capability the
// adapter cannot execute fails planning; nothing is dropped silently.
func (r *resolver) capabilityPlan() contract.CapabilityPlan {
	cp := contract.CapabilityPlan{
		Routes:      []contract.CapabilityRoute{},
		Native:      emptyTarget(),
		Managed:     emptyTarget(),
		Unsupported: emptyTarget(),
		MCPServers:  map[string]contract.MCPServerConfig{},
		SkillPaths:  []string{},
		Tools:       contract.ToolsPlan{Blocked: []string{}},
	}
	r.routeTools(&cp)
	r.routeSkills(&cp)
	r.routeMCP(&cp)
	return cp
}

func emptyTarget() contract.CapabilityTargetPlan {
	return contract.CapabilityTargetPlan{MCPServers: map[string]contract.MCPServerConfig{}, SkillPaths: []string{}}
}

func (r *resolver) routeTools(cp *contract.CapabilityPlan) {
	t := r.cfg.Tools
	if t == nil {
		return
	}
	for i, name := range t.Blocked {
		if slices.Contains(t.Enabled, name) {
			r.fail("tool_conflict", fmt.Sprintf("tools.blocked[%d]", i), fmt.Sprintf("tool %q is both enabled and blocked", name))
		}
	}
	if t.Enabled != nil {
		r.requireAccept(contract.AcceptToolsEnabled, "tools.enabled", contract.AcceptTools)
		cp.Tools.Enabled = append([]string{}, t.Enabled...)
		cp.ToolsConfigured = true
		for _, name := range t.Enabled {
			cp.Routes = append(cp.Routes, contract.CapabilityRoute{Kind: contract.RouteTools, Name: name, Target: contract.TargetHarnessNative, Reason: "enabled through the adapter's native tool selector"})
		}
	}
	if len(t.Blocked) > 0 {
		r.requireAccept(contract.AcceptToolsBlocked, "tools.blocked", contract.AcceptTools)
		cp.Tools.Blocked = append(cp.Tools.Blocked, t.Blocked...)
		cp.ToolsConfigured = true
		for _, name := range t.Blocked {
			cp.Routes = append(cp.Routes, contract.CapabilityRoute{Kind: contract.RouteTools, Name: name, Target: contract.TargetHarnessNative, Reason: "blocked by the adapter's native tool policy"})
		}
	}
	if len(t.Definitions) > 0 {
		r.requireAccept(contract.AcceptToolsDefinitions, "tools.definitions", contract.AcceptTools)
		if r.entry.ToolDefinition == nil {
			r.unsupported("unsupported_field", "tools.definitions", "the descriptor has no tool_definition_schema")
		} else {
			for _, name := range sortedKeys(t.Definitions) {
				for _, v := range r.entry.ToolDefinition.Validate(t.Definitions[name]) {
					r.schemaViolation("invalid_tool_definition", "tools.definitions."+name, "tool_definition_schema", v)
				}
				cp.Routes = append(cp.Routes, contract.CapabilityRoute{Kind: contract.RouteTools, Name: name, Target: contract.TargetHarnessNative, Reason: "tool definition constructed by the adapter"})
			}
		}
		cp.ToolsConfigured = true
	}
	cp.Native.ToolsConfigured = cp.ToolsConfigured
}

func (r *resolver) routeSkills(cp *contract.CapabilityPlan) {
	s := r.cfg.Skills
	if s == nil || len(s.Paths) == 0 {
		return
	}
	r.requireAccept(contract.AcceptSkills, "skills.paths")
	for _, p := range s.Paths {
		cp.SkillPaths = append(cp.SkillPaths, p)
		cp.Native.SkillPaths = append(cp.Native.SkillPaths, p)
		cp.Routes = append(cp.Routes, contract.CapabilityRoute{Kind: contract.RouteSkills, Name: p, Target: contract.TargetHarnessNative, Reason: "loaded by the harness's native skill support"})
	}
}

func (r *resolver) routeMCP(cp *contract.CapabilityPlan) {
	m := r.cfg.MCP
	if m == nil || len(m.Servers) == 0 {
		return
	}
	r.requireAccept(contract.AcceptMCP, "mcp.servers")
	for _, name := range sortedKeys(m.Servers) {
		srv := m.Servers[name]
		base := "mcp.servers." + name
		if srv.Exposure == contract.MCPExposureFabricManaged {
			r.unsupported("unsupported_mcp_exposure", base+".exposure", "fabric_managed MCP exposure is not implemented; use harness_native")
			cp.Unsupported.MCPServers[name] = srv
			cp.Routes = append(cp.Routes, contract.CapabilityRoute{Kind: contract.RouteMCP, Name: name, Target: contract.TargetUnsupported, Reason: "fabric_managed exposure is not implemented"})
			continue
		}
		if srv.AllowedTools != nil || len(srv.BlockedTools) > 0 {
			r.requireAccept(contract.AcceptMCPToolFilters, base+".allowed_tools")
		}
		if a := srv.Authentication; a != nil {
			switch a.Type {
			case "oauth2":
				r.requireAccept(contract.AcceptMCPAuthOAuth2, base+".authentication")
			case "service_account":
				r.requireAccept(contract.AcceptMCPAuthServiceAccount, base+".authentication")
			}
		}
		cp.MCPServers[name] = srv
		cp.Native.MCPServers[name] = srv
		cp.Routes = append(cp.Routes, contract.CapabilityRoute{Kind: contract.RouteMCP, Name: name, Target: contract.TargetHarnessNative, Reason: "configured in the harness's native MCP support"})
	}
}
