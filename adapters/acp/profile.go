package acp

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// EnvProfile names the profile the host runs: a bundled profile name, or a
// JSON Profile for any other ACP agent. Descriptors set it in runner.env.
const EnvProfile = "FABRIC_ACP_PROFILE"

// Profile says how to start one ACP agent and translate FabricConfig for
// it. String values may hold the placeholders {base_url}, {api_key_env},
// {model}, {home} and {workspace}; {api_key} only in Env.
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
}

// Bundled profile names.
const (
	ProfileGemini   = "gemini"
	ProfileQwen     = "qwen"
	ProfileCodexACP = "codex-acp"
	ProfileClaude   = "claude-agent-acp"
)

var quietSettings = `{"security":{"auth":{"selectedType":"%s"},"folderTrust":{"enabled":false}},` +
	`"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},` +
	`"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}`

// Bundled returns the bundled profile with the given name.
func Bundled(name string) (Profile, bool) {
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
	}
	return Profile{}, false
}

// LoadProfile reads the profile named by $FABRIC_ACP_PROFILE: a bundled
// name, or a JSON object (unknown keys are an error).
func LoadProfile(getenv func(string) string) (Profile, error) {
	v := strings.TrimSpace(getenv(EnvProfile))
	if v == "" {
		return Profile{}, fmt.Errorf("%s is not set: the descriptor's runner.env must name a bundled profile or hold a JSON profile", EnvProfile)
	}
	if !strings.HasPrefix(v, "{") {
		p, ok := Bundled(v)
		if !ok {
			return Profile{}, fmt.Errorf("%s=%s: no such bundled profile", EnvProfile, v)
		}
		return p, nil
	}
	var p Profile
	dec := json.NewDecoder(strings.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Profile{}, fmt.Errorf("%s: %w", EnvProfile, err)
	}
	if p.Command == "" {
		return Profile{}, fmt.Errorf("%s: command is required", EnvProfile)
	}
	if p.Name == "" {
		p.Name = p.Command
	}
	return p, nil
}

// expand fills the placeholders of s.
func expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

var _ = os.Getenv
