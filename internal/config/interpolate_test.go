package config_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/config"
)

// server is one MCP server "s" with the given extra fields, from line 8.
func server(fields ...string) string {
	return head + mcp(append([]string{"transport: stdio", "url: cmd", "exposure: harness_native"}, fields...)...)
}

func TestInterpolation(t *testing.T) {
	vars := env(map[string]string{"HOST": "mcp.local", "TOKEN": "tok", "EMPTY": ""})
	tests := []struct {
		name  string
		field string
		get   func(contract.MCPServerConfig) string
		want  string
	}{
		{"url", "url: https://${HOST}/v1", func(s contract.MCPServerConfig) string { return s.URL }, "https://mcp.local/v1"},
		{"args element", "args: [--host, '${HOST}:${TOKEN}']", func(s contract.MCPServerConfig) string { return strings.Join(s.Args, " ") }, "--host mcp.local:tok"},
		{"env value", "env: {T: '${TOKEN}'}", func(s contract.MCPServerConfig) string { return s.Env["T"] }, "tok"},
		{"env key is not interpolated", "env: {'${TOKEN}': x}", func(s contract.MCPServerConfig) string { return s.Env["${TOKEN}"] }, "x"},
		{"header value", "custom_headers: {Authorization: 'Bearer ${TOKEN}'}", func(s contract.MCPServerConfig) string { return s.CustomHeaders["Authorization"] }, "Bearer tok"},
		{"empty variable", "env: {E: 'a${EMPTY}b'}", func(s contract.MCPServerConfig) string { return s.Env["E"] }, "ab"},
		{"escape", "env: {E: '$${HOST}'}", func(s contract.MCPServerConfig) string { return s.Env["E"] }, "${HOST}"},
		{"escape then reference", "env: {E: '$${HOST}-${HOST}'}", func(s contract.MCPServerConfig) string { return s.Env["E"] }, "${HOST}-mcp.local"},
		{"dollar before escape", "env: {E: '$$${HOST}'}", func(s contract.MCPServerConfig) string { return s.Env["E"] }, "$${HOST}"},
		{"lone dollar", "env: {E: 'a$b $ {HOST} $HOST'}", func(s contract.MCPServerConfig) string { return s.Env["E"] }, "a$b $ {HOST} $HOST"},
		{"allowed_tools not interpolated", "allowed_tools: ['${HOST}']", func(s contract.MCPServerConfig) string { return s.AllowedTools[0] }, "${HOST}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := server(tt.field)
			if strings.HasPrefix(tt.field, "url:") {
				src = head + mcp("transport: sse", tt.field, "exposure: harness_native")
			}
			l, err := config.Parse([]byte(src), "a.yaml", config.Options{BaseDir: "/base", LookupEnv: vars})
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.get(l.Config.MCP.Servers["s"]); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestInterpolationErrors(t *testing.T) {
	vars := env(map[string]string{"HOST": "secret-host-value"})
	tests := []struct {
		name  string
		field string
		want  []finding
	}{
		{"undefined in url", "", nil}, // placeholder replaced below
		{"undefined in args", "args: ['${NOPE}', '${ALSO_NOPE}']",
			[]finding{{"undefined_variable", "mcp.servers.s.args[0]", 11}, {"undefined_variable", "mcp.servers.s.args[1]", 11}}},
		{"two undefined in one value", "env: {E: '${A}${B}'}",
			[]finding{{"undefined_variable", "mcp.servers.s.env.E", 11}, {"undefined_variable", "mcp.servers.s.env.E", 11}}},
		{"undefined in header", "custom_headers:\n        X-Key: '${KEY}'",
			[]finding{{"undefined_variable", "mcp.servers.s.custom_headers.X-Key", 12}}},
		{"unclosed", "env: {E: '${HOST'}", []finding{{"invalid_interpolation", "mcp.servers.s.env.E", 11}}},
		{"empty name", "env: {E: '${}'}", []finding{{"invalid_interpolation", "mcp.servers.s.env.E", 11}}},
		{"default syntax", "env: {E: '${HOST:-x}'}", []finding{{"invalid_interpolation", "mcp.servers.s.env.E", 11}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := server(tt.field)
			if tt.want == nil {
				src = head + mcp("transport: sse", "url: https://${NOPE}/x", "exposure: harness_native")
				tt.want = []finding{{"undefined_variable", "mcp.servers.s.url", 9}}
			}
			_, err := config.Parse([]byte(src), "a.yaml", config.Options{BaseDir: "/base", LookupEnv: vars})
			if diff := cmp.Diff(tt.want, errorFindings(t, err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err != nil && strings.Contains(err.Error(), "secret-host-value") {
				t.Errorf("error reveals a variable's value: %v", err)
			}
		})
	}
}

func TestUndefinedVariableMetadata(t *testing.T) {
	src := head + mcp("transport: sse", "url: https://${MCP_HOST}/x", "exposure: harness_native")
	_, err := config.Parse([]byte(src), "a.yaml", config.Options{BaseDir: "/base", LookupEnv: env(nil)})
	errs := configErrors(t, err)
	if len(errs) != 1 || errs[0].Metadata["variable"] != "MCP_HOST" || !strings.Contains(errs[0].Message, "MCP_HOST") {
		t.Fatalf("got %v, want one undefined_variable naming MCP_HOST", err)
	}
}

// TestSecretsNeverRead checks that the variables named by *_env fields
// are never looked up and that no value ends up in a message.
func TestSecretsNeverRead(t *testing.T) {
	var looked []string
	lookup := func(name string) (string, bool) {
		looked = append(looked, name)
		return "value-of-" + name, true
	}
	src := head + model("api_key_env: OPENAI_API_KEY") +
		mcp("transport: sse", "url: https://${HOST}/x", "exposure: harness_native", "authentication:",
			"  type: service_account", "  client_id: c", "  client_secret_env: CLIENT_SECRET", "  token_url: https://t")
	l, err := config.Parse([]byte(src), "a.yaml", config.Options{BaseDir: "/base", LookupEnv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"HOST"}, looked); diff != "" {
		t.Errorf("variables looked up (-want +got):\n%s", diff)
	}
	if got := *l.Config.Models["default"].APIKeyEnv; got != "OPENAI_API_KEY" {
		t.Errorf("api_key_env = %q, want the name kept", got)
	}

	// A secret pasted into an *_env field is not repeated in the error.
	src = head + model("api_key_env: sk-live-abcdef123456")
	_, err = config.Parse([]byte(src), "a.yaml", config.Options{BaseDir: "/base", LookupEnv: lookup})
	if err == nil || strings.Contains(err.Error(), "sk-live") {
		t.Errorf("error = %v, want invalid_env_name without the value", err)
	}
}
