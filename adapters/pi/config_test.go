package pi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

func strp(s string) *string { return &s }

func TestBuildLaunch(t *testing.T) {
	cfg := contract.AgentConfig{
		Models:       map[string]contract.AgentModel{"default": {Provider: "stub", Model: "m1", APIKeyEnv: strp("MY_KEY"), BaseURL: strp("http://127.0.0.1:9/v1/")}},
		Instructions: &contract.AgentInstructionsConfig{System: &contract.AgentInstruction{Content: "be brief", Mode: contract.InstructionAppend}},
		Tools:        &contract.AgentToolsConfig{Enabled: []string{"read", "bash"}, Blocked: []string{"write"}},
		Skills:       &contract.AgentSkillConfig{Paths: []string{"/skills/a"}},
	}
	environ := []string{"PATH=/bin", "MY_KEY=sk-secret-1234", "OPENAI_API_KEY=ambient", "PI_CODING_AGENT_DIR=/ambient", "HOME=/root"}
	d := newPrivateDirs("/rt")
	l, err := buildLaunch(cfg, Settings{}, d, environ)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(l.Models), "sk-secret-1234") || strings.Contains(strings.Join(l.Args, " "), "sk-secret-1234") {
		t.Fatal("the key value reached models.json or the command line")
	}
	var mj struct {
		Providers map[string]struct {
			BaseURL string `json:"baseUrl"`
			API     string `json:"api"`
			APIKey  string `json:"apiKey"`
		} `json:"providers"`
	}
	if err := json.Unmarshal(l.Models, &mj); err != nil {
		t.Fatal(err)
	}
	p := mj.Providers["fabric"]
	if p.BaseURL != "http://127.0.0.1:9/v1" || p.API != "openai-completions" || p.APIKey != "$MY_KEY" {
		t.Errorf("provider %+v", p)
	}
	args := strings.Join(l.Args, " ")
	for _, want := range []string{"--mode rpc", "--offline", "--model fabric/m1", "--append-system-prompt be brief",
		"--tools read,bash", "--exclude-tools write", "--skill /skills/a", "--no-context-files", "--no-extensions"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	for _, want := range []string{"MY_KEY=sk-secret-1234", "PI_OFFLINE=1", "HOME=/rt/pi/home", "PI_CODING_AGENT_DIR=/rt/pi/agent", "PATH=/bin"} {
		if !slices.Contains(l.Env, want) {
			t.Errorf("env lacks %s: %v", want, l.Env)
		}
	}
	for _, bad := range []string{"OPENAI_API_KEY=ambient", "PI_CODING_AGENT_DIR=/ambient", "HOME=/root"} {
		if slices.Contains(l.Env, bad) {
			t.Errorf("env keeps %s", bad)
		}
	}
}

func TestBuildLaunchAnthropicAndErrors(t *testing.T) {
	cfg := contract.AgentConfig{Models: map[string]contract.AgentModel{"default": {Provider: "anthropic", Model: "c", APIKeyEnv: strp("K"), BaseURL: strp("http://h/v1")}}}
	l, err := buildLaunch(cfg, Settings{}, newPrivateDirs("/x"), []string{"K=v"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(l.Models), `"anthropic-messages"`) || !strings.Contains(string(l.Models), `"http://h"`) {
		t.Errorf("models.json %s", l.Models)
	}
	if _, err := buildLaunch(cfg, Settings{}, newPrivateDirs("/x"), nil); err == nil || !strings.Contains(err.Error(), "K") {
		t.Errorf("unset key env: %v", err)
	}
	cfg.Models["default"] = contract.AgentModel{Provider: "x", Model: "m", APIKeyEnv: strp("K")}
	if _, err := buildLaunch(cfg, Settings{}, newPrivateDirs("/x"), []string{"K=v"}); err == nil {
		t.Error("no base_url accepted")
	}
	cfg.Tools = &contract.AgentToolsConfig{Enabled: []string{}}
	cfg.Models["default"] = contract.AgentModel{Provider: "x", Model: "m", APIKeyEnv: strp("K"), BaseURL: strp("http://h/v1")}
	l, err = buildLaunch(cfg, Settings{}, newPrivateDirs("/x"), []string{"K=v"})
	if err != nil || !slices.Contains(l.Args, "--no-tools") {
		t.Errorf("empty tools.enabled: %v %v", l.Args, err)
	}
}

// TestBuildLaunchModelRole: pi uses the role the plan selects ("default",
// else the only one) and refuses several roles without "default" instead
// of picking one of them.
func TestBuildLaunchModelRole(t *testing.T) {
	m := func(model string) contract.AgentModel {
		return contract.AgentModel{Provider: "x", Model: model, APIKeyEnv: strp("K"), BaseURL: strp("http://h/v1")}
	}
	for _, tc := range []struct {
		name   string
		models map[string]contract.AgentModel
		want   string // the model pi is given; "" for an error
	}{
		{"default wins", map[string]contract.AgentModel{"a": m("ma"), "default": m("md")}, "md"},
		{"the only role", map[string]contract.AgentModel{"fast": m("mf")}, "mf"},
		{"ambiguous", map[string]contract.AgentModel{"a": m("ma"), "b": m("mb")}, ""},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := buildLaunch(contract.AgentConfig{Models: tc.models}, Settings{}, newPrivateDirs("/x"), []string{"K=v"})
			switch {
			case tc.want == "" && err == nil:
				t.Fatalf("accepted, model %q", l.Model)
			case tc.want != "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && l.Model != tc.want:
				t.Fatalf("model %q, want %q", l.Model, tc.want)
			}
		})
	}
}
