package document_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/config"
	"github.com/fabric-runtime/fabric/internal/deploy/document"
)

func loadValid(t *testing.T) *document.Document {
	t.Helper()
	d, err := document.Load("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestBindings(t *testing.T) {
	d := loadValid(t)
	type row struct {
		ID, Name, Scope, Sandbox, Owner, Kind string
		Agents                                []string
	}
	var got []row
	for _, b := range d.Bindings() {
		got = append(got, row{b.ID, b.Name, b.Scope, b.Sandbox, b.Owner, b.Integration.Kind, b.Agents})
	}
	// "unused" (deployment) and "local" (sandbox main) are attached by no
	// agent, so they are not bindings.
	want := []row{
		{"integration/ext", "ext", "deployment", "", "", "mcpServer", []string{"critic"}},
		{"integration/model", "model", "deployment", "", "", "inference", []string{"researcher", "writer"}},
		{"integration/tools", "tools", "deployment", "", "", "mcpServer", []string{"researcher"}},
		{"integration/main/files", "files", "sandbox", "main", "", "mcpServer", []string{"researcher"}},
		{"integration/main/writer/notes", "notes", "agent", "main", "writer", "mcpServer", []string{"writer"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Bindings (-want +got):\n%s", diff)
	}

	ids := func(bs []document.Binding) []string {
		var out []string
		for _, b := range bs {
			out = append(out, b.ID)
		}
		return out
	}
	if diff := cmp.Diff([]string{"integration/tools", "integration/model", "integration/main/files"}, ids(d.Attachments("researcher"))); diff != "" {
		t.Errorf("Attachments(researcher) in reference order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"integration/model", "integration/main/writer/notes"}, ids(d.Attachments("writer"))); diff != "" {
		t.Errorf("Attachments(writer): references, then inline (-want +got):\n%s", diff)
	}
	if got := d.Attachments("nobody"); got != nil {
		t.Errorf("Attachments(nobody) = %v", got)
	}

	// Only attached definitions' credentials: not unused's file, not local's.
	if diff := cmp.Diff([]contract.CredentialRef{{Env: "OPENAI_API_KEY"}}, d.Credentials()); diff != "" {
		t.Errorf("Credentials (-want +got):\n%s", diff)
	}

	base, _ := filepath.Abs("testdata")
	type agent struct{ Sandbox, Name, Config, Workspace string }
	var agents []agent
	for _, a := range d.Agents() {
		agents = append(agents, agent{a.Sandbox, a.Agent.Name, a.ConfigPath, a.WorkspacePath})
	}
	wantAgents := []agent{
		{"main", "researcher", filepath.Join(base, "researcher.yaml"), filepath.Join(base, "work")},
		{"main", "writer", "", filepath.Join(base, "work")},
		{"second", "critic", "/abs/critic.yaml", ""},
	}
	if diff := cmp.Diff(wantAgents, agents); diff != "" {
		t.Errorf("Agents (-want +got):\n%s", diff)
	}
	if d.BaseDir != base || d.Path != filepath.Join(base, "valid.yaml") {
		t.Errorf("BaseDir %q Path %q", d.BaseDir, d.Path)
	}
}

func TestCredentialFilesResolvedAndDeduplicated(t *testing.T) {
	src := head + `  integrations:
    a: {kind: inference, api: openai-responses, base_url: "https://a", credential: {file: keys/k}}
    b: {kind: inference, api: openai-responses, base_url: "https://b", credential: {file: ./keys/k}}
    c: {kind: inference, api: openai-responses, base_url: "https://c", credential: {env: K}}
  sandboxes:
    - name: main
      agents:
        - {name: x, config: x.yaml, integrationRefs: [a, b, c]}
        - name: y
          config: y.yaml
          integrations:
            d: {kind: inference, api: openai-responses, base_url: "https://d", credential: {env: K}}
`
	d, err := document.Parse([]byte(src), "deploy.yaml", "/srv/app")
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.CredentialRef{{File: "/srv/app/keys/k"}, {Env: "K"}}
	if diff := cmp.Diff(want, d.Credentials()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestMarshalYAMLRoundTrip(t *testing.T) {
	d := loadValid(t)
	out, err := document.MarshalYAML(&d.Deployment)
	if err != nil {
		t.Fatal(err)
	}
	back, err := document.Parse(out, "export.yaml", d.BaseDir)
	if err != nil {
		t.Fatalf("export does not parse: %v\n%s", err, out)
	}
	if back.Digest != d.Digest {
		t.Errorf("digest changed: %s -> %s", d.Digest, back.Digest)
	}
	again, err := document.MarshalYAML(&back.Deployment)
	if err != nil || !bytes.Equal(out, again) {
		t.Errorf("export is not deterministic (%v):\n%s\n---\n%s", err, out, again)
	}
	// References stay references and scopes stay as authored.
	if !bytes.Contains(out, []byte("integrationRefs:\n      - tools\n      - model\n      - files\n")) {
		t.Errorf("references not kept:\n%s", out)
	}
	var authored contract.Deployment
	if err := json.Unmarshal(mustJSON(t, d.Deployment), &authored); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d.Deployment.Spec.Sandboxes[0].Agents[1].Integrations, back.Deployment.Spec.Sandboxes[0].Agents[1].Integrations); diff != "" {
		t.Errorf("inline definitions moved (-want +got):\n%s", diff)
	}
	// Strings that YAML would read as something else stay strings.
	tricky := d.Deployment
	tricky.Spec.Sandboxes = []contract.SandboxSpec{{Name: "s", Agents: []contract.DeployedAgent{{
		Name:   "a",
		Fabric: json.RawMessage(`{"a":"yes","b":"1.5","c":"null","d":"2001-12-14","e":"~","f":"multi\nline","g":"#x","h":"*y","i":"&z","j":"!t","k":"<<","l":1e300,"m":-0.5,"":"empty key"}`),
	}}}}
	out, err = document.MarshalYAML(&tricky)
	if err != nil {
		t.Fatal(err)
	}
	dt, err := document.Digest(&tricky)
	if err != nil {
		t.Fatal(err)
	}
	back, err = document.Parse(out, "tricky.yaml", "")
	if err != nil || back.Digest != dt {
		t.Errorf("tricky strings do not round-trip (%v):\n%s", err, out)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInit(t *testing.T) {
	a, err := document.Init("demo")
	if err != nil {
		t.Fatal(err)
	}
	d, err := document.Parse(a, "fabric.deploy.yaml", t.TempDir())
	if err != nil {
		t.Fatalf("Init output does not parse: %v\n%s", err, a)
	}
	uid := d.Deployment.Metadata.UID
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(uid) {
		t.Errorf("uid %q is not a version 4 UUID", uid)
	}
	b, _ := document.Init("demo")
	if db, _ := document.Parse(b, "x.yaml", ""); db == nil || db.Deployment.Metadata.UID == uid {
		t.Error("two Inits gave the same uid")
	}
	agents := d.Agents()
	if len(agents) != 1 || agents[0].Sandbox != "main" || agents[0].Agent.Fabric == nil || d.Deployment.Metadata.Name != "demo" {
		t.Fatalf("skeleton = %+v", d.Deployment)
	}
	// The inline FabricConfig is one the config loader accepts.
	cfg, err := config.Parse(agents[0].Agent.Fabric, "inline.json", config.Options{BaseDir: t.TempDir()})
	if err != nil {
		t.Fatalf("inline fabric config: %v", err)
	}
	if cfg.Config.Metadata.Name != "demo-agent" || cfg.Config.Harness == nil || cfg.Config.Harness.AdapterID != "fabric.scripted" {
		t.Errorf("inline config = %+v", cfg.Config)
	}
	if _, err := document.Init("Not A Name"); err == nil {
		t.Error("Init accepted a bad name")
	}
}
