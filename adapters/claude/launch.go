package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
)

// Error codes the adapter reports.
const (
	CodeInvalidSettings    = "claude_invalid_settings"
	CodeInvalidConfig      = "claude_invalid_config"
	CodeAPIKeyMissing      = "claude_api_key_missing"
	CodeBinaryNotFound     = "claude_binary_not_found"
	CodeStartFailed        = "claude_start_failed"
	CodeInitializeFailed   = "claude_initialize_failed"
	CodeExited             = "claude_exited"
	CodeIO                 = "claude_io"
	CodeModelRateLimited   = "model_rate_limited"
	CodeModelError         = "model_error"
	CodeModelAuth          = "model_auth_failed"
	CodeMaxTurns           = "max_turns_exceeded"
	CodeBudgetExceeded     = "budget_exceeded"
	CodeExecutionError     = "claude_execution_error"
	CodeStructuredOutput   = "claude_structured_output_failed"
	CodeClaudeError        = "claude_error"
	defaultAnthropicKeyEnv = "ANTHROPIC_API_KEY"
)

// privateDirs are a runtime's private directories, all under Root, itself under
// the runtime's home (FABRIC_HOME): <home>/claude, with HOME and TMPDIR
// (removed at stop) inside.
type privateDirs struct {
	adapterkit.Dirs
	Config string // CLAUDE_CONFIG_DIR (Home/.claude)
}

// newPrivateDirs lays out the private directories under home.
func newPrivateDirs(home string) privateDirs {
	d := adapterkit.DirsUnder(home, "claude")
	return privateDirs{Dirs: d, Config: filepath.Join(d.Home, ".claude")}
}

// launchInput is everything the translation reads.
type launchInput struct {
	Config   contract.AgentConfig
	Settings Settings
	Dirs     privateDirs
	// Environ is the host's environment (os.Environ()); the key is read
	// from it and the child's environment starts from it.
	Environ []string
	// IsRoot: the host runs as root (IS_SANDBOX for bypassPermissions).
	IsRoot bool
	// TelemetryEnv is the runtime context's telemetry environment.
	TelemetryEnv map[string]string
}

// launch is the translated command line, environment and files of the
// claude process. It is never logged whole: Env holds the model key.
type launch struct {
	Args []string
	Env  []string
	// Files are written (0600) before the process starts: the MCP config
	// and the system prompt.
	Files map[string][]byte
	// Links are symlinks to create: link path -> target (skills).
	Links map[string]string
	// privateDirs to create (0700) besides Dirs' own.
	MkDirs []string
	// Model is the model id passed with --model ("" for the default).
	Model string
	// KeyEnv names the variable the key came from ("" when none).
	KeyEnv string
	// key is the key's value, kept only to scrub it from outputs.
	key string
}

// settingSources returns the sources passed to --setting-sources: the
// configured ones, plus user (the private config dir that holds the
// skills) when skills are installed there.
func settingSources(s Settings, userSkills bool) []string {
	out := slices.Clone(s.SettingSources)
	if userSkills && !slices.Contains(out, SourceUser) {
		out = append([]string{SourceUser}, out...)
	}
	return out
}

// buildLaunch translates the agent config and settings into the claude
// command line, environment and files.
func buildLaunch(in launchInput) (*launch, error) {
	l := &launch{Files: map[string][]byte{}, Links: map[string]string{}}
	s := in.Settings
	l.Args = []string{
		"-p",
		"--input-format", "stream-json",
		"--output-format", "stream-json",
		"--verbose",
		"--include-partial-messages",
		"--no-session-persistence",
		"--permission-mode", s.PermissionMode,
	}
	env := map[string]string{} // set over the host's environment
	maps.Copy(env, s.Env)
	maps.Copy(env, in.TelemetryEnv)
	if err := l.model(in, env); err != nil {
		return nil, err
	}
	userSkills, err := l.skills(in)
	if err != nil {
		return nil, err
	}
	l.Args = append(l.Args, "--setting-sources", strings.Join(settingSources(s, userSkills), ","))
	if s.Bare {
		l.Args = append(l.Args, "--bare")
	}
	if s.MaxBudgetUSD != nil {
		l.Args = append(l.Args, "--max-budget-usd", strconv.FormatFloat(*s.MaxBudgetUSD, 'f', -1, 64))
	}
	if rt := in.Config.Runtime; rt != nil && rt.MaxTurns != nil {
		l.Args = append(l.Args, "--max-turns", strconv.FormatUint(uint64(*rt.MaxTurns), 10))
	}
	if s.Effort != "" {
		l.Args = append(l.Args, "--effort", s.Effort)
	}
	if err := l.systemPrompt(in); err != nil {
		return nil, err
	}
	if err := l.tools(in); err != nil {
		return nil, err
	}
	fabricEnv(in, env)
	l.Env = adapterkit.ChildEnv(in.Environ, ambient, environ(env)...)
	return l, nil
}

// model passes the model role's model with --model and its base URL and
// key in env; with no model role, the ambient Anthropic key is used.
func (l *launch) model(in launchInput, env map[string]string) error {
	role, model, err := adapterkit.Model(in.Config)
	if err != nil && !errors.Is(err, adapterkit.ErrNoModel) {
		return adapterkit.Wrap(CodeInvalidConfig, err)
	}
	if role == "" {
		if v, ok := lookup(in.Environ, defaultAnthropicKeyEnv); ok && v != "" {
			l.KeyEnv, l.key = defaultAnthropicKeyEnv, v
			env["ANTHROPIC_API_KEY"] = v
		}
		return nil
	}
	l.Model = model.Model
	l.Args = append(l.Args, "--model", model.Model)
	if model.BaseURL != nil && strings.TrimSpace(*model.BaseURL) != "" {
		env["ANTHROPIC_BASE_URL"] = anthropicBaseURL(*model.BaseURL)
	}
	keyEnv := ""
	if model.APIKeyEnv != nil {
		keyEnv = *model.APIKeyEnv
	}
	switch {
	case keyEnv != "":
		v, ok := lookup(in.Environ, keyEnv)
		if !ok || v == "" {
			return adapterkit.Errorf(CodeAPIKeyMissing, "the model key variable %s (models.%s.api_key_env) is not set", keyEnv, role)
		}
		l.KeyEnv, l.key = keyEnv, v
	case model.Provider == "anthropic":
		if v, ok := lookup(in.Environ, defaultAnthropicKeyEnv); ok && v != "" {
			l.KeyEnv, l.key = defaultAnthropicKeyEnv, v
		}
	default:
		return adapterkit.Errorf(CodeInvalidConfig, "provider %q needs api_key_env and base_url", model.Provider)
	}
	if model.Provider != "anthropic" && (model.BaseURL == nil || strings.TrimSpace(*model.BaseURL) == "") {
		return adapterkit.Errorf(CodeInvalidConfig, "provider %q needs base_url", model.Provider)
	}
	if l.key != "" {
		env["ANTHROPIC_API_KEY"] = l.key
	}
	return nil
}

// skills links the configured skills into the native skills directory of
// the private config dir (a user-source skill, so userSkills), or into a
// session plugin with --bare, which does not read user skills.
func (l *launch) skills(in launchInput) (userSkills bool, err error) {
	skills, err := resolveSkills(in.Config.Skills)
	if err != nil {
		return false, adapterkit.Wrap(CodeInvalidConfig, err)
	}
	if len(skills) == 0 {
		return false, nil
	}
	skillDir := filepath.Join(in.Dirs.Config, "skills")
	if in.Settings.Bare {
		plugin := filepath.Join(in.Dirs.Root, "plugin")
		skillDir = filepath.Join(plugin, "skills")
		manifest, _ := json.Marshal(map[string]string{"name": "fabric", "version": "0.0.0", "description": "Skills configured through Fabric (skills.paths)"})
		l.Files[filepath.Join(plugin, ".claude-plugin", "plugin.json")] = manifest
		l.Args = append(l.Args, "--plugin-dir", plugin)
	}
	l.MkDirs = append(l.MkDirs, skillDir)
	for _, sk := range skills {
		l.Links[filepath.Join(skillDir, sk.name)] = sk.dir
	}
	return !in.Settings.Bare, nil
}

// systemPrompt writes the system instructions to a file that replaces or
// extends claude's system prompt.
func (l *launch) systemPrompt(in launchInput) error {
	ins := in.Config.Instructions
	if ins == nil || ins.System == nil || strings.TrimSpace(ins.System.Content) == "" {
		return nil
	}
	path := filepath.Join(in.Dirs.Root, "system-prompt.md")
	l.Files[path] = []byte(ins.System.Content)
	switch ins.System.Mode {
	case "", contract.InstructionMode("replace"):
		l.Args = append(l.Args, "--system-prompt-file", path)
	case contract.InstructionMode("append"):
		l.Args = append(l.Args, "--append-system-prompt-file", path)
	default:
		return adapterkit.Errorf(CodeInvalidConfig, "instructions.system.mode %q is not replace or append", ins.System.Mode)
	}
	return nil
}

// tools passes the tool policy and the MCP servers (a strict --mcp-config
// file) as claude's tool flags.
func (l *launch) tools(in launchInput) error {
	allowed, disallowed, builtins, restrict := toolPolicy(in.Config.Tools)
	if in.Config.MCP != nil && len(in.Config.MCP.Servers) > 0 {
		doc, mAllowed, mDisallowed, err := mcpConfig(in.Config.MCP.Servers)
		if err != nil {
			return adapterkit.Wrap(CodeInvalidConfig, err)
		}
		path := filepath.Join(in.Dirs.Root, "mcp.json")
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return adapterkit.Errorf(CodeInvalidConfig, "mcp: %w", err)
		}
		l.Files[path] = b
		l.Args = append(l.Args, "--mcp-config", path, "--strict-mcp-config")
		allowed = appendUnique(allowed, mAllowed...)
		disallowed = appendUnique(disallowed, mDisallowed...)
	}
	if restrict {
		l.Args = append(l.Args, "--tools", strings.Join(builtins, ","))
	}
	if len(allowed) > 0 {
		l.Args = append(l.Args, "--allowedTools", strings.Join(allowed, ","))
	}
	if len(disallowed) > 0 {
		l.Args = append(l.Args, "--disallowedTools", strings.Join(disallowed, ","))
	}
	return nil
}

// fabricEnv sets Fabric's own variables in env, over everything else: the
// private directories, claude's offline switches, its retries and, for a
// root host in bypassPermissions mode, IS_SANDBOX.
func fabricEnv(in launchInput, env map[string]string) {
	for _, kv := range in.Dirs.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	env["CLAUDE_CONFIG_DIR"] = in.Dirs.Config
	env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
	env["DISABLE_AUTOUPDATER"] = "1"
	env["DISABLE_TELEMETRY"] = "1"
	env["DISABLE_ERROR_REPORTING"] = "1"
	env["DISABLE_BUG_COMMAND"] = "1"
	if in.Settings.MaxRetries != nil {
		env["CLAUDE_CODE_MAX_RETRIES"] = strconv.Itoa(*in.Settings.MaxRetries)
	}
	if in.IsRoot && in.Settings.PermissionMode == PermissionBypass {
		env["IS_SANDBOX"] = "1"
	}
}

// anthropicBaseURL turns a configured base URL into ANTHROPIC_BASE_URL:
// Claude Code appends /v1/messages itself, so a trailing /v1 (and slash)
// is dropped.
func anthropicBaseURL(u string) string {
	u = strings.TrimRight(strings.TrimSpace(u), "/")
	u = strings.TrimSuffix(u, "/v1")
	return strings.TrimRight(u, "/")
}

// ambient are the host variables that must not reach the child, besides
// the ones the adapter sets (HOME, TMPDIR, XDG...): Claude Code and
// Anthropic client configuration (endpoints, keys, providers, config
// dirs), Fabric's own variables, the working directory's and the runtime
// directory.
var ambient = []string{"ANTHROPIC_*", "CLAUDE_*", "FABRIC_*", "CLAUDECODE", "PWD", "OLDPWD", "IS_SANDBOX", "XDG_RUNTIME_DIR"}

func lookup(environ []string, name string) (string, bool) {
	// The last occurrence wins, as in os/exec.
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

func environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// toolPolicy maps tools.enabled and tools.blocked. A non-nil enabled list
// restricts the built-in tools to the ones it names (--tools; an empty list
// offers none) and pre-approves every entry (--allowedTools, so that an
// enabled tool runs without a prompt nobody could answer); blocked entries
// become deny rules (--disallowedTools). Entries may be Claude Code
// permission rules such as "Bash(git *)" or MCP tool names (mcp__server__tool).
func toolPolicy(t *contract.AgentToolsConfig) (allowed, disallowed, builtins []string, restrict bool) {
	if t == nil {
		return nil, nil, nil, false
	}
	if t.Enabled != nil {
		restrict = true
		builtins = []string{}
		for _, name := range t.Enabled {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			allowed = appendUnique(allowed, name)
			if strings.HasPrefix(name, "mcp__") {
				continue
			}
			base, _, _ := strings.Cut(name, "(")
			builtins = appendUnique(builtins, strings.TrimSpace(base))
		}
	}
	for _, name := range t.Blocked {
		if name = strings.TrimSpace(name); name != "" {
			disallowed = appendUnique(disallowed, name)
		}
	}
	return allowed, disallowed, builtins, restrict
}

func appendUnique(list []string, items ...string) []string {
	for _, it := range items {
		if !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}

// mcpServer is one entry of Claude Code's MCP config file.
type mcpServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// mcpConfig builds the --mcp-config document. Values are written as the
// config gives them (the config holds no secret values, only *_env
// names); per-server tool filters become permission rules.
func mcpConfig(servers map[string]contract.AgentMCPServer) (doc map[string]any, allowed, disallowed []string, err error) {
	out := map[string]mcpServer{}
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		srv := servers[name]
		if srv.Authentication != nil {
			return nil, nil, nil, fmt.Errorf("mcp.servers.%s.authentication: not supported by this adapter", name)
		}
		var e mcpServer
		switch srv.Transport {
		case "stdio":
			e = mcpServer{Type: "stdio", Command: srv.URL, Args: srv.Args, Env: srv.Env}
		case "sse":
			e = mcpServer{Type: "sse", URL: srv.URL, Headers: srv.CustomHeaders}
		case "streamable-http":
			e = mcpServer{Type: "http", URL: srv.URL, Headers: srv.CustomHeaders}
		default:
			return nil, nil, nil, fmt.Errorf("mcp.servers.%s.transport: %q is not stdio, sse or streamable-http", name, srv.Transport)
		}
		out[name] = e
		prefix := "mcp__" + name
		if srv.AllowedTools != nil {
			if len(srv.AllowedTools) == 0 {
				disallowed = append(disallowed, prefix)
			}
			for _, t := range srv.AllowedTools {
				allowed = append(allowed, prefix+"__"+t)
			}
		}
		for _, t := range srv.BlockedTools {
			disallowed = append(disallowed, prefix+"__"+t)
		}
	}
	return map[string]any{"mcpServers": out}, allowed, disallowed, nil
}

// skill is one skill directory (it holds SKILL.md).
type skill struct{ name, dir string }

// resolveSkills finds the skills of skills.paths: a path is a skill
// directory (with SKILL.md), a SKILL.md file, or a directory of skill
// directories.
func resolveSkills(cfg *contract.AgentSkillConfig) ([]skill, error) {
	if cfg == nil {
		return nil, nil
	}
	var out []skill
	seen := map[string]string{}
	add := func(dir string) error {
		name := filepath.Base(dir)
		if prev, ok := seen[name]; ok && prev != dir {
			return fmt.Errorf("skills: two skills are named %q (%s and %s)", name, prev, dir)
		}
		if _, ok := seen[name]; !ok {
			seen[name] = dir
			out = append(out, skill{name: name, dir: dir})
		}
		return nil
	}
	for i, p := range cfg.Paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("skills.paths[%d]: %w", i, err)
		}
		st, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("skills.paths[%d]: %w", i, err)
		}
		switch {
		case !st.IsDir() && filepath.Base(abs) == "SKILL.md":
			err = add(filepath.Dir(abs))
		case !st.IsDir():
			err = fmt.Errorf("skills.paths[%d]: %s is neither a skill directory nor a SKILL.md file", i, p)
		case exists(filepath.Join(abs, "SKILL.md")):
			err = add(abs)
		default:
			entries, rerr := os.ReadDir(abs)
			if rerr != nil {
				return nil, fmt.Errorf("skills.paths[%d]: %w", i, rerr)
			}
			found := 0
			for _, e := range entries {
				dir := filepath.Join(abs, e.Name())
				if isDir(dir) && exists(filepath.Join(dir, "SKILL.md")) {
					found++
					if err = add(dir); err != nil {
						break
					}
				}
			}
			if err == nil && found == 0 {
				err = fmt.Errorf("skills.paths[%d]: %s holds no SKILL.md", i, p)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// prepare creates the private directories, files and links of l.
func (l *launch) prepare(d privateDirs) error {
	for _, dir := range append([]string{d.Root, d.Home, d.Config, d.Tmp}, l.MkDirs...) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	paths := make([]string, 0, len(l.Files))
	for p := range l.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, l.Files[p], 0o600); err != nil {
			return err
		}
	}
	for link, target := range l.Links {
		if err := os.Symlink(target, link); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}
