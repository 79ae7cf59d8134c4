package desired_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/deploy/desired"
	"github.com/fabric-runtime/fabric/internal/deploy/document"
)

func doc(t *testing.T, baseURL, writerResponse string) *desired.State {
	t.Helper()
	src := fmt.Sprintf(`schema_version: fabric.deployment/v1alpha1
metadata: {name: d, uid: 5e4d3c2b-1a09-4f8e-b7d6-c5b4a3928170}
spec:
  supervisor: {kind: process}
  integrations:
    tools: {kind: mcpServer, transport: http, run: {command: [srv], port: 18777}}
    unused: {kind: mcpServer, transport: http, run: {command: [never], port: 18778}}
    model: {kind: inference, api: openai-responses, base_url: %q, model: m1, credential: {env: KEY}, brokered: true}
  sandboxes:
    - name: main
      workspace: /w
      agents:
        - name: reader
          integrationRefs: [tools, model]
          integrations:
            notes: {kind: mcpServer, transport: stdio, command: [node, notes.js, --x], env: {A: b}}
          fabric: {schema_version: fabric.agent/v1alpha1, metadata: {name: r}, runtime: {}, harness: {adapter_id: fabric.scripted}}
        - name: writer
          fabric: {schema_version: fabric.agent/v1alpha1, metadata: {name: w}, runtime: {}, harness: {adapter_id: fabric.scripted, settings: {response: %q}}}
`, baseURL, writerResponse)
	d, err := document.Parse([]byte(src), "d.yaml", "/docs")
	if err != nil {
		t.Fatal(err)
	}
	st, err := desired.Compute(d, func(path string, data []byte, baseDir string) (*contract.FabricConfig, string, error) {
		var cfg contract.FabricConfig
		if err := json.Unmarshal(data, &cfg); err != nil {
			return nil, "", err
		}
		return &cfg, baseDir, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func mcpOf(t *testing.T, a *desired.Agent) map[string]contract.MCPServerConfig {
	t.Helper()
	var cfg contract.FabricConfig
	if err := json.Unmarshal(a.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.MCP == nil {
		return nil
	}
	return cfg.MCP.Servers
}

func TestCompute(t *testing.T) {
	st := doc(t, "https://api.example/v1", "hi")
	if len(st.Services) != 2 || st.Service("integration/unused") != nil {
		t.Fatalf("services %+v: want tools and model only (an unused definition creates nothing)", st.Services)
	}
	reader, writer := st.Agent("reader"), st.Agent("writer")
	servers := mcpOf(t, reader)
	if s := servers["tools"]; s.Transport != contract.MCPTransportStreamableHTTP || s.URL != "http://127.0.0.1:18777/mcp" {
		t.Fatalf("tools attachment %+v", s)
	}
	if s := servers["notes"]; s.Transport != contract.MCPTransportStdio || s.URL != "node" || strings.Join(s.Args, " ") != "notes.js --x" || s.Env["A"] != "b" {
		t.Fatalf("inline stdio attachment %+v", s)
	}
	if mcpOf(t, writer) != nil {
		t.Fatal("the writer attaches nothing but got MCP servers")
	}
	if reader.Inference == nil || !reader.Inference.Brokered || reader.Inference.Model != "m1" || reader.Inference.BaseURL != "" {
		t.Fatalf("reader inference %+v (a brokered agent never sees the upstream)", reader.Inference)
	}
	var cfg contract.FabricConfig
	json.Unmarshal(reader.Config, &cfg)
	if cfg.Metadata.Name != "reader" || cfg.Environment == nil || *cfg.Environment.Workspace != "/w/reader" {
		t.Fatalf("reader config %s", reader.Config)
	}
	if got := st.Credentials(); len(got) != 1 || desired.Key(got[0]) != "env:KEY" {
		t.Fatalf("credentials %v", got)
	}
	if strings.Contains(string(mustJSON(st)), "KEY=") {
		t.Fatal("a credential value in the state")
	}
}

// Generations: a change reaches only what it changes.
func TestGenerations(t *testing.T) {
	a := doc(t, "https://api.example/v1", "hi")
	b := doc(t, "https://other.example/v1", "hi")
	c := doc(t, "https://api.example/v1", "bye")
	if a.Service("integration/model").Generation == b.Service("integration/model").Generation {
		t.Fatal("the route's upstream changed but its generation did not")
	}
	if a.Agent("reader").Generation != b.Agent("reader").Generation {
		t.Fatal("a brokered agent's generation changed with the upstream it never sees")
	}
	if a.Agent("writer").Generation == c.Agent("writer").Generation || a.Agent("reader").Generation != c.Agent("reader").Generation {
		t.Fatal("changing the writer must change its generation only")
	}
	if a.Service("integration/tools").Generation != c.Service("integration/tools").Generation {
		t.Fatal("the MCP service's generation changed with an agent")
	}
}

func TestEnvName(t *testing.T) {
	for _, c := range []struct {
		binding string
		ref     contract.CredentialRef
		want    string
	}{
		{"integration/model", contract.CredentialRef{Env: "OPENAI_API_KEY"}, "OPENAI_API_KEY"},
		{"integration/main/model", contract.CredentialRef{File: "/k"}, "FABRIC_CREDENTIAL_INTEGRATION_MAIN_MODEL"},
	} {
		if got := desired.EnvName(c.binding, c.ref); got != c.want {
			t.Errorf("EnvName(%s, %+v) = %s, want %s", c.binding, c.ref, got, c.want)
		}
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }
