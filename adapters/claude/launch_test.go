package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
)

func ptr[T any](v T) *T { return &v }

// flagValue returns the value after flag in args, and whether flag is there.
func flagValue(args []string, flag string) (string, bool) {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return "", false
	}
	return args[i+1], true
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

var testDirs = newPrivateDirs("/fabric/home")

func baseModel() map[string]contract.AgentModel {
	return map[string]contract.AgentModel{"default": {
		Provider: "anthropic-compatible", Model: "claude-test",
		BaseURL: ptr("http://127.0.0.1:8080/v1/"), APIKeyEnv: ptr("MY_KEY"),
	}}
}

func TestBuildLaunchFlags(t *testing.T) {
	skillDir := t.TempDir()
	os.MkdirAll(filepath.Join(skillDir, "review"), 0o755)
	os.WriteFile(filepath.Join(skillDir, "review", "SKILL.md"), []byte("---\nname: review\n---\n"), 0o644)

	tests := []struct {
		name     string
		cfg      contract.AgentConfig
		set      Settings
		want     map[string]string // flag -> value ("" for a flag without value check)
		absent   []string
		wantArgs []string // present as-is
	}{
		{
			name: "defaults",
			cfg:  contract.AgentConfig{Models: baseModel()},
			want: map[string]string{"--model": "claude-test", "--permission-mode": "default", "--setting-sources": "", "--input-format": "stream-json", "--output-format": "stream-json"},
			absent: []string{"--bare", "--max-budget-usd", "--max-turns", "--system-prompt-file", "--append-system-prompt-file",
				"--tools", "--allowedTools", "--disallowedTools", "--mcp-config", "--effort", "--plugin-dir"},
			wantArgs: []string{"-p", "--verbose", "--include-partial-messages", "--no-session-persistence"},
		},
		{
			name:     "settings",
			cfg:      contract.AgentConfig{Models: baseModel(), Runtime: &contract.AgentRuntimeConfig{MaxTurns: ptr(uint32(7))}},
			set:      Settings{PermissionMode: PermissionAcceptEdits, SettingSources: []string{"project", "local"}, MaxBudgetUSD: ptr(0.25), Bare: true, Effort: "high"},
			want:     map[string]string{"--permission-mode": "acceptEdits", "--setting-sources": "project,local", "--max-budget-usd": "0.25", "--max-turns": "7", "--effort": "high"},
			wantArgs: []string{"--bare"},
		},
		{
			name: "tools enabled and blocked",
			cfg: contract.AgentConfig{Models: baseModel(), Tools: &contract.AgentToolsConfig{
				Enabled: []string{"Bash(git *)", "Read", "mcp__files__read", "Bash"}, Blocked: []string{"WebFetch", "WebSearch"}}},
			want: map[string]string{"--tools": "Bash,Read", "--allowedTools": "Bash(git *),Read,mcp__files__read,Bash", "--disallowedTools": "WebFetch,WebSearch"},
		},
		{
			name:   "no tools",
			cfg:    contract.AgentConfig{Models: baseModel(), Tools: &contract.AgentToolsConfig{Enabled: []string{}}},
			want:   map[string]string{"--tools": ""},
			absent: []string{"--allowedTools"},
		},
		{
			name:   "blocked only keeps the default tools",
			cfg:    contract.AgentConfig{Models: baseModel(), Tools: &contract.AgentToolsConfig{Blocked: []string{"Bash"}}},
			want:   map[string]string{"--disallowedTools": "Bash"},
			absent: []string{"--tools", "--allowedTools"},
		},
		{
			name:   "system prompt replace",
			cfg:    contract.AgentConfig{Models: baseModel(), Instructions: &contract.AgentInstructionsConfig{System: &contract.AgentInstruction{Content: "-Be terse.", Mode: "replace"}}},
			want:   map[string]string{"--system-prompt-file": filepath.Join(testDirs.Root, "system-prompt.md")},
			absent: []string{"--append-system-prompt-file"},
		},
		{
			name:   "system prompt append",
			cfg:    contract.AgentConfig{Models: baseModel(), Instructions: &contract.AgentInstructionsConfig{System: &contract.AgentInstruction{Content: "Be terse.", Mode: "append"}}},
			want:   map[string]string{"--append-system-prompt-file": filepath.Join(testDirs.Root, "system-prompt.md")},
			absent: []string{"--system-prompt-file"},
		},
		{
			name: "mcp",
			cfg: contract.AgentConfig{Models: baseModel(), MCP: &contract.AgentMCPConfig{Servers: map[string]contract.AgentMCPServer{
				"files": {Transport: "stdio", URL: "mcp-files", Args: []string{"--root", "/w"}, Env: map[string]string{"LOG": "1"}, BlockedTools: []string{"delete"}},
				"web":   {Transport: "streamable-http", URL: "http://127.0.0.1:9/mcp", CustomHeaders: map[string]string{"X-A": "b"}, AllowedTools: []string{}},
			}}},
			want:     map[string]string{"--mcp-config": filepath.Join(testDirs.Root, "mcp.json"), "--disallowedTools": "mcp__files__delete,mcp__web"},
			wantArgs: []string{"--strict-mcp-config"},
		},
		{
			name:   "skills add the private user source",
			cfg:    contract.AgentConfig{Models: baseModel(), Skills: &contract.AgentSkillConfig{Paths: []string{skillDir}}},
			set:    Settings{SettingSources: []string{"project"}},
			want:   map[string]string{"--setting-sources": "user,project"},
			absent: []string{"--plugin-dir"},
		},
		{
			name:     "skills with bare become a session plugin",
			cfg:      contract.AgentConfig{Models: baseModel(), Skills: &contract.AgentSkillConfig{Paths: []string{skillDir}}},
			set:      Settings{Bare: true},
			want:     map[string]string{"--setting-sources": "", "--plugin-dir": filepath.Join(testDirs.Root, "plugin")},
			wantArgs: []string{"--bare"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.set.PermissionMode == "" {
				tc.set.PermissionMode = PermissionDefault
			}
			l, err := buildLaunch(launchInput{Config: tc.cfg, Settings: tc.set, Dirs: testDirs, Environ: []string{"MY_KEY=sk-123456"}})
			if err != nil {
				t.Fatal(err)
			}
			for flag, want := range tc.want {
				got, ok := flagValue(l.Args, flag)
				if !ok || got != want {
					t.Errorf("%s = %q (present %v), want %q\nargs %q", flag, got, ok, want, l.Args)
				}
			}
			for _, flag := range tc.absent {
				if slices.Contains(l.Args, flag) {
					t.Errorf("%s present: %q", flag, l.Args)
				}
			}
			for _, a := range tc.wantArgs {
				if !slices.Contains(l.Args, a) {
					t.Errorf("%s missing: %q", a, l.Args)
				}
			}
			if strings.Contains(strings.Join(l.Args, " "), "sk-123456") {
				t.Error("the key is on the command line")
			}
			for p, b := range l.Files {
				if strings.Contains(string(b), "sk-123456") {
					t.Errorf("the key is in %s", p)
				}
			}
		})
	}
}

func TestBuildLaunchFiles(t *testing.T) {
	skillDir := t.TempDir()
	os.MkdirAll(filepath.Join(skillDir, "review"), 0o755)
	os.WriteFile(filepath.Join(skillDir, "review", "SKILL.md"), []byte("x"), 0o644)
	l, err := buildLaunch(launchInput{
		Config: contract.AgentConfig{
			Models:       baseModel(),
			Instructions: &contract.AgentInstructionsConfig{System: &contract.AgentInstruction{Content: "Be terse."}},
			MCP: &contract.AgentMCPConfig{Servers: map[string]contract.AgentMCPServer{
				"files": {Transport: "stdio", URL: "mcp-files", Args: []string{"--root", "/w"}, Env: map[string]string{"LOG": "1"}},
				"sse":   {Transport: "sse", URL: "http://127.0.0.1:9/sse"},
			}},
			Skills: &contract.AgentSkillConfig{Paths: []string{filepath.Join(skillDir, "review", "SKILL.md")}},
		},
		Settings: Settings{PermissionMode: PermissionDefault}, Dirs: testDirs, Environ: []string{"MY_KEY=k"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(l.Files[filepath.Join(testDirs.Root, "system-prompt.md")]); got != "Be terse." {
		t.Errorf("system prompt file %q", got)
	}
	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal(l.Files[filepath.Join(testDirs.Root, "mcp.json")], &doc); err != nil {
		t.Fatal(err)
	}
	files := doc.MCPServers["files"]
	if files["type"] != "stdio" || files["command"] != "mcp-files" || files["env"].(map[string]any)["LOG"] != "1" {
		t.Errorf("stdio server %v", files)
	}
	if s := doc.MCPServers["sse"]; s["type"] != "sse" || s["url"] != "http://127.0.0.1:9/sse" {
		t.Errorf("sse server %v", s)
	}
	if got := l.Links[filepath.Join(testDirs.Config, "skills", "review")]; got != filepath.Join(skillDir, "review") {
		t.Errorf("skill links %v", l.Links)
	}
}

func TestBuildLaunchEnv(t *testing.T) {
	host := []string{
		"PATH=/usr/bin", "LANG=C.UTF-8", "MY_KEY=sk-live-123",
		"ANTHROPIC_BASE_URL=https://api.anthropic.com", "ANTHROPIC_AUTH_TOKEN=t", "ANTHROPIC_API_KEY=ambient",
		"CLAUDE_CONFIG_DIR=/root/.claude", "CLAUDE_CODE_USE_BEDROCK=1", "HOME=/root", "TMPDIR=/tmp",
		"FABRIC_HOME=/fabric/home", "FABRIC_HOST_CHANNEL_FD=3", "HTTPS_PROXY=http://proxy:3128",
	}
	tests := []struct {
		name    string
		cfg     contract.AgentConfig
		set     Settings
		root    bool
		tel     map[string]string
		want    map[string]string
		absent  []string
		errCode string
	}{
		{
			name: "custom provider",
			cfg:  contract.AgentConfig{Models: baseModel()},
			want: map[string]string{
				"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080", "ANTHROPIC_API_KEY": "sk-live-123",
				"HOME": testDirs.Home, "CLAUDE_CONFIG_DIR": testDirs.Config, "TMPDIR": testDirs.Tmp,
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
				"PATH": "/usr/bin", "LANG": "C.UTF-8", "HTTPS_PROXY": "http://proxy:3128",
			},
			absent: []string{"ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "FABRIC_HOME", "FABRIC_HOST_CHANNEL_FD", "IS_SANDBOX", "CLAUDE_CODE_MAX_RETRIES"},
		},
		{
			name:   "anthropic without key env uses ANTHROPIC_API_KEY",
			cfg:    contract.AgentConfig{Models: map[string]contract.AgentModel{"default": {Provider: "anthropic", Model: "claude-sonnet-4-5"}}},
			want:   map[string]string{"ANTHROPIC_API_KEY": "ambient"},
			absent: []string{"ANTHROPIC_BASE_URL"},
		},
		{
			name: "bypass as root",
			cfg:  contract.AgentConfig{Models: baseModel()},
			set:  Settings{PermissionMode: PermissionBypass, MaxRetries: ptr(0)},
			root: true,
			want: map[string]string{"IS_SANDBOX": "1", "CLAUDE_CODE_MAX_RETRIES": "0"},
		},
		{
			name:   "bypass as a user",
			cfg:    contract.AgentConfig{Models: baseModel()},
			set:    Settings{PermissionMode: PermissionBypass},
			absent: []string{"IS_SANDBOX"},
		},
		{
			name: "settings env and telemetry env never override Fabric's",
			cfg:  contract.AgentConfig{Models: baseModel()},
			set:  Settings{Env: map[string]string{"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "4096", "HOME": "/elsewhere", "ANTHROPIC_BASE_URL": "http://evil"}},
			tel:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
			want: map[string]string{"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "4096", "HOME": testDirs.Home, "ANTHROPIC_BASE_URL": "http://127.0.0.1:8080", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
		},
		{
			name:    "missing key variable",
			cfg:     contract.AgentConfig{Models: map[string]contract.AgentModel{"default": {Provider: "x", Model: "m", BaseURL: ptr("http://h"), APIKeyEnv: ptr("NOPE")}}},
			errCode: CodeAPIKeyMissing,
		},
		{
			name:    "ambiguous roles",
			cfg:     contract.AgentConfig{Models: map[string]contract.AgentModel{"a": {Provider: "anthropic", Model: "m"}, "b": {Provider: "anthropic", Model: "n"}}},
			errCode: CodeInvalidConfig,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.set.PermissionMode == "" {
				tc.set.PermissionMode = PermissionDefault
			}
			l, err := buildLaunch(launchInput{Config: tc.cfg, Settings: tc.set, Dirs: testDirs, Environ: host, IsRoot: tc.root, TelemetryEnv: tc.tel})
			if tc.errCode != "" {
				ae, ok := err.(*adapterkit.Error)
				if !ok || ae.Code != tc.errCode {
					t.Fatalf("err %v, want %s", err, tc.errCode)
				}
				if strings.Contains(ae.Message, "sk-live-123") {
					t.Error("the error shows the key")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			env := envMap(l.Env)
			for k, v := range tc.want {
				if env[k] != v {
					t.Errorf("%s=%q, want %q", k, env[k], v)
				}
			}
			for _, k := range tc.absent {
				if _, ok := env[k]; ok {
					t.Errorf("%s is set (%q)", k, env[k])
				}
			}
		})
	}
}

func TestAnthropicBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080":        "http://127.0.0.1:8080",
		"http://127.0.0.1:8080/":       "http://127.0.0.1:8080",
		"http://127.0.0.1:8080/v1":     "http://127.0.0.1:8080",
		"http://127.0.0.1:8080/v1/":    "http://127.0.0.1:8080",
		"https://gw.example/anthropic": "https://gw.example/anthropic",
		"https://gw.example/x/v1":      "https://gw.example/x",
		" https://gw.example/v1beta/ ": "https://gw.example/v1beta",
	} {
		if got := anthropicBaseURL(in); got != want {
			t.Errorf("anthropicBaseURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseSettings(t *testing.T) {
	ok := []map[string]any{
		nil,
		{"setting_sources": []any{"user", "project"}, "max_budget_usd": 1.5, "permission_mode": "bypassPermissions"},
		{"bare": true, "max_retries": 0, "effort": "low", "env": map[string]any{"A_B": "1"}, "initialize_timeout_seconds": 5},
	}
	for _, s := range ok {
		if _, err := parseSettings(&contract.AgentHarnessConfig{Settings: s}); err != nil {
			t.Errorf("%v: %v", s, err)
		}
	}
	bad := []map[string]any{
		{"permission_mode": "yolo"},
		{"setting_sources": []any{"global"}},
		{"setting_sources": []any{"user", "user"}},
		{"max_budget_usd": 0},
		{"max_retries": -1},
		{"effort": "extreme"},
		{"env": map[string]any{"1BAD": "x"}},
		{"initialize_timeout_seconds": 0},
		{"unknown": true},
	}
	for _, s := range bad {
		if _, err := parseSettings(&contract.AgentHarnessConfig{Settings: s}); err == nil {
			t.Errorf("%v accepted", s)
		}
	}
	s, _ := parseSettings(nil)
	if s.PermissionMode != PermissionDefault || s.initializeTimeout() != defaultInitializeTimeout {
		t.Errorf("defaults %+v", s)
	}
}

func TestResolveSkills(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b"} {
		os.MkdirAll(filepath.Join(dir, "set", n), 0o755)
		os.WriteFile(filepath.Join(dir, "set", n, "SKILL.md"), []byte("x"), 0o644)
	}
	os.MkdirAll(filepath.Join(dir, "other", "a"), 0o755)
	os.WriteFile(filepath.Join(dir, "other", "a", "SKILL.md"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)

	got, err := resolveSkills(&contract.AgentSkillConfig{Paths: []string{filepath.Join(dir, "set")}})
	if err != nil || len(got) != 2 || got[0].name != "a" || got[1].name != "b" {
		t.Errorf("directory of skills: %+v, %v", got, err)
	}
	if _, err := resolveSkills(&contract.AgentSkillConfig{Paths: []string{filepath.Join(dir, "set"), filepath.Join(dir, "other", "a")}}); err == nil {
		t.Error("two skills named a accepted")
	}
	if _, err := resolveSkills(&contract.AgentSkillConfig{Paths: []string{filepath.Join(dir, "empty")}}); err == nil {
		t.Error("a directory without skills accepted")
	}
	if _, err := resolveSkills(&contract.AgentSkillConfig{Paths: []string{filepath.Join(dir, "missing")}}); err == nil {
		t.Error("a missing path accepted")
	}
}

func TestResolveBinary(t *testing.T) {
	dir := t.TempDir()
	scope := filepath.Join(dir, "node_modules", "@anthropic-ai")
	pkgBin := filepath.Join(scope, "claude-code", "bin", "claude.exe")
	native := filepath.Join(scope, platformPackages()[0], "claude")
	for _, p := range []string{pkgBin, native} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("\x7fELF"), 0o755)
	}
	binDir := filepath.Join(dir, "node_modules", ".bin")
	os.MkdirAll(binDir, 0o755)
	os.Symlink(pkgBin, filepath.Join(binDir, "claude"))
	plain := filepath.Join(dir, "plain")
	os.MkdirAll(plain, 0o755)
	os.WriteFile(filepath.Join(plain, "claude"), []byte("#!/bin/sh\n"), 0o755)

	noEnv := func(string) (string, bool) { return "", false }
	if got, err := resolveBinary(noEnv, binDir); err != nil || got != native {
		t.Errorf("npm shim: %q, %v; want the vendored native binary %q", got, err, native)
	}
	if got, err := resolveBinary(noEnv, "/nonexistent"+string(filepath.ListSeparator)+plain); err != nil || got != filepath.Join(plain, "claude") {
		t.Errorf("plain: %q, %v", got, err)
	}
	env := func(k string) (string, bool) { return filepath.Join(plain, "claude"), k == envBinary }
	if got, err := resolveBinary(env, binDir); err != nil || got != filepath.Join(plain, "claude") {
		t.Errorf("%s: %q, %v", envBinary, got, err)
	}
	bad := func(k string) (string, bool) { return "/nonexistent/claude", k == envBinary }
	if _, err := resolveBinary(bad, binDir); err == nil {
		t.Errorf("a missing %s accepted", envBinary)
	}
	if _, err := resolveBinary(noEnv, t.TempDir()); err == nil {
		t.Error("found claude on an empty PATH")
	}
}
