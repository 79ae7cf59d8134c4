package acp

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/fabric-runtime/fabric/internal/lazy"
)

// envProfile names the profile the host runs: a bundled profile name, or a
// JSON Profile for any other ACP agent. Descriptors set it in runner.env.
const envProfile = "FABRIC_ACP_PROFILE"

// Profile says how to start one ACP agent and translate FabricConfig for
// it. String values may hold the placeholders {base_url}, {api_key_env},
// {model}, {home} and {workspace}; {api_key} only in Env. A profile's own
// settings (Settings) add {settings.NAME} (the setting's value) and, for
// settings of kind "env", {secret.NAME} (the named variable's value; only
// in Env, never in argv or files).
type Profile struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	// ModelArgs are appended when a model is configured.
	ModelArgs []string `json:"model_args,omitempty"`
	// Env is added to the agent's environment (after isolation).
	Env map[string]string `json:"env,omitempty"`
	// Files are written under the agent's private HOME before start
	// (path relative to HOME -> content).
	Files map[string]string `json:"files,omitempty"`
	// PolicyArgs are appended per permission policy (allow, deny, ask).
	PolicyArgs map[string][]string `json:"policy_args,omitempty"`
	// OptionalArgs are argument groups appended only when every
	// placeholder in the group has a value (e.g. a flag and its value
	// taken from an optional setting).
	OptionalArgs [][]string `json:"optional_args,omitempty"`
	// Settings declares harness.settings keys of this profile, beyond the
	// adapter's own (the descriptor's settings_schema lists them too).
	Settings map[string]SettingSpec `json:"settings,omitempty"`
	// DropEnv names variables removed from the environment the agent
	// inherits (e.g. credentials the profile passes only when configured).
	DropEnv []string `json:"drop_env,omitempty"`
	// Seed names files and directories of the private HOME
	// (slash-separated paths relative to it) that the agent's first run
	// makes in an empty HOME and later runs only read, whatever the
	// runtime (e.g. migrated databases, unpacked assets): each runtime
	// starts from its own copies of them, taken from a seed a scratch
	// start of the agent left (seed.go); a directory only with a spare
	// copy. Never an identity, a log row, or anything a turn writes.
	// Bundled profiles only.
	Seed []string `json:"-"`
}

// Kinds of profile settings (SettingSpec.Kind).
const (
	// KindString is any non-empty string.
	KindString = "string"
	// KindURL is an absolute URL with a host and no user info, whose
	// scheme is one of SettingSpec.Schemes.
	KindURL = "url"
	// KindEnv names an environment variable holding a secret: it must be
	// set when the runtime starts, and its value is {secret.NAME}.
	KindEnv = "env"
	// KindFile is an absolute path to a regular file, readable when the
	// runtime starts (e.g. a token file); only the path is passed on.
	KindFile = "file"
)

// SettingSpec is one profile setting.
type SettingSpec struct {
	Kind    string   `json:"kind"`
	Default string   `json:"default,omitempty"`
	Schemes []string `json:"schemes,omitempty"`
	// LoopbackSchemes are schemes of Schemes allowed only with a loopback
	// host (e.g. ws: a plaintext connection that carries a token).
	LoopbackSchemes []string `json:"loopback_schemes,omitempty"`
}

// bundledProfile profile names.
const (
	ProfileGemini   = "gemini"
	ProfileQwen     = "qwen"
	ProfileCodexACP = "codex-acp"
	ProfileClaude   = "claude-agent-acp"
	ProfileOpenClaw = "openclaw"
	ProfileDroid    = "droid"
	ProfileKilo     = "kilo"
)

// droidSettings is Droid's ~/.factory/settings.json: FabricConfig's model
// as its one custom model (BYOK, no Factory login), on Chat Completions;
// Droid expands ${VAR} from its environment, so the key stays there.
const droidSettings = `{"customModels":[{"model":"{model}","displayName":"Fabric","baseUrl":"{base_url}",` +
	`"apiKey":"${FABRIC_DROID_MODEL_KEY}","provider":"generic-chat-completion-api","maxOutputTokens":8192}]}`

// kiloAsk is Kilo's permission overlay (KILO_PERMISSION) that makes it ask
// before running a command, editing a file or fetching a URL.
const kiloAsk = `{"bash":"ask","edit":"ask","webfetch":"ask"}`

// kiloConfig is Kilo's configuration (OpenCode's format): FabricConfig's
// endpoint as the only enabled provider ({env:NAME} is Kilo's reference to
// a variable, not a placeholder).
const kiloConfig = `{"model":"fabric/{model}","small_model":"fabric/{model}","enabled_providers":["fabric"],` +
	`"autoupdate":false,"share":"disabled",` +
	`"provider":{"fabric":{"npm":"@ai-sdk/openai-compatible","name":"Fabric",` +
	`"options":{"baseURL":"{base_url}","apiKey":"{env:FABRIC_KILO_MODEL_KEY}"},` +
	`"models":{"{model}":{"name":"{model}","tool_call":true,"limit":{"context":128000,"output":8192}}}}}}`

var quietSettings = `{"security":{"auth":{"selectedType":"%s"},"folderTrust":{"enabled":false}},` +
	`"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},` +
	`"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}`

// bundledProfile returns the bundled profile with the given name.
func bundledProfile(name string) (Profile, bool) {
	switch name {
	case ProfileGemini:
		return Profile{
			Name: name, Command: "gemini", Args: []string{"--acp"},
			ModelArgs: []string{"-m", "{model}"},
			Env: map[string]string{
				"GEMINI_API_KEY": "{api_key}", "GOOGLE_GEMINI_BASE_URL": "{base_url}",
				"GEMINI_CLI_NO_RELAUNCH": "true",
			},
			Files: map[string]string{".gemini/settings.json": fmt.Sprintf(quietSettings, "gemini-api-key")},
		}, true
	case ProfileQwen:
		return Profile{
			Name: name, Command: "qwen", Args: []string{"--acp", "--auth-type", "openai"},
			ModelArgs: []string{"-m", "{model}"},
			Env: map[string]string{
				"OPENAI_API_KEY": "{api_key}", "OPENAI_BASE_URL": "{base_url}", "OPENAI_MODEL": "{model}",
			},
			Files:      map[string]string{".qwen/settings.json": fmt.Sprintf(quietSettings, "openai")},
			PolicyArgs: map[string][]string{"allow": {"--approval-mode", "yolo"}},
		}, true
	case ProfileCodexACP:
		return Profile{
			Name: name, Command: "codex-acp",
			Args: []string{
				"-c", "model_provider=fabric", "-c", "model_providers.fabric.name=fabric",
				"-c", "model_providers.fabric.base_url={base_url}",
				"-c", "model_providers.fabric.env_key={api_key_env}",
				"-c", "model_providers.fabric.wire_api=responses",
				"-c", "model_providers.fabric.request_max_retries=0",
				"-c", "model_providers.fabric.stream_max_retries=0",
				"-c", "analytics.enabled=false", "-c", "features.plugins=false",
				"-c", "check_for_update_on_startup=false",
				"-c", "sandbox_mode=danger-full-access",
				// Gate commands behind session/request_permission, answered
				// by the adapter's policy, so every decision is an event.
				"-c", "approval_policy=untrusted",
			},
			ModelArgs: []string{"-c", "model={model}"},
			Env:       map[string]string{"CODEX_HOME": "{home}/.codex"},
			// codex-acp creates and migrates these SQLite databases (about
			// 35 migrations and a dozen fsyncs, most of its first start)
			// in every new CODEX_HOME; they hold only their schema until a
			// session writes to them. The logs database stays empty:
			// codex-acp writes no log rows (none after three turns). With
			// their write-ahead logs, which the seed's build folds into the
			// databases (a scratch start is killed, not checkpointed);
			// never the shared-memory index, which SQLite rebuilds. The
			// bundled skills codex unpacks (about 45 files, rewritten only
			// when their marker differs from the binary's) come only with a
			// spare copy moved in whole: copying them costs what unpacking
			// does. Not installation_id or shell snapshots.
			Seed: []string{
				".codex/state_5.sqlite", ".codex/state_5.sqlite-wal",
				".codex/goals_1.sqlite", ".codex/goals_1.sqlite-wal",
				".codex/memories_1.sqlite", ".codex/memories_1.sqlite-wal",
				".codex/logs_2.sqlite", ".codex/logs_2.sqlite-wal",
				".codex/skills/.system",
			},
		}, true
	case ProfileClaude:
		return Profile{
			Name: name, Command: "claude-agent-acp",
			Env: map[string]string{
				"ANTHROPIC_BASE_URL": "{base_url}", "ANTHROPIC_API_KEY": "{api_key}",
				"ANTHROPIC_MODEL": "{model}", "CLAUDE_CONFIG_DIR": "{home}/.claude",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "IS_SANDBOX": "1",
				"DISABLE_AUTOUPDATER": "1",
			},
		}, true
	case ProfileOpenClaw:
		// `openclaw acp` bridges ACP to a running OpenClaw Gateway, which
		// owns the model configuration. The URL travels as
		// OPENCLAW_GATEWAY_URL (with a URL from the environment the bridge
		// accepts the token from the environment too; with --url it wants
		// --token or --token-file), the token as OPENCLAW_GATEWAY_TOKEN or
		// --token-file, never --token (argv is world-readable).
		return Profile{
			Name: name, Command: "openclaw", Args: []string{"acp"},
			OptionalArgs: [][]string{
				{"--token-file", "{settings.gateway_token_file}"},
				{"--session", "{settings.session_key}"},
			},
			Env: map[string]string{
				"OPENCLAW_GATEWAY_URL":    "{settings.gateway_url}",
				"OPENCLAW_GATEWAY_TOKEN":  "{secret.gateway_token_env}",
				"OPENCLAW_STATE_DIR":      "{home}/.openclaw",
				"OPENCLAW_NO_AUTO_UPDATE": "1", "OPENCLAW_DISABLE_BONJOUR": "1", "NO_COLOR": "1",
			},
			DropEnv: []string{"OPENCLAW_GATEWAY_PASSWORD", "OPENCLAW_CONFIG_PATH", "OPENCLAW_HOME", "OPENCLAW_PROFILE"},
			Settings: map[string]SettingSpec{
				"gateway_url":        {Kind: KindURL, Default: "ws://127.0.0.1:18789", Schemes: []string{"ws", "wss"}, LoopbackSchemes: []string{"ws"}},
				"gateway_token_env":  {Kind: KindEnv},
				"gateway_token_file": {Kind: KindFile},
				"session_key":        {Kind: KindString},
			},
		}, true
	case ProfileDroid:
		// `droid exec --output-format acp`. Without FACTORY_AIRGAP_ENABLED
		// the public build calls Factory's API and telemetry hosts on
		// every run, even with a custom model and no login.
		return Profile{
			Name: name, Command: "droid", Args: []string{"exec", "--output-format", "acp"},
			ModelArgs: []string{"-m", "custom:{model}"},
			Env: map[string]string{
				"FABRIC_DROID_MODEL_KEY": "{api_key}", "FACTORY_AIRGAP_ENABLED": "true",
				"FACTORY_DROID_AUTO_UPDATE_ENABLED": "false", "FACTORY_DISABLE_KEYRING": "1", "DO_NOT_TRACK": "1",
			},
			Files:   map[string]string{".factory/settings.json": droidSettings},
			DropEnv: []string{"FACTORY_API_KEY", "FACTORY_HOME_OVERRIDE"},
		}, true
	case ProfileKilo:
		// `kilo acp`. Kilo writes into the configuration file it is given
		// (it adds "$schema"), so it gets a fresh copy under the runtime's
		// private HOME at every start, outside the workspace; it also walks
		// up from its cwd and loads any kilo.json / opencode.json it finds,
		// which KILO_DISABLE_PROJECT_CONFIG turns off. The rest keeps it
		// on loopback (models.dev, PostHog, Kilo's gateway) and quiet.
		return Profile{
			Name: name, Command: "kilo", Args: []string{"acp"},
			Env: map[string]string{
				"KILO_CONFIG": "{home}/.fabric-kilo/kilo.json", "FABRIC_KILO_MODEL_KEY": "{api_key}",
				"KILO_DISABLE_PROJECT_CONFIG": "1", "KILO_TELEMETRY_LEVEL": "off", "KILO_NO_DAEMON": "1",
				"KILO_DISABLE_AUTOUPDATE": "1", "KILO_DISABLE_MODELS_FETCH": "1", "KILO_DISABLE_DEFAULT_PLUGINS": "1",
				"KILO_PURE": "1", "KILO_DISABLE_SHARE": "1", "KILO_DISABLE_LSP_DOWNLOAD": "1",
				"KILO_DISABLE_CLAUDE_CODE": "1", "KILO_DISABLE_EXTERNAL_SKILLS": "1", "KILO_DISABLE_SESSION_INGEST": "1",
				"KILO_DISABLE_PRESENCE": "1", "KILO_DISABLE_CODEBASE_INDEXING": "1",
				// Kilo runs commands and edits without asking by default:
				// it asks (session/request_permission) and the adapter's
				// permission_policy answers, so every decision is an event.
				"KILO_PERMISSION": kiloAsk,
			},
			Files:   map[string]string{".fabric-kilo/kilo.json": kiloConfig},
			DropEnv: []string{"KILO_CONFIG_CONTENT", "KILO_CONFIG_DIR", "KILO_SERVER_PASSWORD", "KILO_SERVER_USERNAME"},
		}, true
	}
	return Profile{}, false
}

// loadProfile reads the profile named by $FABRIC_ACP_PROFILE: a bundled
// name, or a JSON object (unknown keys are an error).
func loadProfile(getenv func(string) string) (Profile, error) {
	v := strings.TrimSpace(getenv(envProfile))
	if v == "" {
		return Profile{}, fmt.Errorf("%s is not set: the descriptor's runner.env must name a bundled profile or hold a JSON profile", envProfile)
	}
	if !strings.HasPrefix(v, "{") {
		p, ok := bundledProfile(v)
		if !ok {
			return Profile{}, fmt.Errorf("%s=%s: no such bundled profile", envProfile, v)
		}
		return p, nil
	}
	var p Profile
	dec := json.NewDecoder(strings.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Profile{}, fmt.Errorf("%s: %w", envProfile, err)
	}
	if p.Command == "" {
		return Profile{}, fmt.Errorf("%s: command is required", envProfile)
	}
	if p.Name == "" {
		p.Name = p.Command
	}
	if err := p.check(); err != nil {
		return Profile{}, fmt.Errorf("%s: %w", envProfile, err)
	}
	return p, nil
}

// adapterSettings are the adapter's own settings keys; a profile may not
// redeclare them.
var adapterSettings = []string{"command", "permission_policy", "permission_timeout_seconds", "extra_args"}

// secretRE finds {secret.NAME} placeholders.
var secretRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`\{secret\.([A-Za-z0-9_]+)\}`) }}

// check validates a profile's own settings and where secrets may go.
func (p Profile) check() error {
	for name, spec := range p.Settings {
		if slices.Contains(adapterSettings, name) {
			return fmt.Errorf("settings.%s: the adapter's own setting", name)
		}
		switch spec.Kind {
		case KindString, KindEnv, KindFile:
		case KindURL:
			if len(spec.Schemes) == 0 {
				return fmt.Errorf("settings.%s: a url setting needs schemes", name)
			}
		default:
			return fmt.Errorf("settings.%s: kind %q: want string, url, env or file", name, spec.Kind)
		}
	}
	for _, rel := range p.Seed {
		if !cleanRel(rel) {
			return fmt.Errorf("seed %q: want a clean path relative to HOME", rel)
		}
	}
	notEnv := append(append([]string{}, p.Args...), p.ModelArgs...)
	for _, g := range p.OptionalArgs {
		notEnv = append(notEnv, g...)
	}
	for _, as := range p.PolicyArgs {
		notEnv = append(notEnv, as...)
	}
	for _, c := range p.Files {
		notEnv = append(notEnv, c)
	}
	for _, a := range notEnv {
		if secretRE.Get().MatchString(a) || strings.Contains(a, "{api_key}") {
			return fmt.Errorf("%q: secrets ({api_key}, {secret.NAME}) go in env only", a)
		}
	}
	for _, v := range p.Env {
		for _, m := range secretRE.Get().FindAllStringSubmatch(v, -1) {
			if p.Settings[m[1]].Kind != KindEnv {
				return fmt.Errorf("env %q: {secret.%s} needs a setting %s of kind env", v, m[1], m[1])
			}
		}
	}
	return nil
}

// envNameRE is what a variable name looks like.
var envNameRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) }}

// resolveSettings checks the values of the profile's own settings (raw,
// from harness.settings) and returns the placeholders they fill:
// settings.NAME and, for env settings, secret.NAME. lookup reads the
// host's environment. Errors name the setting.
func (p Profile) resolveSettings(raw map[string]any, lookup func(string) (string, bool)) (map[string]string, error) {
	vars := map[string]string{}
	names := make([]string, 0, len(p.Settings))
	for n := range p.Settings {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		spec := p.Settings[name]
		field := "settings." + name
		v := spec.Default
		if rv, ok := raw[name]; ok && rv != nil {
			sv, ok := rv.(string)
			if !ok {
				return nil, fmt.Errorf("%s must be a string", field)
			}
			if strings.TrimSpace(sv) == "" {
				return nil, fmt.Errorf("%s must not be empty", field)
			}
			v = sv
		}
		if v == "" {
			continue
		}
		switch spec.Kind {
		case KindURL:
			u, err := url.Parse(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", field, err)
			}
			if !slices.Contains(spec.Schemes, u.Scheme) {
				return nil, fmt.Errorf("%s %q: the scheme must be one of %s", field, v, strings.Join(spec.Schemes, ", "))
			}
			if u.Host == "" || u.Hostname() == "" {
				return nil, fmt.Errorf("%s %q: no host", field, v)
			}
			if slices.Contains(spec.LoopbackSchemes, u.Scheme) && !loopbackHost(u.Hostname()) {
				return nil, fmt.Errorf("%s %q: %s:// is allowed only to a loopback host (it is not encrypted)", field, v, u.Scheme)
			}
			if u.User != nil {
				return nil, fmt.Errorf("%s: credentials do not belong in the URL (use the profile's token settings)", field)
			}
		case KindEnv:
			if !envNameRE.Get().MatchString(v) {
				return nil, fmt.Errorf("%s %q is not a variable name", field, v)
			}
			sec, ok := lookup(v)
			if !ok || sec == "" {
				return nil, fmt.Errorf("the environment variable %s (%s) is not set", v, field)
			}
			vars["secret."+name] = sec
		case KindFile:
			if !filepath.IsAbs(v) {
				return nil, fmt.Errorf("%s %q must be an absolute path", field, v)
			}
			st, err := os.Stat(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", field, err)
			}
			if !st.Mode().IsRegular() {
				return nil, fmt.Errorf("%s %s is not a regular file", field, v)
			}
			f, err := os.Open(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", field, err)
			}
			f.Close()
		}
		vars["settings."+name] = v
	}
	return vars, nil
}

// loopbackHost reports whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// unresolved reports whether s holds a placeholder vars has no value for
// (an empty value counts as none).
func unresolved(s string, vars map[string]string) bool {
	for rest := s; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return false
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return false
		}
		key := rest[i+1 : i+j]
		if placeholderRE.Get().MatchString(key) && vars[key] == "" {
			return true
		}
		rest = rest[i+j+1:]
	}
}

// placeholderRE is what a placeholder's name looks like.
var placeholderRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`^(base_url|api_key_env|api_key|model|home|workspace|(settings|secret)\.[A-Za-z0-9_]+)$`)
}}

// expand fills the placeholders of s in one pass: text a value brings in
// is never expanded again (a setting's value cannot pull a secret into
// argv). Braces that are not a known placeholder stay as they are.
func expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			break
		}
		key := s[i+1 : i+j]
		b.WriteString(s[:i])
		if v, ok := vars[key]; ok && placeholderRE.Get().MatchString(key) {
			b.WriteString(v)
			s = s[i+j+1:]
		} else { // not a placeholder: keep the brace, look inside
			b.WriteByte('{')
			s = s[i+1:]
		}
	}
	b.WriteString(s)
	return b.String()
}

// argv is the agent's arguments: the profile's, model_args when a model is
// configured, the policy's, the optional groups whose placeholders all
// have values, then extra (harness.settings.extra_args, not expanded).
func (p Profile) argv(vars map[string]string, policy string, extra []string) []string {
	args := make([]string, 0, len(p.Args)+8)
	for _, a := range p.Args {
		args = append(args, expand(a, vars))
	}
	if vars["model"] != "" {
		for _, a := range p.ModelArgs {
			args = append(args, expand(a, vars))
		}
	}
	for _, a := range p.PolicyArgs[policy] {
		args = append(args, expand(a, vars))
	}
	for _, g := range p.OptionalArgs {
		if slices.ContainsFunc(g, func(a string) bool { return unresolved(a, vars) }) {
			continue
		}
		for _, a := range g {
			args = append(args, expand(a, vars))
		}
	}
	return append(args, extra...)
}

// env is what the profile adds to the agent's environment; entries with a
// placeholder that has no value are left out.
func (p Profile) env(vars map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range p.Env {
		if !unresolved(v, vars) {
			out[k] = expand(v, vars)
		}
	}
	return out
}
