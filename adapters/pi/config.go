package pi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/lazy"
)

// Error codes of the adapter.
const (
	CodeInvalidSettings = "pi_invalid_settings"
	CodeInvalidConfig   = "pi_invalid_config"
	CodeBinaryNotFound  = "pi_not_found"
	CodeStartFailed     = "pi_start_failed"
	CodeExited          = "pi_exited"
	CodeIO              = "pi_io"
	CodeModelError      = "pi_model_error"
	CodePromptRejected  = "pi_prompt_rejected"
)

// providerName is the provider Fabric defines in models.json.
const providerName = "fabric"

// Settings are the adapter's harness settings.
type Settings struct {
	API           string   `json:"api,omitempty"`
	Thinking      string   `json:"thinking,omitempty"`
	ContextWindow int      `json:"context_window,omitempty"`
	MaxTokens     int      `json:"max_tokens,omitempty"`
	ContextFiles  bool     `json:"context_files,omitempty"`
	Extensions    []string `json:"extensions,omitempty"`
}

// privateDirs are the runtime's private directories under its home: <home>/pi,
// with HOME, TMPDIR and PI_CODING_AGENT_DIR inside.
type privateDirs struct {
	adapterkit.Dirs
	Agent string // PI_CODING_AGENT_DIR
}

// newPrivateDirs lays out the private directories under home.
func newPrivateDirs(home string) privateDirs {
	d := adapterkit.DirsUnder(home, "pi")
	return privateDirs{Dirs: d, Agent: filepath.Join(d.Root, "agent")}
}

// launch is everything needed to start pi.
type launch struct {
	Args    []string
	Env     []string
	Models  []byte // models.json
	Model   string
	KeyEnv  string
	key     string // the key's value, only to scrub it from output
	Workdir string
}

var envName = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) }}

// buildLaunch translates the AgentConfig into pi's command line,
// environment and models.json. environ is the host's environment.
func buildLaunch(cfg contract.AgentConfig, set Settings, dirs privateDirs, environ []string) (*launch, error) {
	role, m, err := adapterkit.Model(cfg)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidConfig, err)
	}
	field := "models." + role
	if m.BaseURL == nil || *m.BaseURL == "" {
		return nil, adapterkit.Errorf(CodeInvalidConfig, "%s.base_url is required: Pi is pointed only at the configured endpoint", field)
	}
	if m.APIKeyEnv == nil || !envName.Get().MatchString(*m.APIKeyEnv) {
		return nil, adapterkit.Errorf(CodeInvalidConfig, "%s.api_key_env must name an environment variable", field)
	}
	keyEnv := *m.APIKeyEnv
	key := lookup(environ, keyEnv)
	if key == "" {
		return nil, adapterkit.Errorf(CodeInvalidConfig, "environment variable %s (%s.api_key_env) is not set", keyEnv, field)
	}
	api := set.API
	if api == "" {
		api = "openai-completions"
		if m.Provider == "anthropic" {
			api = "anthropic-messages"
		}
	}
	baseURL := strings.TrimRight(*m.BaseURL, "/")
	if api == "anthropic-messages" {
		baseURL = strings.TrimSuffix(baseURL, "/v1")
	}
	ctxWin, maxTok := 128000, 4096
	if set.ContextWindow > 0 {
		ctxWin = set.ContextWindow
	}
	if set.MaxTokens > 0 {
		maxTok = set.MaxTokens
	}
	provider := map[string]any{
		"baseUrl": baseURL,
		"api":     api,
		"apiKey":  "$" + keyEnv, // a reference: the value never reaches the disk
		"models": []any{map[string]any{
			"id": m.Model, "name": m.Model, "reasoning": set.Thinking != "" && set.Thinking != "off",
			"input": []string{"text"}, "contextWindow": ctxWin, "maxTokens": maxTok,
		}},
	}
	if api == "openai-completions" {
		provider["compat"] = map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false}
	}
	models, err := json.MarshalIndent(map[string]any{"providers": map[string]any{providerName: provider}}, "", "  ")
	if err != nil {
		return nil, err
	}

	args := []string{"--mode", "rpc", "--offline", "--model", providerName + "/" + m.Model,
		"--session-dir", filepath.Join(dirs.Agent, "sessions"),
		"--no-extensions", "--no-prompt-templates", "--no-themes", "--no-approve"}
	if !set.ContextFiles {
		args = append(args, "--no-context-files")
	}
	if set.Thinking != "" {
		args = append(args, "--thinking", set.Thinking)
	}
	for _, e := range set.Extensions {
		args = append(args, "-e", e)
	}
	if in := cfg.Instructions; in != nil && in.System != nil && in.System.Content != "" {
		if in.System.Mode == contract.InstructionAppend {
			args = append(args, "--append-system-prompt", in.System.Content)
		} else {
			args = append(args, "--system-prompt", in.System.Content)
		}
	}
	if t := cfg.Tools; t != nil {
		if t.Enabled != nil {
			if len(t.Enabled) == 0 {
				args = append(args, "--no-tools")
			} else {
				args = append(args, "--tools", strings.Join(t.Enabled, ","))
			}
		}
		if len(t.Blocked) > 0 {
			args = append(args, "--exclude-tools", strings.Join(t.Blocked, ","))
		}
	}
	if s := cfg.Skills; s != nil && len(s.Paths) > 0 {
		args = append(args, "--no-skills")
		for _, p := range s.Paths {
			args = append(args, "--skill", p)
		}
	} else {
		args = append(args, "--no-skills")
	}

	env := childEnv(environ, keyEnv, key, dirs)
	return &launch{Args: args, Env: env, Models: models, Model: m.Model, KeyEnv: keyEnv, key: key}, nil
}

// childEnv is the host's environment without ambient Pi configuration or
// other providers' credentials, plus the private directories and
// PI_OFFLINE=1. The key variable the config names stays.
func childEnv(environ []string, keyEnv, key string, dirs privateDirs) []string {
	set := append(dirs.Env(), keyEnv+"="+key, "PI_CODING_AGENT_DIR="+dirs.Agent,
		"PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "NO_COLOR=1")
	return adapterkit.ChildEnv(environ, ambient, set...)
}

// ambient are the host variables that must not reach pi: its own
// configuration, other providers' credentials and endpoints, and Fabric's
// variables.
var ambient = []string{"PI_*", "*_API_KEY", "*_AUTH_TOKEN", "*_BASE_URL", "FABRIC_*",
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}

// prepare creates the private directories and writes models.json.
func (l *launch) prepare(d privateDirs) error {
	for _, dir := range []string{d.Agent, d.Home, d.Tmp, filepath.Join(d.Agent, "sessions")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(d.Agent, "models.json"), l.Models, 0o600)
}

func parseSettings(h *contract.AgentHarnessConfig) (Settings, error) {
	var s Settings
	if err := adapterkit.DecodeSettings(h, &s); err != nil {
		return s, err
	}
	return s, nil
}

func lookup(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

func (l *launch) String() string { return fmt.Sprintf("pi %s", strings.Join(l.Args, " ")) }
