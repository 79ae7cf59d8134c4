package config_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/internal/config"
)

// TestValidation checks every shape rule with a passing and a failing case:
// exact codes, paths and lines, in document order.
func TestValidation(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []finding // nil: the config loads
	}{
		// schema_version
		{"schema_version ok", head, nil},
		{"schema_version missing", "metadata: {name: a}\nruntime: {}\n",
			[]finding{{"missing_field", "schema_version", 1}}},
		{"schema_version other", "schema_version: fabric.agent/v2\nmetadata: {name: a}\nruntime: {}\n",
			[]finding{{"unsupported_schema_version", "schema_version", 1}}},
		{"schema_version blank", "schema_version: ''\nmetadata: {name: a}\nruntime: {}\n",
			[]finding{{"unsupported_schema_version", "schema_version", 1}}},
		{"schema_version number", "schema_version: 1\nmetadata: {name: a}\nruntime: {}\n",
			[]finding{{"invalid_type", "schema_version", 1}}},

		// metadata
		{"metadata.name blank", "schema_version: fabric.agent/v1alpha1\nmetadata:\n  name: '  '\nruntime: {}\n",
			[]finding{{"invalid_value", "metadata.name", 3}}},
		{"metadata.name missing", "schema_version: fabric.agent/v1alpha1\nmetadata:\n  description: x\nruntime: {}\n",
			[]finding{{"missing_field", "metadata.name", 3}}},
		{"metadata missing", "schema_version: fabric.agent/v1alpha1\nruntime: {}\n",
			[]finding{{"missing_field", "metadata", 1}}},
		{"metadata string", "schema_version: fabric.agent/v1alpha1\nmetadata: demo\nruntime: {}\n",
			[]finding{{"invalid_type", "metadata", 2}}},

		// runtime
		{"runtime missing", "schema_version: fabric.agent/v1alpha1\nmetadata: {name: a}\n",
			[]finding{{"missing_field", "runtime", 1}}},
		{"runtime null", "schema_version: fabric.agent/v1alpha1\nmetadata: {name: a}\nruntime:\n",
			[]finding{{"missing_field", "runtime", 1}}},
		{"runtime list", "schema_version: fabric.agent/v1alpha1\nmetadata: {name: a}\nruntime: []\n",
			[]finding{{"invalid_type", "runtime", 3}}},
		{"max_turns ok", rt("max_turns: 1"), nil},
		{"max_turns zero", rt("max_turns: 0"), []finding{{"invalid_value", "runtime.max_turns", 5}}},
		{"max_turns negative", rt("max_turns: -3"), []finding{{"invalid_value", "runtime.max_turns", 5}}},
		{"max_turns fraction", rt("max_turns: 1.5"), []finding{{"invalid_type", "runtime.max_turns", 5}}},
		{"max_turns string", rt("max_turns: '3'"), []finding{{"invalid_type", "runtime.max_turns", 5}}},
		{"max_turns overflow", rt("max_turns: 4294967296"), []finding{{"invalid_value", "runtime.max_turns", 5}}},
		{"timeout ok", rt("timeout_seconds: 0.5"), nil},
		{"timeout zero", rt("timeout_seconds: 0"), []finding{{"invalid_value", "runtime.timeout_seconds", 5}}},
		{"timeout negative", rt("timeout_seconds: -1"), []finding{{"invalid_value", "runtime.timeout_seconds", 5}}},
		{"limits ok", rt("limits: {start_seconds: 5}"), nil},
		{"limits negative", rt("limits: {stop_seconds: -5}"), []finding{{"invalid_value", "runtime.limits.stop_seconds", 5}}},
		{"artifacts blank", rt("artifacts: ''"), []finding{{"invalid_value", "runtime.artifacts", 5}}},

		// harness
		{"harness ok", head + "harness: {adapter_id: a.b, resolution: npm}\n", nil},
		{"adapter_id missing", head + "harness:\n  resolution: npm\n", []finding{{"missing_field", "harness.adapter_id", 6}}},
		{"adapter_id blank", head + "harness:\n  adapter_id: ' '\n", []finding{{"invalid_value", "harness.adapter_id", 6}}},
		{"resolution bad", head + "harness:\n  adapter_id: a\n  resolution: pipx\n", []finding{{"invalid_value", "harness.resolution", 7}}},
		{"settings open", head + "harness:\n  adapter_id: a\n  settings: {port_range: {start: x}, list: [1, null, {}]}\n", nil},
		{"settings list", head + "harness:\n  adapter_id: a\n  settings: [1]\n", []finding{{"invalid_type", "harness.settings", 7}}},

		// models
		{"model ok", head + "models:\n  default: {provider: p, model: m, top_p: 0, max_tokens: 1}\n", nil},
		{"top_p one", head + "models:\n  default: {provider: p, model: m, top_p: 1}\n", nil},
		{"provider blank", head + "models:\n  default:\n    provider: ''\n    model: m\n",
			[]finding{{"invalid_value", "models.default.provider", 7}}},
		{"model missing", head + "models:\n  default:\n    provider: p\n",
			[]finding{{"missing_field", "models.default.model", 7}}},
		{"role null", head + "models:\n  default:\n",
			[]finding{{"missing_field", "models.default.provider", 6}, {"missing_field", "models.default.model", 6}}},
		{"top_p high", head + "models:\n  default:\n    provider: p\n    model: m\n    top_p: 1.01\n",
			[]finding{{"invalid_value", "models.default.top_p", 9}}},
		{"top_p negative", head + "models:\n  default:\n    provider: p\n    model: m\n    top_p: -0.1\n",
			[]finding{{"invalid_value", "models.default.top_p", 9}}},
		{"max_tokens zero", head + "models:\n  default:\n    provider: p\n    model: m\n    max_tokens: 0\n",
			[]finding{{"invalid_value", "models.default.max_tokens", 9}}},
		{"temperature string", head + "models:\n  default:\n    provider: p\n    model: m\n    temperature: hot\n",
			[]finding{{"invalid_type", "models.default.temperature", 9}}},
		{"models list", head + "models: [a]\n", []finding{{"invalid_type", "models", 5}}},
		{"role with dots", head + "models:\n  gpt-4.1:\n    provider: p\n",
			[]finding{{"missing_field", `models["gpt-4.1"].model`, 7}}},

		// instructions
		{"instructions ok", head + "instructions:\n  system: {content: hi, mode: append}\n", nil},
		{"content blank", head + "instructions:\n  system:\n    content: \"\\n \"\n",
			[]finding{{"invalid_value", "instructions.system.content", 7}}},
		{"content missing", head + "instructions:\n  system:\n    mode: replace\n",
			[]finding{{"missing_field", "instructions.system.content", 7}}},
		{"mode bad", head + "instructions:\n  system:\n    content: hi\n    mode: prepend\n",
			[]finding{{"invalid_value", "instructions.system.mode", 8}}},
		{"mode empty", head + "instructions:\n  system:\n    content: hi\n    mode: ''\n",
			[]finding{{"invalid_value", "instructions.system.mode", 8}}},

		// tools and workflow
		{"tools ok", head + "tools:\n  enabled: null\n  definitions: {t: {kind: module, ref: x.js}}\n", nil},
		{"definition ref missing", head + "tools:\n  definitions:\n    t:\n      kind: module\n",
			[]finding{{"missing_field", "tools.definitions.t.ref", 8}}},
		{"enabled element", head + "tools:\n  enabled: [read, {x: 1}]\n",
			[]finding{{"invalid_type", "tools.enabled[1]", 6}}},
		{"workflow target missing", head + "workflow:\n  settings: {}\n",
			[]finding{{"missing_field", "workflow.target_id", 6}}},

		// mcp servers
		{"mcp ok", head + mcp("transport: stdio", "url: srv", "exposure: fabric_managed"), nil},
		{"transport bad", head + mcp("transport: http", "url: srv", "exposure: fabric_managed"),
			[]finding{{"invalid_value", "mcp.servers.s.transport", 8}}},
		{"transport missing", head + mcp("url: srv", "exposure: fabric_managed"),
			[]finding{{"missing_field", "mcp.servers.s.transport", 8}}},
		{"url blank", head + mcp("transport: sse", "url: ' '", "exposure: harness_native"),
			[]finding{{"invalid_value", "mcp.servers.s.url", 9}}},
		{"exposure bad", head + mcp("transport: sse", "url: u", "exposure: both"),
			[]finding{{"invalid_value", "mcp.servers.s.exposure", 10}}},
		{"args element", head + mcp("transport: stdio", "url: u", "exposure: harness_native", "args: [a, 2]"),
			[]finding{{"invalid_type", "mcp.servers.s.args[1]", 11}}},
		{"env value number", head + mcp("transport: stdio", "url: u", "exposure: harness_native", "env:", "  PORT: 8080"),
			[]finding{{"invalid_type", "mcp.servers.s.env.PORT", 12}}},
		{"env value null", head + mcp("transport: stdio", "url: u", "exposure: harness_native", "env:", "  PORT:"),
			[]finding{{"invalid_type", "mcp.servers.s.env.PORT", 12}}},
		{"server name quoted", head + "mcp:\n  servers:\n    my.server: {url: u, exposure: fabric_managed}\n",
			[]finding{{"missing_field", `mcp.servers["my.server"].transport`, 7}}},

		// mcp authentication
		{"oauth2 ok", head + auth("type: oauth2"), nil},
		{"auth type bad", head + auth("type: basic"), []finding{{"invalid_value", "mcp.servers.s.authentication.type", 12}}},
		{"auth type missing", head + auth("scopes: [a]"), []finding{{"missing_field", "mcp.servers.s.authentication.type", 12}}},
		{"service_account ok", head + auth("type: service_account", "client_id: c", "client_secret_env: SECRET", "token_url: https://t"), nil},
		{"service_account incomplete", head + auth("type: service_account", "client_id: ''"),
			[]finding{
				{"invalid_value", "mcp.servers.s.authentication.client_id", 13},
				{"missing_field", "mcp.servers.s.authentication.client_secret_env", 12},
				{"missing_field", "mcp.servers.s.authentication.token_url", 12},
			}},
		{"auth method bad", head + auth("type: oauth2", "token_endpoint_auth_method: magic"),
			[]finding{{"invalid_value", "mcp.servers.s.authentication.token_endpoint_auth_method", 13}}},
		{"auth timeout zero", head + auth("type: oauth2", "authorization_timeout_seconds: 0"),
			[]finding{{"invalid_value", "mcp.servers.s.authentication.authorization_timeout_seconds", 13}}},
		{"auth buffer negative", head + auth("type: service_account", "client_id: c", "client_secret_env: S", "token_url: t", "token_cache_buffer_seconds: -1"),
			[]finding{{"invalid_value", "mcp.servers.s.authentication.token_cache_buffer_seconds", 16}}},

		// environment
		{"environment ok", head + "environment: {provider: docker, control_location: external_control, ownership: fabric_owned}\n", nil},
		{"provider missing", head + "environment:\n  workspace: w\n", []finding{{"missing_field", "environment.provider", 6}}},
		{"control_location bad", head + "environment:\n  provider: local\n  control_location: remote\n",
			[]finding{{"invalid_value", "environment.control_location", 7}}},
		{"ownership bad", head + "environment:\n  provider: local\n  ownership: shared\n",
			[]finding{{"invalid_value", "environment.ownership", 7}}},
		{"environment env number", head + "environment:\n  provider: local\n  env: {A: true}\n",
			[]finding{{"invalid_type", "environment.env.A", 7}}},

		// paths
		{"skills paths string", head + "skills:\n  paths: skills\n", []finding{{"invalid_type", "skills.paths", 6}}},
		{"skills path element", head + "skills:\n  paths:\n    - a\n    - 7\n", []finding{{"invalid_type", "skills.paths[1]", 8}}},
		{"skills path blank", head + "skills:\n  paths: ['']\n", []finding{{"invalid_value", "skills.paths[0]", 6}}},
		{"discovery path blank", head + "discovery:\n  local_paths: [a, ' ']\n", []finding{{"invalid_value", "discovery.local_paths[1]", 6}}},

		// *_env names
		{"api_key_env ok", head + model("api_key_env: OPENAI_API_KEY"), nil},
		{"api_key_env reference", head + model("api_key_env: ${OPENAI_API_KEY}"),
			[]finding{{"invalid_env_name", "models.default.api_key_env", 9}}},
		{"api_key_env digit", head + model("api_key_env: 1KEY"),
			[]finding{{"invalid_env_name", "models.default.api_key_env", 9}}},
		{"api_key_env empty", head + model("api_key_env: ''"),
			[]finding{{"invalid_env_name", "models.default.api_key_env", 9}}},
		{"client_secret_env value", head + auth("type: oauth2", "client_secret_env: s3cr3t-value"),
			[]finding{{"invalid_env_name", "mcp.servers.s.authentication.client_secret_env", 13}}},

		// multiple errors are all reported, in document order
		{"several", "schema_version: x\nmetadata: {name: ''}\nruntime: {max_turns: 0, timeout_seconds: 0}\n",
			[]finding{
				{"unsupported_schema_version", "schema_version", 1},
				{"invalid_value", "metadata.name", 2},
				{"invalid_value", "runtime.max_turns", 3},
				{"invalid_value", "runtime.timeout_seconds", 3},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tt.src), "agent.yaml", config.Options{BaseDir: "/base", LookupEnv: env(nil)})
			if diff := cmp.Diff(tt.want, errorFindings(t, err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}

// rt is head with one runtime field on line 5.
func rt(field string) string {
	return "schema_version: fabric.agent/v1alpha1\nmetadata:\n  name: demo\nruntime:\n  " + field + "\n"
}

// mcp is one server "s" whose first field is on line 8.
func mcp(fields ...string) string {
	s := "mcp:\n  servers:\n    s:\n"
	for _, f := range fields {
		s += "      " + f + "\n"
	}
	return s
}

// auth is server "s" with authentication fields from line 12.
func auth(fields ...string) string {
	s := mcp("transport: sse", "url: https://x", "exposure: harness_native", "authentication:")
	for _, f := range fields {
		s += "        " + f + "\n"
	}
	return s
}

// model is role "default" with one more field on line 9.
func model(field string) string {
	return "models:\n  default:\n    provider: p\n    model: m\n    " + field + "\n"
}
