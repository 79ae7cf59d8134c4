package codex

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

func ptr[T any](v T) *T { return &v }

// cArgs returns the values of the -c options in args, in order.
func cArgs(args []string) []string {
	var out []string
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-c" {
			out = append(out, args[i+1])
			i++
		}
	}
	return out
}

func TestArgs(t *testing.T) {
	offline := []string{
		"analytics.enabled=false", "check_for_update_on_startup=false", "feedback.enabled=false",
		`otel.exporter="none"`, `otel.trace_exporter="none"`, `otel.metrics_exporter="none"`,
	}
	tests := []struct {
		name     string
		models   map[string]contract.AgentModel
		settings map[string]any
		want     []string // the -c values after the offline switches
	}{
		{
			name:   "openai without base_url uses the OpenAI endpoint and OPENAI_API_KEY",
			models: map[string]contract.AgentModel{"default": {Provider: "openai", Model: "gpt-5.1-codex"}},
			want: []string{
				`model_provider="fabric"`, `model_providers.fabric.name="fabric"`,
				`model_providers.fabric.base_url="https://api.openai.com/v1"`,
				`model_providers.fabric.env_key="OPENAI_API_KEY"`,
				`model_providers.fabric.wire_api="responses"`, `model="gpt-5.1-codex"`,
			},
		},
		{
			name: "custom provider, reasoning effort, overrides sorted and typed",
			models: map[string]contract.AgentModel{"default": {
				Provider: "nim", Model: "my/model", APIKeyEnv: ptr("NIM_KEY"), BaseURL: ptr("http://127.0.0.1:8000/v1"),
			}},
			settings: map[string]any{
				"reasoning_effort": "high",
				"config_overrides": map[string]any{
					"model_providers.fabric.request_max_retries": float64(0),
					"sandbox_workspace_write.network_access":     true,
					"model_verbosity":                            "low",
					"tool_output_token_limit":                    1.5,
				},
			},
			want: []string{
				`model_provider="fabric"`, `model_providers.fabric.name="fabric"`,
				`model_providers.fabric.base_url="http://127.0.0.1:8000/v1"`,
				`model_providers.fabric.env_key="NIM_KEY"`,
				`model_providers.fabric.wire_api="responses"`, `model="my/model"`,
				`model_reasoning_effort="high"`,
				"model_providers.fabric.request_max_retries=0",
				`model_verbosity="low"`,
				"sandbox_workspace_write.network_access=true",
				"tool_output_token_limit=1.5",
			},
		},
		{
			name: "the only role when there is no default; values are TOML-quoted",
			models: map[string]contract.AgentModel{"coder": {
				Provider: "openai", Model: `we"ird\model`, BaseURL: ptr("https://proxy.example/v1"), APIKeyEnv: ptr("PROXY_KEY"),
			}},
			want: []string{
				`model_provider="fabric"`, `model_providers.fabric.name="fabric"`,
				`model_providers.fabric.base_url="https://proxy.example/v1"`,
				`model_providers.fabric.env_key="PROXY_KEY"`,
				`model_providers.fabric.wire_api="responses"`, `model="we\"ird\\model"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := parseSettings(&contract.AgentHarnessConfig{Settings: tt.settings})
			if err != nil {
				t.Fatal(err)
			}
			m, err := selectModel(tt.models)
			if err != nil {
				t.Fatal(err)
			}
			args, err := serverArgs(m, set)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(args[:3], []string{"app-server", "--listen", "stdio://"}) {
				t.Errorf("args start %q", args[:3])
			}
			for _, f := range []string{"plugins", "remote_plugin", "api_key_model_discovery"} {
				if i := slices.Index(args, f); i < 1 || args[i-1] != "--disable" {
					t.Errorf("feature %s not disabled: %q", f, args)
				}
			}
			got := cArgs(args)
			if !slices.Equal(got[:len(offline)], offline) {
				t.Errorf("offline switches %q", got[:len(offline)])
			}
			if !slices.Equal(got[len(offline):], tt.want) {
				t.Errorf("-c values\n got %q\nwant %q", got[len(offline):], tt.want)
			}
		})
	}
}

// TestArgsNeverCarryTheKey: the key's value is read by codex from its
// environment; Fabric only names the variable.
func TestArgsNeverCarryTheKey(t *testing.T) {
	t.Setenv("SECRET_KEY_VAR", "sk-value-never-in-argv")
	m, err := selectModel(map[string]contract.AgentModel{"default": {Provider: "x", Model: "m", APIKeyEnv: ptr("SECRET_KEY_VAR"), BaseURL: ptr("http://h/v1")}})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := serverArgs(m, Settings{})
	if strings.Contains(strings.Join(args, " "), "sk-value-never-in-argv") {
		t.Fatal("the key value is in argv")
	}
}

func TestSelectModel(t *testing.T) {
	tests := []struct {
		name    string
		models  map[string]contract.AgentModel
		role    string
		wantErr string
	}{
		{"default wins", map[string]contract.AgentModel{"default": {Provider: "openai", Model: "a"}, "other": {Provider: "openai", Model: "b"}}, "default", ""},
		{"single role", map[string]contract.AgentModel{"fast": {Provider: "openai", Model: "a"}}, "fast", ""},
		{"ambiguous", map[string]contract.AgentModel{"a": {Provider: "openai", Model: "a"}, "b": {Provider: "openai", Model: "b"}}, "", `none is named "default"`},
		{"none", nil, "", "no model configured"},
		{"custom provider without base_url", map[string]contract.AgentModel{"default": {Provider: "nim", Model: "m", APIKeyEnv: ptr("K")}}, "", "needs base_url and api_key_env"},
		{"custom provider without key env", map[string]contract.AgentModel{"default": {Provider: "nim", Model: "m", BaseURL: ptr("http://h/v1")}}, "", "needs base_url and api_key_env"},
		{"bad env name", map[string]contract.AgentModel{"default": {Provider: "openai", Model: "m", APIKeyEnv: ptr("1BAD")}}, "", "not an environment variable name"},
		{"bad url", map[string]contract.AgentModel{"default": {Provider: "openai", Model: "m", BaseURL: ptr("ftp://h")}}, "", "not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := selectModel(tt.models)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || m.Role != tt.role {
				t.Fatalf("role %q, err %v; want %q", m.Role, err, tt.role)
			}
		})
	}
}

func TestParseSettings(t *testing.T) {
	s, err := parseSettings(nil)
	if err != nil || s.Sandbox != SandboxReadOnly || s.ApprovalMode != ApprovalDenyAll {
		t.Fatalf("defaults %+v %v", s, err)
	}
	for _, bad := range []map[string]any{
		{"nope": 1},
		{"sandbox": "everything"},
		{"approval_mode": "yolo"},
		{"reasoning_effort": "max"},
		{"config_overrides": map[string]any{"bad key": 1}},
		{"config_overrides": map[string]any{"a.b": []any{1}}},
		{"config_overrides": map[string]any{"a.b": map[string]any{}}},
	} {
		if _, err := parseSettings(&contract.AgentHarnessConfig{Settings: bad}); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestThreadAndTurnParams(t *testing.T) {
	s, _ := parseSettings(&contract.AgentHarnessConfig{Settings: map[string]any{
		"sandbox": "workspace-write", "developer_instructions": "dev", "service_tier": "flex",
		"output_schema": map[string]any{"type": "object"},
	}})
	p := threadParams("/ws", s, &contract.AgentInstructionsConfig{System: &contract.AgentInstruction{Content: "base"}})
	want := map[string]any{
		"cwd": "/ws", "approvalPolicy": "never", "approvalsReviewer": "user", "sandbox": "workspace-write",
		"baseInstructions": "base", "developerInstructions": "dev", "serviceTier": "flex",
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("thread params %v", p)
	}
	s.ApprovalMode = ApprovalAutoReview
	if p := threadParams("/ws", s, nil); p["approvalPolicy"] != "on-request" || p["approvalsReviewer"] != "auto_review" || p["baseInstructions"] != nil {
		t.Errorf("auto_review thread params %v", p)
	}
	tp := turnParams("th", "hello", s)
	if tp["threadId"] != "th" || !reflect.DeepEqual(tp["input"], []any{map[string]any{"type": "text", "text": "hello"}}) || tp["outputSchema"] == nil {
		t.Errorf("turn params %v", tp)
	}
}

func TestMCPConfig(t *testing.T) {
	got, err := mcpConfig(&contract.AgentMCPConfig{Servers: map[string]contract.AgentMCPServer{
		"files": {
			Transport: "stdio", URL: "mcp-server-filesystem", Args: []string{"--root", "/w s"},
			Env: map[string]string{"TOKEN": `s"3`, "A": "1"}, AllowedTools: []string{"read"}, BlockedTools: []string{"write"},
		},
		"web": {Transport: "streamable-http", URL: "http://127.0.0.1:9000/mcp", CustomHeaders: map[string]string{"X-Api-Key": "k"}, AllowedTools: []string{}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `# Written by Fabric for one runtime; removed when the runtime stops.

[mcp_servers.files]
command = "mcp-server-filesystem"
args = ["--root", "/w s"]
env = { A = "1", TOKEN = "s\"3" }
enabled_tools = ["read"]
disabled_tools = ["write"]

[mcp_servers.web]
url = "http://127.0.0.1:9000/mcp"
http_headers = { X-Api-Key = "k" }
enabled_tools = []
`
	if string(got) != want {
		t.Errorf("config.toml\n%s\nwant\n%s", got, want)
	}
	if b, err := mcpConfig(nil); b != nil || err != nil {
		t.Errorf("no servers: %q %v", b, err)
	}
	for name, srv := range map[string]contract.AgentMCPServer{
		"sse":      {Transport: "sse", URL: "http://h/sse"},
		"bad.name": {Transport: "stdio", URL: "x"},
		"auth":     {Transport: "streamable-http", URL: "http://h", Authentication: &contract.MCPAuthentication{Type: "oauth2"}},
		"hdrs":     {Transport: "stdio", URL: "x", CustomHeaders: map[string]string{"a": "b"}},
		"httpenv":  {Transport: "streamable-http", URL: "http://h", Env: map[string]string{"a": "b"}},
	} {
		if _, err := mcpConfig(&contract.AgentMCPConfig{Servers: map[string]contract.AgentMCPServer{name: srv}}); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func TestTOML(t *testing.T) {
	for in, want := range map[string]string{
		"plain":        `"plain"`,
		"q\"b\\":       `"q\"b\\"`,
		"a\nb\tc\r":    `"a\nb\tc\r"`,
		"\x00\x1f\x7f": `"\u0000\u001F\u007F"`,
		"ünï ✓":        `"ünï ✓"`,
		"bad\xffutf8":  "\"bad\uFFFDutf8\"",
	} {
		if got := tomlString(in); got != want {
			t.Errorf("tomlString(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[any]string{float64(3): "3", 2.5: "2.5", 1e300: "1e+300", true: "true", "s": `"s"`} {
		if got, err := tomlScalar(in); err != nil || got != want {
			t.Errorf("tomlScalar(%v) = %s, %v; want %s", in, got, err, want)
		}
	}
	if tomlKey("a.b") != `"a.b"` || tomlKey("X-Api_1") != "X-Api_1" {
		t.Error("tomlKey")
	}
}

func TestLinkSkills(t *testing.T) {
	src := t.TempDir()
	mk := func(rel string) string {
		d := filepath.Join(src, rel)
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "SKILL.md"), []byte("---\nname: x\ndescription: y\n---\n"), 0o644)
		return d
	}
	single := mk("one/review")
	mk("collection/alpha")
	mk("collection/beta")
	os.MkdirAll(filepath.Join(src, "collection", "not-a-skill"), 0o755)
	other := mk("two/review") // same base name as single
	dst := filepath.Join(t.TempDir(), "skills")
	names, err := linkSkills(dst, []string{single, filepath.Join(src, "collection"), filepath.Join(other, "SKILL.md")})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"review", "alpha", "beta", "review-2"}; !slices.Equal(names, want) {
		t.Fatalf("names %v, want %v", names, want)
	}
	if target, _ := os.Readlink(filepath.Join(dst, "review-2")); target != other {
		t.Errorf("review-2 -> %s", target)
	}
	for _, bad := range []string{filepath.Join(src, "missing"), filepath.Join(src, "collection", "not-a-skill")} {
		if _, err := linkSkills(filepath.Join(t.TempDir(), "s"), []string{bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestEnv(t *testing.T) {
	env := serverEnv([]string{"PATH=/bin", "HOME=/root", "FABRIC_HOST_CHANNEL_FD=3", "FABRIC_HOST_PROTOCOL=fabric.host/v2",
		"FABRIC_BUNDLED_ADAPTER=nvidia.fabric.codex", "TMPDIR=/tmp", "MY_KEY=v", "FABRIC_CODEX_BIN=/x"}, "/p/home", "/p/home/.codex", "/p/tmp")
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s twice", k)
		}
		got[k] = v
	}
	for k, v := range map[string]string{"PATH": "/bin", "HOME": "/p/home", "CODEX_HOME": "/p/home/.codex", "TMPDIR": "/p/tmp", "MY_KEY": "v", "XDG_CONFIG_HOME": "/p/home/.config"} {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"FABRIC_HOST_CHANNEL_FD", "FABRIC_HOST_PROTOCOL", "FABRIC_BUNDLED_ADAPTER", "FABRIC_CODEX_BIN"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s passed to codex", k)
		}
	}
}

func TestResolveBinary(t *testing.T) {
	nm := filepath.Join(t.TempDir(), "node_modules")
	bin := filepath.Join(nm, ".bin")
	pkg := filepath.Join(nm, "@openai", "codex")
	os.MkdirAll(bin, 0o755)
	os.MkdirAll(filepath.Join(pkg, "bin"), 0o755)
	os.WriteFile(filepath.Join(pkg, "bin", "codex.js"), []byte("#!/usr/bin/env node\n"), 0o755)
	os.Symlink("../@openai/codex/bin/codex.js", filepath.Join(bin, "codex"))
	noenv := func(string) string { return "" }

	// Launcher only: it is used as is.
	got, err := resolveBinary(noenv, "/nonexistent"+string(os.PathListSeparator)+bin)
	if err != nil || got != filepath.Join(bin, "codex") {
		t.Fatalf("launcher: %s, %v", got, err)
	}
	// With the platform package: the native binary.
	if p, triple := platformPackage(); p != "" {
		native := filepath.Join(nm, "@openai", p, "vendor", triple, "bin", "codex")
		os.MkdirAll(filepath.Dir(native), 0o755)
		os.WriteFile(native, []byte("\x7fELF"), 0o755)
		if got, err := resolveBinary(noenv, bin); err != nil || got != native {
			t.Fatalf("native: %s, %v; want %s", got, err, native)
		}
	}
	// FABRIC_CODEX_BIN wins; a bad one is an error.
	exe, _ := os.Executable()
	if got, err := resolveBinary(func(k string) string { return map[string]string{envBinary: exe}[k] }, bin); err != nil || got != exe {
		t.Fatalf("override: %s, %v", got, err)
	}
	if _, err := resolveBinary(func(string) string { return "/nonexistent/codex" }, bin); err == nil {
		t.Fatal("a missing override was accepted")
	}
	if _, err := resolveBinary(noenv, t.TempDir()); err == nil {
		t.Fatal("found codex in an empty PATH")
	}
}
