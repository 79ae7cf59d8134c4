package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/lazy"
)

// Values of the sandbox setting (Codex's SandboxMode).
const (
	SandboxReadOnly         = "read-only"
	SandboxWorkspaceWrite   = "workspace-write"
	SandboxDangerFullAccess = "danger-full-access"
)

// Values of the approval_mode setting (upstream's names).
const (
	// ApprovalDenyAll: Codex never asks (approvalPolicy "never"); commands
	// stay inside the sandbox and any approval request is declined.
	ApprovalDenyAll = "deny_all"
	// ApprovalAutoReview: approvalPolicy "on-request", reviewed by Codex's
	// auto_review subagent (which calls the model).
	ApprovalAutoReview = "auto_review"
)

// providerID is the name of the model provider the adapter defines in
// Codex's config (model_providers.fabric). config_overrides may refine it,
// for example model_providers.fabric.request_max_retries.
const providerID = "fabric"

// openAIBaseURL is the base URL used for provider "openai" without base_url.
const openAIBaseURL = "https://api.openai.com/v1"

// defaultOpenAIKeyEnv is the key variable for provider "openai" without
// api_key_env.
const defaultOpenAIKeyEnv = "OPENAI_API_KEY"

// Settings are the adapter's settings (harness.settings); the descriptor's
// settings_schema describes the same fields.
type Settings struct {
	Sandbox               string         `json:"sandbox,omitempty"`
	ApprovalMode          string         `json:"approval_mode,omitempty"`
	ReasoningEffort       string         `json:"reasoning_effort,omitempty"`
	DeveloperInstructions string         `json:"developer_instructions,omitempty"`
	ServiceTier           string         `json:"service_tier,omitempty"`
	OutputSchema          map[string]any `json:"output_schema,omitempty"`
	ConfigOverrides       map[string]any `json:"config_overrides,omitempty"`
}

var (
	dottedKey = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`) }}
	envName   = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) }}
	// Codex names MCP servers with these characters only.
	mcpName = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) }}
)

// parseSettings decodes and checks harness settings (the plan has already
// validated them against the descriptor; this is the host's own guard) and
// fills in the defaults.
func parseSettings(h *contract.AgentHarnessConfig) (Settings, error) {
	var s Settings
	if err := adapterkit.DecodeSettings(h, &s); err != nil {
		return s, err
	}
	switch s.Sandbox {
	case "":
		s.Sandbox = SandboxReadOnly
	case SandboxReadOnly, SandboxWorkspaceWrite, SandboxDangerFullAccess:
	default:
		return s, fmt.Errorf("settings.sandbox: unknown value %q", s.Sandbox)
	}
	switch s.ApprovalMode {
	case "":
		s.ApprovalMode = ApprovalDenyAll
	case ApprovalDenyAll, ApprovalAutoReview:
	default:
		return s, fmt.Errorf("settings.approval_mode: unknown value %q", s.ApprovalMode)
	}
	switch s.ReasoningEffort {
	case "", "none", "minimal", "low", "medium", "high", "xhigh":
	default:
		return s, fmt.Errorf("settings.reasoning_effort: unknown value %q", s.ReasoningEffort)
	}
	for k, v := range s.ConfigOverrides {
		if !dottedKey.Get().MatchString(k) {
			return s, fmt.Errorf("settings.config_overrides: key %q is not a dotted Codex config path", k)
		}
		if _, err := tomlScalar(v); err != nil {
			return s, fmt.Errorf("settings.config_overrides.%s: %w", k, err)
		}
	}
	return s, nil
}

// modelRole is the model role the runtime uses, resolved to what Codex needs.
type modelRole struct {
	Role      string
	Provider  string
	Model     string
	BaseURL   string // never empty: openAIBaseURL for provider openai without one
	APIKeyEnv string // never empty: defaultOpenAIKeyEnv for provider openai without one
}

// selectModel picks the model role ("default", else the only one) and
// resolves its provider.
func selectModel(models map[string]contract.AgentModel) (modelRole, error) {
	role, am, err := adapterkit.Model(contract.AgentConfig{Models: models})
	if err != nil {
		return modelRole{}, err
	}
	m := modelRole{Role: role, Provider: am.Provider, Model: am.Model}
	if am.BaseURL != nil {
		m.BaseURL = strings.TrimSpace(*am.BaseURL)
	}
	if am.APIKeyEnv != nil {
		m.APIKeyEnv = *am.APIKeyEnv
	}
	path := "models." + role
	switch {
	case strings.TrimSpace(m.Model) == "":
		return m, fmt.Errorf("%s.model: required", path)
	case m.Provider == "openai":
		if m.BaseURL == "" {
			m.BaseURL = openAIBaseURL
		}
		if m.APIKeyEnv == "" {
			m.APIKeyEnv = defaultOpenAIKeyEnv
		}
	case m.BaseURL == "" || m.APIKeyEnv == "":
		return m, fmt.Errorf("%s: provider %q needs base_url and api_key_env (Codex speaks the OpenAI Responses API to base_url)", path, m.Provider)
	}
	if !envName.Get().MatchString(m.APIKeyEnv) {
		return m, fmt.Errorf("%s.api_key_env: %q is not an environment variable name", path, m.APIKeyEnv)
	}
	if !strings.HasPrefix(m.BaseURL, "http://") && !strings.HasPrefix(m.BaseURL, "https://") {
		return m, fmt.Errorf("%s.base_url: %q is not an http(s) URL", path, m.BaseURL)
	}
	return m, nil
}

// offlineArgs turn off everything in Codex that talks to a host other than
// the model provider: plugin and marketplace sync, remote plugins, model
// discovery, analytics, update checks, feedback and OpenTelemetry export.
var offlineArgs = []string{
	"--disable", "plugins",
	"--disable", "remote_plugin",
	"--disable", "api_key_model_discovery",
	"-c", "analytics.enabled=false",
	"-c", "check_for_update_on_startup=false",
	"-c", "feedback.enabled=false",
	"-c", `otel.exporter="none"`,
	"-c", `otel.trace_exporter="none"`,
	"-c", `otel.metrics_exporter="none"`,
}

// serverArgs returns the arguments of `codex` for one runtime: the app-server on
// stdio, the offline switches, the provider and model, then the
// config_overrides in key order (later -c values win in Codex, so the
// overrides win over Fabric's). No secret is ever part of them: the key is
// named by env_key and read by Codex from its environment.
func serverArgs(m modelRole, s Settings) ([]string, error) {
	args := []string{"app-server", "--listen", "stdio://"}
	args = append(args, offlineArgs...)
	p := "model_providers." + providerID + "."
	kv := func(k string, v string) { args = append(args, "-c", k+"="+v) }
	kv("model_provider", tomlString(providerID))
	kv(p+"name", tomlString(providerID))
	kv(p+"base_url", tomlString(m.BaseURL))
	kv(p+"env_key", tomlString(m.APIKeyEnv))
	kv(p+"wire_api", tomlString("responses"))
	kv("model", tomlString(m.Model))
	if s.ReasoningEffort != "" {
		kv("model_reasoning_effort", tomlString(s.ReasoningEffort))
	}
	keys := make([]string, 0, len(s.ConfigOverrides))
	for k := range s.ConfigOverrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !dottedKey.Get().MatchString(k) {
			return nil, fmt.Errorf("settings.config_overrides: key %q is not a dotted Codex config path", k)
		}
		v, err := tomlScalar(s.ConfigOverrides[k])
		if err != nil {
			return nil, fmt.Errorf("settings.config_overrides.%s: %w", k, err)
		}
		kv(k, v)
	}
	return args, nil
}

// mcpConfig renders the MCP servers as Codex config.toml tables
// ([mcp_servers.<name>]). It goes into the runtime's private CODEX_HOME
// (mode 0600) rather than onto the command line because env values and
// headers may carry secrets. stdio servers get command/args/env (the
// server's url is its command, as upstream defines it); streamable-http
// servers get url/http_headers; allowed_tools and blocked_tools become
// enabled_tools and disabled_tools. It returns nil when there are no
// servers.
func mcpConfig(m *contract.AgentMCPConfig) ([]byte, error) {
	if m == nil || len(m.Servers) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(m.Servers))
	for n := range m.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("# Written by Fabric for one runtime; removed when the runtime stops.\n")
	for _, name := range names {
		srv := m.Servers[name]
		path := "mcp.servers." + name
		if !mcpName.Get().MatchString(name) {
			return nil, fmt.Errorf("%s: Codex MCP server names may only use letters, digits, '_' and '-'", path)
		}
		if srv.Authentication != nil {
			return nil, fmt.Errorf("%s.authentication: not supported by this adapter", path)
		}
		fmt.Fprintf(&b, "\n[mcp_servers.%s]\n", name)
		switch srv.Transport {
		case contract.MCPTransportStdio:
			if len(srv.CustomHeaders) > 0 {
				return nil, fmt.Errorf("%s.custom_headers: only for HTTP servers", path)
			}
			fmt.Fprintf(&b, "command = %s\n", tomlString(srv.URL))
			if len(srv.Args) > 0 {
				fmt.Fprintf(&b, "args = %s\n", tomlStringArray(srv.Args))
			}
			if len(srv.Env) > 0 {
				fmt.Fprintf(&b, "env = %s\n", tomlStringTable(srv.Env))
			}
		case contract.MCPTransportStreamableHTTP:
			if len(srv.Args) > 0 || len(srv.Env) > 0 {
				return nil, fmt.Errorf("%s: args and env are only for stdio servers", path)
			}
			fmt.Fprintf(&b, "url = %s\n", tomlString(srv.URL))
			if len(srv.CustomHeaders) > 0 {
				fmt.Fprintf(&b, "http_headers = %s\n", tomlStringTable(srv.CustomHeaders))
			}
		default:
			return nil, fmt.Errorf("%s.transport: Codex supports stdio and streamable-http MCP servers, not %q", path, srv.Transport)
		}
		if srv.AllowedTools != nil {
			fmt.Fprintf(&b, "enabled_tools = %s\n", tomlStringArray(srv.AllowedTools))
		}
		if len(srv.BlockedTools) > 0 {
			fmt.Fprintf(&b, "disabled_tools = %s\n", tomlStringArray(srv.BlockedTools))
		}
	}
	return []byte(b.String()), nil
}

// linkSkills makes each configured skill visible in Codex's native user
// skill directory (dir = $CODEX_HOME/skills) by symlinking it: a directory
// holding SKILL.md is one skill; a directory without one is a collection
// whose subdirectories holding SKILL.md are skills; a SKILL.md file names
// its directory. Links are named after the skill's directory, with a numeric
// suffix on collisions. It returns the link names.
func linkSkills(dir string, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var skills []string
	for _, p := range paths {
		found, err := skillDirs(p)
		if err != nil {
			return nil, err
		}
		skills = append(skills, found...)
	}
	used := map[string]bool{".system": true}
	var names []string
	for _, s := range skills {
		base := filepath.Base(s)
		name := base
		for i := 2; used[name]; i++ {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		used[name] = true
		if err := os.Symlink(s, filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("skills: %w", err)
		}
		names = append(names, name)
	}
	return names, nil
}

func skillDirs(p string) ([]string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	if !st.IsDir() {
		if filepath.Base(abs) != "SKILL.md" {
			return nil, fmt.Errorf("skills: %s is neither a skill directory nor a SKILL.md file", abs)
		}
		return []string{filepath.Dir(abs)}, nil
	}
	if isFile(filepath.Join(abs, "SKILL.md")) {
		return []string{abs}, nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	var out []string
	for _, e := range entries {
		sub := filepath.Join(abs, e.Name())
		if st, err := os.Stat(sub); err == nil && st.IsDir() && isFile(filepath.Join(sub, "SKILL.md")) {
			out = append(out, sub)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("skills: %s holds no SKILL.md (neither directly nor in a subdirectory)", abs)
	}
	return out, nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// approvalPolicy maps approval_mode to Codex's approvalPolicy and
// approvalsReviewer.
func approvalPolicy(mode string) (policy, reviewer string) {
	if mode == ApprovalAutoReview {
		return "on-request", "auto_review"
	}
	return "never", "user"
}

// threadParams builds the thread/start parameters.
func threadParams(cwd string, s Settings, instr *contract.AgentInstructionsConfig) map[string]any {
	policy, reviewer := approvalPolicy(s.ApprovalMode)
	p := map[string]any{
		"cwd":               cwd,
		"approvalPolicy":    policy,
		"approvalsReviewer": reviewer,
		"sandbox":           s.Sandbox,
	}
	if instr != nil && instr.System != nil && instr.System.Content != "" {
		p["baseInstructions"] = instr.System.Content
	}
	if s.DeveloperInstructions != "" {
		p["developerInstructions"] = s.DeveloperInstructions
	}
	if s.ServiceTier != "" {
		p["serviceTier"] = s.ServiceTier
	}
	return p
}

// turnParams builds the turn/start parameters.
func turnParams(threadID, text string, s Settings) map[string]any {
	p := map[string]any{
		"threadId": threadID,
		"input":    []any{map[string]any{"type": "text", "text": text}},
	}
	if s.OutputSchema != nil {
		p["outputSchema"] = s.OutputSchema
	}
	return p
}
