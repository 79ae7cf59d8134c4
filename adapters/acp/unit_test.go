package acp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/permission"
)

func TestLoadProfile(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	for _, name := range []string{ProfileGemini, ProfileQwen, ProfileCodexACP, ProfileClaude, ProfileOpenClaw} {
		if p, err := loadProfile(env(name)); err != nil || p.Command == "" {
			t.Errorf("%s: %+v %v", name, p, err)
		} else if err := p.check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	p, err := loadProfile(env(`{"command":"my-agent","args":["--acp"],"env":{"MY_KEY":"{api_key}"}}`))
	if err != nil || p.Command != "my-agent" || p.Name != "my-agent" || p.Env["MY_KEY"] != "{api_key}" {
		t.Fatalf("json profile: %+v %v", p, err)
	}
	for _, bad := range []string{"", "nope", `{"args":[]}`, `{"command":"x","unknown":1}`, `{`,
		`{"command":"x","args":["--key","{api_key}"]}`,
		`{"command":"x","settings":{"t":{"kind":"env"}},"optional_args":[["--token","{secret.t}"]]}`,
		`{"command":"x","env":{"T":"{secret.t}"}}`,
		`{"command":"x","settings":{"u":{"kind":"url"}}}`,
		`{"command":"x","settings":{"u":{"kind":"nope"}}}`,
		`{"command":"x","settings":{"command":{"kind":"string"}}}`} {
		if _, err := loadProfile(env(bad)); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestParseSettings(t *testing.T) {
	s, _, err := parseSettings(nil, Profile{})
	if err != nil || s.PermissionPolicy != PolicyAllow {
		t.Fatalf("default: %+v %v", s, err)
	}
	for _, bad := range []map[string]any{{"permission_policy": "maybe"}, {"permission_timeout_seconds": -1}, {"what": 1}, {"gateway_url": "ws://x"}} {
		if _, _, err := parseSettings(&contract.AgentHarnessConfig{Settings: bad}, Profile{}); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	oc, _ := bundledProfile(ProfileOpenClaw)
	s, own, err := parseSettings(&contract.AgentHarnessConfig{Settings: map[string]any{"gateway_url": "ws://127.0.0.1:1", "permission_policy": "deny"}}, oc)
	if err != nil || s.PermissionPolicy != PolicyDeny || own["gateway_url"] != "ws://127.0.0.1:1" {
		t.Fatalf("openclaw settings: %+v %v %v", s, own, err)
	}
}

// TestProfileSettings: a profile's own settings are validated with errors
// naming the field, fill {settings.NAME} / {secret.NAME}, and optional
// argument groups and env entries without a value are left out.
func TestProfileSettings(t *testing.T) {
	oc, _ := bundledProfile(ProfileOpenClaw)
	tokenFile := filepath.Join(t.TempDir(), "dashboard.token")
	if err := os.WriteFile(tokenFile, []byte("tok-secret-123"), 0o600); err != nil {
		t.Fatal(err)
	}
	lookup := func(k string) (string, bool) {
		if k == "MY_GW_TOKEN" {
			return "env-secret-456", true
		}
		return "", false
	}
	vars, err := oc.resolveSettings(map[string]any{}, lookup)
	if err != nil || vars["settings.gateway_url"] != "ws://127.0.0.1:18789" || len(vars) != 1 {
		t.Fatalf("defaults: %v %v", vars, err)
	}
	for _, ok := range []string{"ws://localhost:1", "ws://[::1]:2", "ws://127.0.0.2:3", "wss://10.0.0.1"} {
		if _, err := oc.resolveSettings(map[string]any{"gateway_url": ok}, lookup); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	vars, err = oc.resolveSettings(map[string]any{"gateway_url": "wss://gw.example:443/x", "gateway_token_env": "MY_GW_TOKEN",
		"gateway_token_file": tokenFile, "session_key": "agent:main:fabric"}, lookup)
	if err != nil || vars["secret.gateway_token_env"] != "env-secret-456" || vars["settings.gateway_token_file"] != tokenFile {
		t.Fatalf("all set: %v %v", vars, err)
	}
	for field, bad := range map[string]any{
		"gateway_url":        "http://127.0.0.1:1",
		"gateway_token_env":  "NOT_SET_ANYWHERE",
		"gateway_token_file": "relative/token",
		"session_key":        "",
	} {
		_, err := oc.resolveSettings(map[string]any{field: bad}, lookup)
		if err == nil || !strings.Contains(err.Error(), "settings."+field) {
			t.Errorf("%s=%v: %v, want an error naming settings.%s", field, bad, err, field)
		}
	}
	for _, bad := range []map[string]any{
		{"gateway_url": "ws://user:pw@127.0.0.1:1"}, {"gateway_url": "ws://"}, {"gateway_url": 7},
		{"gateway_url": "ws://gw.example:18789"}, {"gateway_url": "ws://10.0.0.1:18789"},
		{"gateway_token_env": "1BAD"}, {"gateway_token_file": filepath.Join(t.TempDir(), "missing")}, {"gateway_token_file": t.TempDir()},
	} {
		if _, err := oc.resolveSettings(bad, lookup); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	vars["home"] = "/h"
	if unresolved("{settings.gateway_token_file}", vars) || !unresolved("{settings.nope}", vars) || unresolved("{\"json\":1}", vars) {
		t.Error("unresolved")
	}
}

func TestFilesStayInWorkspace(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	c := &client{s: &session{workspace: ws}}
	ctx := context.Background()
	if _, err := c.WriteTextFile(ctx, sdk.WriteTextFileRequest{Path: filepath.Join(ws, "a", "b.txt"), Content: "l1\nl2\nl3\n"}); err != nil {
		t.Fatal(err)
	}
	line, limit := 2, 1
	r, err := c.ReadTextFile(ctx, sdk.ReadTextFileRequest{Path: filepath.Join(ws, "a", "b.txt"), Line: &line, Limit: &limit})
	if err != nil || r.Content != "l2\n" {
		t.Fatalf("read %q %v", r.Content, err)
	}
	for _, p := range []string{filepath.Join(out, "secret"), filepath.Join(ws, "..", filepath.Base(out), "secret"), filepath.Join(ws, "link", "secret"), "relative.txt", "/etc/passwd"} {
		if _, err := c.ReadTextFile(ctx, sdk.ReadTextFileRequest{Path: p}); err == nil {
			t.Errorf("read %s allowed", p)
		}
		if _, err := c.WriteTextFile(ctx, sdk.WriteTextFileRequest{Path: p, Content: "x"}); err == nil {
			t.Errorf("write %s allowed", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "secret")); string(b) != "s" {
		t.Error("a file outside the workspace was changed")
	}
}

type events struct {
	mu    sync.Mutex
	list  []adapterkit.Event
	perms permission.Set // as the host's emitter carries its pending requests
}

func (e *events) PermissionSet() *permission.Set { return &e.perms }

func (e *events) Emit(ev adapterkit.Event) { e.mu.Lock(); e.list = append(e.list, ev); e.mu.Unlock() }

func permReq() sdk.RequestPermissionRequest {
	title := "rm -rf /"
	return sdk.RequestPermissionRequest{SessionId: "s", ToolCall: sdk.ToolCallUpdate{ToolCallId: "t1", Title: &title},
		Options: []sdk.PermissionOption{{OptionId: "yes", Kind: sdk.PermissionOptionKindAllowOnce, Name: "Yes"}, {OptionId: "no", Kind: sdk.PermissionOptionKindRejectOnce, Name: "No"}}}
}

func selected(r sdk.RequestPermissionResponse) string {
	if r.Outcome.Selected != nil {
		return string(r.Outcome.Selected.OptionId)
	}
	return "cancelled"
}

func TestPermissionPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy, want, src string
		decide            string
	}{
		{PolicyAllow, "yes", "policy", ""},
		{PolicyDeny, "no", "policy", ""},
		{PolicyAsk, "no", "timeout", ""},
		{PolicyAsk, "yes", "caller", "allow"},
		{PolicyAsk, "no", "caller", "deny"},
		{PolicyAsk, "no", "caller", "whatever"}, // anything but allow denies
	} {
		t.Run(tc.policy+"-"+tc.decide, func(t *testing.T) {
			ev := &events{}
			s := &session{sessionID: "s"}
			s.current = &turn{events: ev, ctx: context.Background(), policy: tc.policy, timeout: 200 * time.Millisecond, tools: map[string]string{}}
			c := &client{s: s}
			done := make(chan sdk.RequestPermissionResponse, 1)
			go func() {
				r, _ := c.RequestPermission(context.Background(), permReq())
				done <- r
			}()
			if tc.decide != "" {
				deadline := time.Now().Add(2 * time.Second)
				for {
					ev.mu.Lock()
					var id string
					for _, e := range ev.list {
						if e.Kind == adapterkit.EventPermissionRequest {
							id, _ = e.Metadata["request_id"].(string)
						}
					}
					ev.mu.Unlock()
					if id != "" && ev.perms.Decide(id, tc.decide) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("no pending permission request")
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			r := <-done
			if got := selected(r); got != tc.want {
				t.Errorf("selected %s, want %s", got, tc.want)
			}
			last := ev.list[len(ev.list)-1]
			if last.Kind != adapterkit.EventPermissionDecision || last.Metadata["source"] != tc.src {
				t.Errorf("last event %+v", last)
			}
		})
	}
}

func TestMCPServers(t *testing.T) {
	got, err := mcpServers(&contract.AgentMCPConfig{Servers: map[string]contract.AgentMCPServer{
		"b": {Transport: "streamable-http", URL: "http://127.0.0.1:1/mcp", CustomHeaders: map[string]string{"X": "1"}},
		"a": {Transport: "stdio", URL: "mcp-tool", Args: []string{"--x"}, Env: map[string]string{"K": "V"}},
	}})
	if err != nil || len(got) != 2 || got[0].Stdio == nil || got[0].Stdio.Name != "a" || got[1].Http == nil || got[1].Http.Headers[0].Name != "X" {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := mcpServers(&contract.AgentMCPConfig{Servers: map[string]contract.AgentMCPServer{"x": {Transport: "carrier-pigeon", URL: "x"}}}); err == nil {
		t.Error("unknown transport accepted")
	}
}

func TestAgentEnvIsolated(t *testing.T) {
	env := agentEnv([]string{"HOME=/root", "FABRIC_HOST_CHANNEL_FD=3", "PATH=/bin", "OPENAI_API_KEY=other", "DROP_ME=1"}, "/h", "/t", map[string]string{"OPENAI_API_KEY": "mine"}, []string{"DROP_ME"})
	joined := strings.Join(env, "\n")
	for _, want := range []string{"HOME=/h", "TMPDIR=/t", "PATH=/bin", "OPENAI_API_KEY=mine"} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %s", want)
		}
	}
	for _, bad := range []string{"HOME=/root", "FABRIC_HOST_CHANNEL_FD", "OPENAI_API_KEY=other", "DROP_ME"} {
		if strings.Contains(joined, bad) {
			t.Errorf("kept %s", bad)
		}
	}
}

// TestOpenClawCommand: the openclaw profile's argv and env for a token
// file and for a token variable; the token is never in argv, and a
// setting's value cannot pull a secret into argv.
func TestOpenClawCommand(t *testing.T) {
	oc, _ := bundledProfile(ProfileOpenClaw)
	tokenFile := filepath.Join(t.TempDir(), "dashboard.token")
	if err := os.WriteFile(tokenFile, []byte("tok-file-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	lookup := func(k string) (string, bool) {
		return map[string]string{"GW_TOKEN": "tok-env-secret"}[k], k == "GW_TOKEN"
	}
	build := func(raw map[string]any) ([]string, map[string]string) {
		t.Helper()
		vars, err := oc.resolveSettings(raw, lookup)
		if err != nil {
			t.Fatal(err)
		}
		vars["home"], vars["workspace"] = "/h", "/w"
		return oc.argv(vars, PolicyAllow, []string{"--verbose"}), oc.env(vars)
	}

	args, env := build(map[string]any{"gateway_url": "ws://127.0.0.1:4242", "gateway_token_file": tokenFile})
	if want := []string{"acp", "--token-file", tokenFile, "--verbose"}; !slices.Equal(args, want) {
		t.Errorf("argv %q, want %q", args, want)
	}
	if env["OPENCLAW_GATEWAY_URL"] != "ws://127.0.0.1:4242" || env["OPENCLAW_STATE_DIR"] != "/h/.openclaw" {
		t.Errorf("env %v", env)
	}
	if _, ok := env["OPENCLAW_GATEWAY_TOKEN"]; ok {
		t.Error("OPENCLAW_GATEWAY_TOKEN set without gateway_token_env")
	}

	args, env = build(map[string]any{"gateway_token_env": "GW_TOKEN", "session_key": "{secret.gateway_token_env}"})
	if want := []string{"acp", "--session", "{secret.gateway_token_env}", "--verbose"}; !slices.Equal(args, want) {
		t.Errorf("argv %q, want %q", args, want)
	}
	if env["OPENCLAW_GATEWAY_TOKEN"] != "tok-env-secret" || env["OPENCLAW_GATEWAY_URL"] != "ws://127.0.0.1:18789" {
		t.Errorf("env %v", env)
	}
	for _, a := range args {
		if strings.Contains(a, "secret") && a != "{secret.gateway_token_env}" {
			t.Errorf("argv holds %q", a)
		}
	}
	if !slices.Contains(oc.DropEnv, "OPENCLAW_GATEWAY_PASSWORD") {
		t.Error("an inherited OPENCLAW_GATEWAY_PASSWORD would reach the bridge")
	}
}

func TestExpandOnePass(t *testing.T) {
	vars := map[string]string{"model": "{api_key}", "api_key": "k", "home": "/h"}
	if got := expand("{model}|{home}/x|{nope}|{", vars); got != "{api_key}|/h/x|{nope}|{" {
		t.Errorf("expand = %q", got)
	}
	if got := expand(`{"a":{"b":"{home}/c"},"d":"{model}"}`, vars); got != `{"a":{"b":"/h/c"},"d":"{api_key}"}` {
		t.Errorf("expand = %q", got)
	}
}

// TestOpenClawDescriptorMatchesProfile: the descriptor's settings_schema
// lists exactly the adapter's settings and the profile's own, and its
// runner names the profile.
func TestOpenClawDescriptorMatchesProfile(t *testing.T) {
	var d struct {
		Runner struct {
			Env map[string]string `json:"env"`
		} `json:"runner"`
		Settings struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"settings_schema"`
	}
	if err := json.Unmarshal(descriptorOpenClaw, &d); err != nil {
		t.Fatal(err)
	}
	if d.Runner.Env[envProfile] != ProfileOpenClaw {
		t.Errorf("runner.env %v", d.Runner.Env)
	}
	oc, _ := bundledProfile(ProfileOpenClaw)
	want := slices.Clone(adapterSettings)
	for k := range oc.Settings {
		want = append(want, k)
	}
	var got []string
	for k := range d.Settings.Properties {
		got = append(got, k)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("settings_schema properties %v, want %v", got, want)
	}
}

// TestDroidAndKiloProfiles: what the droid and kilo profiles give their
// agent for a configured model: the switches that keep each on loopback
// (Droid calls Factory's hosts without FACTORY_AIRGAP_ENABLED), the model
// key in env only, valid JSON configuration files naming FabricConfig's
// URL, Kilo's configuration file under the private HOME (Kilo writes into
// it), and descriptors that name their profile.
func TestDroidAndKiloProfiles(t *testing.T) {
	vars := map[string]string{
		"home": "/rt/home", "workspace": "/ws", "model": "m-1", "base_url": "http://127.0.0.1:9/v1",
		"api_key_env": "MY_KEY", "api_key": "sk-value-never-in-files",
	}
	cases := []struct {
		profile    string
		descriptor []byte
		argv       []string
		env        map[string]string
		file       string
		fileHas    []string
	}{
		{ProfileDroid, descriptorDroid,
			[]string{"exec", "--output-format", "acp", "-m", "custom:m-1"},
			map[string]string{"FACTORY_AIRGAP_ENABLED": "true", "FABRIC_DROID_MODEL_KEY": "sk-value-never-in-files"},
			".factory/settings.json",
			[]string{`"baseUrl":"http://127.0.0.1:9/v1"`, `"model":"m-1"`, `"apiKey":"${FABRIC_DROID_MODEL_KEY}"`}},
		{ProfileKilo, descriptorKilo,
			[]string{"acp"},
			map[string]string{"KILO_CONFIG": "/rt/home/.fabric-kilo/kilo.json", "KILO_DISABLE_PROJECT_CONFIG": "1",
				"KILO_TELEMETRY_LEVEL": "off", "KILO_DISABLE_MODELS_FETCH": "1", "FABRIC_KILO_MODEL_KEY": "sk-value-never-in-files",
				"KILO_PERMISSION": `{"bash":"ask","edit":"ask","webfetch":"ask"}`},
			".fabric-kilo/kilo.json",
			[]string{`"baseURL":"http://127.0.0.1:9/v1"`, `"model":"fabric/m-1"`, `"apiKey":"{env:FABRIC_KILO_MODEL_KEY}"`, `"enabled_providers":["fabric"]`}},
	}
	for _, c := range cases {
		t.Run(c.profile, func(t *testing.T) {
			p, ok := bundledProfile(c.profile)
			if !ok {
				t.Fatal("no such profile")
			}
			if err := p.check(); err != nil {
				t.Fatal(err)
			}
			if got := p.argv(vars, PolicyAllow, nil); !slices.Equal(got, c.argv) {
				t.Errorf("argv %q, want %q", got, c.argv)
			}
			env := p.env(vars)
			for k, v := range c.env {
				if env[k] != v {
					t.Errorf("env %s=%q, want %q", k, env[k], v)
				}
			}
			content, ok := p.Files[c.file]
			if !ok {
				t.Fatalf("no file %s in %v", c.file, p.Files)
			}
			got := expand(content, vars)
			if !json.Valid([]byte(got)) {
				t.Fatalf("%s is not JSON: %s", c.file, got)
			}
			for _, want := range c.fileHas {
				if !strings.Contains(got, want) {
					t.Errorf("%s lacks %s: %s", c.file, want, got)
				}
			}
			if strings.Contains(got, vars["api_key"]) {
				t.Errorf("%s holds the key's value", c.file)
			}
			var d struct {
				Runner struct {
					Env map[string]string `json:"env"`
				} `json:"runner"`
			}
			if err := json.Unmarshal(c.descriptor, &d); err != nil {
				t.Fatal(err)
			}
			if d.Runner.Env[envProfile] != c.profile {
				t.Errorf("descriptor runner.env %v", d.Runner.Env)
			}
		})
	}
}

// TestStartModelRole: the adapter uses the role the plan selects
// ("default", else the only one); several roles without "default" are an
// invalid config, as in every other adapter, not the first role by name.
func TestStartModelRole(t *testing.T) {
	t.Setenv("FABRIC_ACP_PROFILE", `{"command":"/nonexistent/fabric-acp-agent"}`)
	m := contract.AgentModel{Provider: "x", Model: "m"}
	for _, tc := range []struct {
		name   string
		models map[string]contract.AgentModel
		code   string
	}{
		{"ambiguous", map[string]contract.AgentModel{"a": m, "b": m}, CodeInvalidConfig},
		{"default among several", map[string]contract.AgentModel{"a": m, "default": m}, CodeBinaryNotFound},
		{"the only role", map[string]contract.AgentModel{"fast": m}, CodeBinaryNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			in := adapterkit.StartInput{Home: t.TempDir(), Config: contract.AgentConfig{Models: tc.models}}
			in.RuntimeContext.Environment.Workspace = &ws
			sess, err := New().Start(t.Context(), in)
			if sess != nil {
				_ = sess.Stop(t.Context())
			}
			var ae *adapterkit.Error
			if !errors.As(err, &ae) || ae.Code != tc.code {
				t.Fatalf("Start: %v, want code %s", err, tc.code)
			}
		})
	}
}
