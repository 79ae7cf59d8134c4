package contract_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/contract/validate"
)

// sampleDeployments are the deployment documents of TestSamplesValidate.
func sampleDeployments() []any {
	full := contract.Deployment{
		SchemaVersion: contract.DeploymentSchemaVersion,
		Metadata:      contract.DeploymentMetadata{Name: "assistant", UID: "2f6c0b1e-8d3a-4c5e-9f10-1a2b3c4d5e6f"},
		Spec: contract.DeploymentSpec{
			Supervisor: contract.SupervisorSpec{Kind: contract.SupervisorExternal, Socket: "/run/fabric/assistant.sock"},
			Integrations: map[string]contract.Integration{
				"tools": contract.IntegrationOf(&contract.MCPServerIntegration{Transport: contract.MCPServerHTTP, Run: &contract.MCPRun{
					Command: []string{"npx", "server"}, Port: 18700, Path: "/mcp", Env: map[string]string{"K": "v"},
					Restart: &contract.RestartPolicy{Policy: contract.RestartOnFailure, Max: 3, BackoffSeconds: []float64{0.5, 10}},
				}}),
				"ext": contract.IntegrationOf(&contract.MCPServerIntegration{Transport: contract.MCPServerHTTP, URL: "http://127.0.0.1:9000/mcp"}),
				"model": contract.IntegrationOf(&contract.InferenceIntegration{
					API: contract.InferenceOpenAIResponses, BaseURL: "https://api.example/v1", Model: "gpt-5",
					Credential: &contract.CredentialRef{Env: "OPENAI_API_KEY"}, Brokered: true,
				}),
			},
			Sandboxes: []contract.SandboxSpec{{
				Name: "main", Workspace: "./work",
				Integrations: map[string]contract.Integration{
					"local": contract.IntegrationOf(&contract.InferenceIntegration{API: contract.InferenceAnthropicMessages, BaseURL: "http://localhost:8080", Credential: &contract.CredentialRef{File: "key.txt"}}),
				},
				Agents: []contract.DeployedAgent{
					{Name: "researcher", Config: "./researcher.yaml", IntegrationRefs: []string{"tools", "model"}, Restart: &contract.RestartPolicy{Policy: contract.RestartNever}},
					{
						Name: "writer", Fabric: json.RawMessage(`{"schema_version":"fabric.agent/v1alpha1","metadata":{"name":"w"},"runtime":{}}`),
						Integrations: map[string]contract.Integration{
							"notes": contract.IntegrationOf(&contract.MCPServerIntegration{Transport: contract.MCPServerStdio, Command: []string{"node", "notes.js"}, Env: map[string]string{"K": "v"}}),
						},
					},
				},
			}},
		},
	}
	minimal := contract.Deployment{
		SchemaVersion: contract.DeploymentSchemaVersion,
		Metadata:      contract.DeploymentMetadata{Name: "empty", UID: "00000000-0000-4000-8000-000000000000"},
		Spec:          contract.DeploymentSpec{Supervisor: contract.SupervisorSpec{Kind: contract.SupervisorProcess}},
	}
	return []any{full, minimal}
}

func TestIntegrationJSON(t *testing.T) {
	in := contract.IntegrationOf(&contract.InferenceIntegration{API: contract.InferenceOpenAIChatCompletions, BaseURL: "https://x.example", Credential: &contract.CredentialRef{Env: "K"}})
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"kind":"inference","api":"openai-chat-completions","base_url":"https://x.example","credential":{"env":"K"}}`; string(b) != want {
		t.Errorf("marshal = %s, want %s", b, want)
	}
	var back contract.Integration
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if got := back.Credentials(); !slices.Equal(got, []contract.CredentialRef{{Env: "K"}}) {
		t.Errorf("Credentials = %v", got)
	}
	for _, bad := range []string{
		`{"kind":"nope"}`,
		`{"api":"openai-responses"}`,
		`{"kind":"inference","api":"openai-responses","base_url":"https://x","transport":"http"}`,
		`[]`,
	} {
		var i contract.Integration
		if err := json.Unmarshal([]byte(bad), &i); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	if _, err := json.Marshal(contract.Integration{Kind: contract.IntegrationMCPServer}); err == nil {
		t.Error("an integration without a value marshalled")
	}
}

// TestIntegrationKindsRegistered checks that every variant field of
// Integration has a registration and a oneOf branch in the schema.
func TestIntegrationKindsRegistered(t *testing.T) {
	typ := reflect.TypeFor[contract.Integration]()
	kinds := contract.IntegrationKinds()
	if typ.NumField()-1 != len(kinds) {
		t.Fatalf("Integration has %d variant fields but %d kinds are registered", typ.NumField()-1, len(kinds))
	}
	for _, k := range kinds {
		in, ok := contract.NewIntegration(k)
		if !ok || in.Kind != k || in.Variant() == nil {
			t.Errorf("NewIntegration(%q) = %+v, %v", k, in, ok)
		}
	}
	defs := schemaMap(t, "deployment")["properties"].(map[string]any)["spec"].(map[string]any)["properties"].(map[string]any)["integrations"].(map[string]any)
	branches := defs["additionalProperties"].(map[string]any)["oneOf"].([]any)
	var consts []string
	for _, b := range branches {
		p := b.(map[string]any)["properties"].(map[string]any)["kind"].(map[string]any)
		consts = append(consts, p["const"].(string))
		if b.(map[string]any)["additionalProperties"] != false {
			t.Errorf("kind %v: schema branch is open", p["const"])
		}
	}
	if diff := cmp.Diff(kinds, consts); diff != "" {
		t.Errorf("schema kinds (-registered +schema):\n%s", diff)
	}
}

func TestDeploymentSchemaRejects(t *testing.T) {
	base := func(spec string) string {
		return `{"schema_version":"fabric.deployment/v1alpha1","metadata":{"name":"a","uid":"00000000-0000-4000-8000-000000000000"},"spec":` + spec + `}`
	}
	cases := map[string]string{
		"external without socket": base(`{"supervisor":{"kind":"external"},"sandboxes":[]}`),
		"process with socket":     base(`{"supervisor":{"kind":"process","socket":"/s"},"sandboxes":[]}`),
		"null sandboxes":          base(`{"supervisor":{"kind":"process"},"sandboxes":null}`),
		"unknown kind":            base(`{"supervisor":{"kind":"process"},"integrations":{"x":{"kind":"access"}},"sandboxes":[]}`),
		"stdio with url":          base(`{"supervisor":{"kind":"process"},"integrations":{"x":{"kind":"mcpServer","transport":"stdio","command":["a"],"url":"https://x"}},"sandboxes":[]}`),
		"http with run and url":   base(`{"supervisor":{"kind":"process"},"integrations":{"x":{"kind":"mcpServer","transport":"http","run":{"command":["a"],"port":1},"url":"https://x"}},"sandboxes":[]}`),
		"brokered without cred":   base(`{"supervisor":{"kind":"process"},"integrations":{"x":{"kind":"inference","api":"openai-responses","base_url":"https://x","brokered":true}},"sandboxes":[]}`),
		"credential both keys":    base(`{"supervisor":{"kind":"process"},"integrations":{"x":{"kind":"inference","api":"openai-responses","base_url":"https://x","credential":{"env":"A","file":"b"}}},"sandboxes":[]}`),
		"credential string":       base(`{"supervisor":{"kind":"process"},"integrations":{"x":{"kind":"inference","api":"openai-responses","base_url":"https://x","credential":"sk-123"}},"sandboxes":[]}`),
		"agent with both":         base(`{"supervisor":{"kind":"process"},"sandboxes":[{"name":"s","agents":[{"name":"a","config":"c","fabric":{}}]}]}`),
		"agent with neither":      base(`{"supervisor":{"kind":"process"},"sandboxes":[{"name":"s","agents":[{"name":"a"}]}]}`),
		"bad name":                base(`{"supervisor":{"kind":"process"},"sandboxes":[{"name":"Main","agents":[]}]}`),
		"short backoff":           base(`{"supervisor":{"kind":"process"},"sandboxes":[{"name":"s","agents":[{"name":"a","config":"c","restart":{"backoff_seconds":[1]}}]}]}`),
		"unknown field":           base(`{"supervisor":{"kind":"process"},"sandboxes":[],"extra":1}`),
	}
	v := validate.NewValidator()
	for name, doc := range cases {
		if err := v.Validate("deployment", []byte(doc)); err == nil {
			t.Errorf("%s: accepted %s", name, doc)
		}
	}
	if err := v.Validate("deployment", []byte(base(`{"supervisor":{"kind":"process"},"sandboxes":[]}`))); err != nil {
		t.Errorf("minimal document rejected: %v", err)
	}
}

func TestRestartPolicyEffective(t *testing.T) {
	var none *contract.RestartPolicy
	want := contract.RestartPolicy{Policy: contract.RestartOnFailure, Max: contract.DefaultRestartMax, BackoffSeconds: []float64{1, 30}}
	if diff := cmp.Diff(want, none.Effective()); diff != "" {
		t.Errorf("nil (-want +got):\n%s", diff)
	}
	p := &contract.RestartPolicy{Max: 2}
	if got := p.Effective(); got.Policy != contract.RestartOnFailure || got.Max != 2 || !slices.Equal(got.BackoffSeconds, []float64{1, 30}) {
		t.Errorf("partial = %+v", got)
	}
	if got := (&contract.RestartPolicy{Policy: contract.RestartNever}).Effective(); !reflect.DeepEqual(got, contract.RestartPolicy{Policy: contract.RestartNever}) {
		t.Errorf("never = %+v", got)
	}
	eff := none.Effective()
	eff.BackoffSeconds[0] = 99
	if contract.DefaultRestartBackoff()[0] != 1 {
		t.Error("Effective shares the default backoff slice")
	}
}

func TestValidateIssues(t *testing.T) {
	cases := []struct {
		name string
		got  []contract.DeploymentIssue
		want []string // path code
	}{
		{"http url to remote", contract.IntegrationOf(&contract.MCPServerIntegration{Transport: "http", URL: "http://example.com/mcp"}).Validate(), []string{"url invalid_value"}},
		{"http url to loopback v6", contract.IntegrationOf(&contract.MCPServerIntegration{Transport: "http", URL: "http://[::1]:9/mcp"}).Validate(), nil},
		{"url with userinfo", contract.IntegrationOf(&contract.MCPServerIntegration{Transport: "http", URL: "https://u:secret@example.com"}).Validate(), []string{"url invalid_credential"}},
		{"ftp base url", contract.IntegrationOf(&contract.InferenceIntegration{API: "anthropic-messages", BaseURL: "ftp://x"}).Validate(), []string{"base_url invalid_value"}},
		{"bad env name", contract.IntegrationOf(&contract.MCPServerIntegration{Transport: "stdio", Command: []string{"x"}, Env: map[string]string{"1A": "v"}}).Validate(), []string{`env["1A"] invalid_value`}},
		{"run bad port and path", contract.IntegrationOf(&contract.MCPServerIntegration{Transport: "http", Run: &contract.MCPRun{Command: []string{""}, Port: 70000, Path: "mcp"}}).Validate(),
			[]string{"run.command[0] invalid_value", "run.port invalid_value", "run.path invalid_value"}},
		{"restart never with max", (&contract.RestartPolicy{Policy: "never", Max: 1}).Validate(), []string{"max invalid_value"}},
		{"backoff inverted", (&contract.RestartPolicy{BackoffSeconds: []float64{5, 1}}).Validate(), []string{"backoff_seconds[1] invalid_value"}},
		{"backoff zero", (&contract.RestartPolicy{BackoffSeconds: []float64{0, 1}}).Validate(), []string{"backoff_seconds[0] invalid_value"}},
		{"empty credential", (&contract.CredentialRef{}).Validate(), []string{" invalid_credential"}},
		{"uppercase uid", (&contract.DeploymentMetadata{Name: "a", UID: "2F6C0B1E-8D3A-4C5E-9F10-1A2B3C4D5E6F"}).Validate(), []string{"uid invalid_value"}},
		{"relative socket", (&contract.SupervisorSpec{Kind: "external", Socket: "run/x.sock"}).Validate(), []string{"socket invalid_value"}},
	}
	for _, c := range cases {
		var got []string
		for _, is := range c.got {
			got = append(got, is.Path+" "+is.Code)
			if strings.Contains(is.Message, "secret") || strings.Contains(is.Message, "example.com") {
				t.Errorf("%s: message repeats the value: %s", c.name, is.Message)
			}
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}
