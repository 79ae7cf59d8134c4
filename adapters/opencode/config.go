package opencode

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/lazy"
)

// providerID is the model provider the adapter defines in OpenCode's
// configuration (provider.fabric); the runtime's model is
// fabric/<model>.
const providerID = "fabric"

// keyEnv is the private variable that carries the model key into the
// server's environment, and only there; the configuration references it
// as {env:FABRIC_OPENCODE_MODEL_KEY}, which OpenCode substitutes when it
// loads the file, so the key is never written to disk (C1).
const keyEnv = "FABRIC_OPENCODE_MODEL_KEY"

// serverConfig is everything the generated opencode.json depends on.
type serverConfig struct {
	Model model
	Agent string
	// Snapshots is OpenCode's "snapshot" (filesystem snapshots per step).
	Snapshots bool
	// Instructions is instructions.system; InstructionsFile is where the
	// append mode's text is written (listed in "instructions").
	Instructions     *contract.AgentInstruction
	InstructionsFile string
	MCP              *contract.AgentMCPConfig
}

var mcpName = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) }}

// Build returns OpenCode's configuration (JSON) and, for instructions in
// append mode, the text to write to InstructionsFile ("" otherwise).
func (c serverConfig) build() (doc []byte, instructions string, err error) {
	model := map[string]any{
		"name": c.Model.Name, "tool_call": true,
		"limit": map[string]any{"context": c.Model.ContextWindow, "output": c.Model.MaxTokens},
	}
	if c.Model.Temperature != nil {
		model["temperature"] = true
	}
	ref := providerID + "/" + c.Model.Name
	agent := map[string]any{"model": ref}
	if c.Model.Temperature != nil {
		agent["temperature"] = *c.Model.Temperature
	}
	cfg := map[string]any{
		"$schema":     "https://opencode.ai/config.json",
		"model":       ref,
		"small_model": ref,
		"autoupdate":  false,
		"share":       "disabled",
		// Only FabricConfig's endpoint (C1).
		"enabled_providers": []string{providerID},
		"provider": map[string]any{providerID: map[string]any{
			"npm":  "@ai-sdk/openai-compatible",
			"name": "Fabric",
			"options": map[string]any{
				"baseURL": strings.TrimRight(c.Model.BaseURL, "/"),
				"apiKey":  "{env:" + keyEnv + "}",
			},
			"models": map[string]any{c.Model.Name: model},
		}},
		// No person is there to approve: tools run, the web is not fetched.
		"permission": map[string]any{"edit": "allow", "bash": "allow", "webfetch": "deny"},
		"formatter":  false,
		"snapshot":   c.Snapshots,
		"lsp":        false,
	}
	if in := c.Instructions; in != nil && strings.TrimSpace(in.Content) != "" {
		switch in.Mode {
		case "", contract.InstructionReplace:
			agent["prompt"] = in.Content
		case contract.InstructionAppend:
			if c.InstructionsFile == "" {
				return nil, "", fmt.Errorf("instructions.system: append mode needs an instructions file")
			}
			cfg["instructions"] = []string{c.InstructionsFile}
			instructions = in.Content
		default:
			return nil, "", fmt.Errorf("instructions.system.mode %q is not replace or append", in.Mode)
		}
	}
	cfg["agent"] = map[string]any{c.Agent: agent}
	mcp, err := mcpConfig(c.MCP)
	if err != nil {
		return nil, "", err
	}
	if mcp != nil {
		cfg["mcp"] = mcp
	}
	doc, err = json.MarshalIndent(cfg, "", "  ")
	return doc, instructions, err
}

// MCPConfig renders the MCP servers as OpenCode's "mcp" object: stdio
// servers are type local (command = url then args, environment = env),
// streamable-http servers type remote (url, headers). Values may carry
// secrets, so the configuration is written 0600 into the runtime's private
// directory and removed at stop. Tool filters and authentication are not
// supported. It returns nil when there are no servers.
func mcpConfig(m *contract.AgentMCPConfig) (map[string]any, error) {
	if m == nil || len(m.Servers) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(m.Servers))
	for n := range m.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	out := map[string]any{}
	for _, name := range names {
		srv := m.Servers[name]
		path := "mcp.servers." + name
		if !mcpName.Get().MatchString(name) {
			return nil, fmt.Errorf("%s: OpenCode MCP server names may only use letters, digits, '_' and '-'", path)
		}
		if srv.Authentication != nil {
			return nil, fmt.Errorf("%s.authentication: not supported by this adapter", path)
		}
		if srv.AllowedTools != nil || len(srv.BlockedTools) > 0 {
			return nil, fmt.Errorf("%s: allowed_tools and blocked_tools are not supported by this adapter", path)
		}
		switch srv.Transport {
		case contract.MCPTransportStdio:
			if len(srv.CustomHeaders) > 0 {
				return nil, fmt.Errorf("%s.custom_headers: only for HTTP servers", path)
			}
			e := map[string]any{"type": "local", "command": append([]string{srv.URL}, srv.Args...), "enabled": true}
			if len(srv.Env) > 0 {
				e["environment"] = srv.Env
			}
			out[name] = e
		case contract.MCPTransportStreamableHTTP:
			if len(srv.Args) > 0 || len(srv.Env) > 0 {
				return nil, fmt.Errorf("%s: args and env are only for stdio servers", path)
			}
			e := map[string]any{"type": "remote", "url": srv.URL, "enabled": true}
			if len(srv.CustomHeaders) > 0 {
				e["headers"] = srv.CustomHeaders
			}
			out[name] = e
		default:
			return nil, fmt.Errorf("%s.transport: OpenCode supports stdio and streamable-http MCP servers, not %q", path, srv.Transport)
		}
	}
	return out, nil
}

// offlineEnv are OpenCode's switches for what would reach other hosts or
// read configuration outside the runtime (harnesses.md, C3).
var offlineEnv = []string{
	"OPENCODE_DISABLE_MODELS_FETCH=1",
	"OPENCODE_DISABLE_AUTOUPDATE=1",
	"OPENCODE_DISABLE_SHARE=1",
	"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
	"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
	"OPENCODE_DISABLE_CLAUDE_CODE=1",
	"OPENCODE_DISABLE_EXTERNAL_SKILLS=1",
	"OPENCODE_DISABLE_PROJECT_CONFIG=1",
	// Even with --pure, OpenCode installs @opencode-ai/plugin into each
	// configuration directory in the background (npm registry). Offline,
	// against a loopback port where nothing listens, it fails at once
	// without leaving loopback (OpenCode logs a warning and carries on).
	"npm_config_offline=true",
	"npm_config_registry=" + deadRegistry,
	"NPM_CONFIG_REGISTRY=" + deadRegistry,
	"BUN_CONFIG_REGISTRY=" + deadRegistry,
}

// deadRegistry is a loopback URL nothing listens on (port 9, discard).
const deadRegistry = "http://127.0.0.1:9/"
