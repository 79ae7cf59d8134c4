package document_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/internal/deploy/document"
)

// head is a valid start of a document, lines 1 to 6; the cases append a
// sandboxes list (from line 7) or more.
const head = `schema_version: fabric.deployment/v1alpha1
metadata:
  name: assistant
  uid: 2f6c0b1e-8d3a-4c5e-9f10-1a2b3c4d5e6f
spec:
  supervisor: {kind: process}
`

// problems parses src and returns each error as "line path code".
func problems(t *testing.T, name, src string) []string {
	t.Helper()
	doc, err := document.Parse([]byte(src), name, t.TempDir())
	if err == nil {
		if doc == nil {
			t.Fatal("Parse returned neither a document nor an error")
		}
		return nil
	}
	var es document.Errors
	if !errors.As(err, &es) {
		t.Fatalf("error is %T, want document.Errors: %v", err, err)
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprintf("%d %s %s", e.Line, e.Path, e.Code)
		if e.File != name {
			t.Errorf("error names file %q, want %q", e.File, name)
		}
	}
	return out
}

func TestParseRules(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"minimal", head + "  sandboxes: []\n", nil},
		{"duplicate keys, both reported", head + `  sandboxes:
    - name: main
      name: other
      agents: []
      agents: []
`, []string{"9 spec.sandboxes[0].name duplicate_key", "11 spec.sandboxes[0].agents duplicate_key"}},
		{"anchor and alias", head + `  integrations:
    a: &x {kind: mcpServer, transport: stdio, command: [a]}
    b: *x
  sandboxes: []
`, []string{"8 spec.integrations.a unsupported_yaml", "9 spec.integrations.b unsupported_yaml"}},
		{"merge key", head + `  integrations:
    a:
      <<: {kind: mcpServer}
      transport: stdio
      command: [a]
  sandboxes: []
`, []string{"8 spec.integrations.a.kind missing_field", "9 spec.integrations.a unsupported_yaml"}},
		{"explicit tags", head + `  sandboxes:
    - name: !!str main
      workspace: !custom ./w
      agents: !!seq []
`, []string{"8 spec.sandboxes[0].name unsupported_yaml", "9 spec.sandboxes[0].workspace unsupported_yaml", "10 spec.sandboxes[0].agents unsupported_yaml"}},
		{"non-specific tag", head + "  sandboxes: ! []\n", []string{"7 spec.sandboxes unsupported_yaml"}},
		{"multiple documents", head + "  sandboxes: []\n---\nschema_version: x\n", []string{"8  multiple_documents"}},
		{"unsupported schema version only", "schema_version: fabric.deployment/v2\nmetadata: {bogus: 1}\n", []string{"1 schema_version unsupported_schema_version"}},
		{"missing fields", "schema_version: fabric.deployment/v1alpha1\nmetadata: {name: a}\nspec:\n  sandboxes: []\n",
			[]string{"2 metadata.uid missing_field", "3 spec.supervisor missing_field"}},
		{"missing everything", "{}\n", []string{"1 schema_version missing_field", "1 metadata missing_field", "1 spec missing_field"}},
		{"not a mapping", "- a\n", []string{"1  invalid_type"}},
		{"empty", "", []string{"0  invalid_type"}},
		{"syntax", head + "  sandboxes: [\n", []string{"8  invalid_syntax"}},
		{"unknown fields at every level", head + `  extra: 1
  integrations:
    m: {kind: inference, api: openai-responses, base_url: "https://x", temperature: 1}
    t: {kind: mcpServer, transport: http, run: {command: [a], port: 1, args: [b]}}
  sandboxes:
    - name: main
      image: x
      agents:
        - name: a
          config: a.yaml
          restart: {policy: never, jitter: 1}
          replicas: 2
`, []string{
			"7 spec.extra unknown_field",
			"9 spec.integrations.m.temperature unknown_field",
			"10 spec.integrations.t.run.args unknown_field",
			"13 spec.sandboxes[0].image unknown_field",
			"17 spec.sandboxes[0].agents[0].restart.jitter unknown_field",
			"18 spec.sandboxes[0].agents[0].replicas unknown_field",
		}},
		{"null is not a value", head + `  integrations: null
  sandboxes:
    - name: main
      workspace: null
      agents: [null]
`, []string{"7 spec.integrations invalid_type", "10 spec.sandboxes[0].workspace invalid_type", "11 spec.sandboxes[0].agents[0] invalid_type"}},
		{"wrong types", head + `  integrations:
    t: {kind: mcpServer, transport: http, run: {command: npx, port: "80"}}
    u: {kind: mcpServer, transport: http, run: {command: [a], port: 8.5}}
    v: [a]
    w: {kind: 7}
  sandboxes: {}
`, []string{
			"8 spec.integrations.t.run.command invalid_type", "8 spec.integrations.t.run.port invalid_type",
			"9 spec.integrations.u.run.port invalid_type", "10 spec.integrations.v invalid_type",
			"11 spec.integrations.w.kind invalid_type", "12 spec.sandboxes invalid_type",
		}},
		{"bad values", `schema_version: fabric.deployment/v1alpha1
metadata:
  name: Assistant
  uid: not-a-uuid
spec:
  supervisor: {kind: external, socket: run/x.sock}
  integrations:
    Bad_Name: {kind: mcpServer, transport: stdio, command: [a]}
    t: {kind: mcpServer, transport: http, run: {command: [a], port: 70000, path: mcp}}
    u: {kind: mcpServer, transport: http, url: "http://example.com/mcp"}
    v: {kind: mcpServer, transport: ws, command: [a]}
    m: {kind: inference, api: gemini, base_url: "http://api.example"}
  sandboxes:
    - name: main
      workspace: ""
      agents:
        - name: a
          config: a.yaml
          restart: {policy: always, max: 1}
        - name: b
          config: b.yaml
          restart: {max: 2, backoff_seconds: [10, 1]}
`, []string{
			"3 metadata.name invalid_value", "4 metadata.uid invalid_value", "6 spec.supervisor.socket invalid_value",
			"8 spec.integrations.Bad_Name invalid_value", "9 spec.integrations.t.run.port invalid_value", "9 spec.integrations.t.run.path invalid_value",
			"10 spec.integrations.u.url invalid_value", "11 spec.integrations.v.transport invalid_value",
			"12 spec.integrations.m.api invalid_value", "12 spec.integrations.m.base_url invalid_value",
			"15 spec.sandboxes[0].workspace invalid_value", "19 spec.sandboxes[0].agents[0].restart.policy invalid_value",
			"22 spec.sandboxes[0].agents[1].restart.backoff_seconds[1] invalid_value",
		}},
		{"supervisor socket rules", `schema_version: fabric.deployment/v1alpha1
metadata: {name: a, uid: 2f6c0b1e-8d3a-4c5e-9f10-1a2b3c4d5e6f}
spec:
  supervisor: {kind: external}
  sandboxes: []
`, []string{"4 spec.supervisor.socket missing_field"}},
		{"process supervisor with socket", `schema_version: fabric.deployment/v1alpha1
metadata: {name: a, uid: 2f6c0b1e-8d3a-4c5e-9f10-1a2b3c4d5e6f}
spec:
  supervisor: {kind: process, socket: /run/x.sock}
  sandboxes: []
`, []string{"4 spec.supervisor.socket invalid_value"}},
		{"transport rules", head + `  integrations:
    a: {kind: mcpServer, transport: stdio}
    b: {kind: mcpServer, transport: stdio, command: [a], url: "https://x"}
    c: {kind: mcpServer, transport: http}
    d: {kind: mcpServer, transport: http, url: "https://x", run: {command: [a], port: 1}}
    e: {kind: mcpServer, transport: http, command: [a], url: "https://x"}
    f: {kind: mcpServer, transport: http, run: {command: [], port: 1}}
    g: {kind: mcpServer, transport: stdio, command: [a], env: {"1X": v}}
  sandboxes: []
`, []string{
			"8 spec.integrations.a.command missing_field", "9 spec.integrations.b.url invalid_value",
			"10 spec.integrations.c.run missing_field", "11 spec.integrations.d.url invalid_value",
			"12 spec.integrations.e.command invalid_value", "13 spec.integrations.f.run.command missing_field",
			`14 spec.integrations.g.env["1X"] invalid_value`,
		}},
		{"credentials", head + `  integrations:
    a: {kind: inference, api: openai-responses, base_url: "https://x", credential: sk-live-123}
    b: {kind: inference, api: openai-responses, base_url: "https://x", credential: {env: A, file: b}}
    c: {kind: inference, api: openai-responses, base_url: "https://x", credential: {env: "1A"}}
    d: {kind: inference, api: openai-responses, base_url: "https://x", credential: {value: sk-live-123}}
    e: {kind: inference, api: openai-responses, base_url: "https://x", brokered: true}
    f: {kind: inference, api: openai-responses, base_url: "https://x", credential: {}}
    g: {kind: inference, api: openai-responses, base_url: "https://user:pw@x.example"}
  sandboxes: []
`, []string{
			"8 spec.integrations.a.credential invalid_credential", "9 spec.integrations.b.credential invalid_credential",
			"10 spec.integrations.c.credential.env invalid_credential", "11 spec.integrations.d.credential.value invalid_credential",
			"12 spec.integrations.e.credential missing_field", "13 spec.integrations.f.credential invalid_credential",
			"14 spec.integrations.g.base_url invalid_credential",
		}},
		{"unknown kind", head + `  integrations:
    a: {kind: voice, upstream: x}
    b: {transport: stdio}
  sandboxes: []
`, []string{"8 spec.integrations.a.kind unknown_kind", "9 spec.integrations.b.kind missing_field"}},
		{"access gateway rules", head + `  integrations:
    a: {kind: access, listen: "0.0.0.0:8443", clients: [app, app]}
    b: {kind: access, clients: [web], idempotency: sometimes}
  sandboxes: []
`, []string{"8 spec.integrations.a.tls missing_field", "8 spec.integrations.a.clients[1] invalid_value", "9 spec.integrations.b.idempotency invalid_value"}},
		{"start modes", head + `  sandboxes:
    - name: main
      agents:
        - {name: a, config: a.yaml, start: sometimes}
        - {name: b, config: b.yaml, idle_stop_seconds: 30}
`, []string{"10 spec.sandboxes[0].agents[0].start invalid_value", "11 spec.sandboxes[0].agents[1].idle_stop_seconds invalid_value"}},
		{"duplicate names", head + `  sandboxes:
    - name: main
      agents:
        - {name: a, config: a.yaml}
        - {name: b, config: b.yaml}
    - name: main
      agents:
        - {name: a, config: a2.yaml}
`, []string{"12 spec.sandboxes[1].name duplicate_name", "14 spec.sandboxes[1].agents[0].name duplicate_name"}},
		{"config or fabric", head + `  sandboxes:
    - name: main
      agents:
        - {name: a}
        - {name: b, config: b.yaml, fabric: {schema_version: fabric.agent/v1alpha1}}
        - {name: c, fabric: "inline"}
        - {name: d, config: ""}
`, []string{
			"10 spec.sandboxes[0].agents[0].config missing_field", "11 spec.sandboxes[0].agents[1].fabric invalid_value",
			"12 spec.sandboxes[0].agents[2].fabric invalid_type", "13 spec.sandboxes[0].agents[3].config invalid_value",
		}},
		{"inline fabric is passed through, but YAML rules hold", head + `  sandboxes:
    - name: main
      agents:
        - name: a
          fabric:
            schema_version: fabric.agent/v1alpha1
            anything_goes: {nested: null, list: [1, "x"]}
            dup: 1
            dup: 2
            anchored: &a {x: 1}
            tagged: !!binary aGk=
`, []string{
			"15 spec.sandboxes[0].agents[0].fabric.dup duplicate_key",
			"16 spec.sandboxes[0].agents[0].fabric.anchored unsupported_yaml",
			"17 spec.sandboxes[0].agents[0].fabric.tagged unsupported_yaml",
		}},
		{"references", head + `  integrations:
    shared: {kind: mcpServer, transport: stdio, command: [s]}
  sandboxes:
    - name: main
      integrations:
        local: {kind: mcpServer, transport: stdio, command: [l]}
      agents:
        - name: a
          integrationRefs: [shared, local, notes, nowhere, shared, mine, other-local]
          config: a.yaml
          integrations:
            mine: {kind: mcpServer, transport: stdio, command: [m]}
        - name: b
          config: b.yaml
          integrations:
            notes: {kind: mcpServer, transport: stdio, command: [n]}
    - name: other
      integrations:
        other-local: {kind: mcpServer, transport: stdio, command: [o]}
      agents: []
`, []string{
			"15 spec.sandboxes[0].agents[0].integrationRefs[2] reference_not_visible",
			"15 spec.sandboxes[0].agents[0].integrationRefs[3] unknown_reference",
			"15 spec.sandboxes[0].agents[0].integrationRefs[4] duplicate_reference",
			"15 spec.sandboxes[0].agents[0].integrationRefs[5] duplicate_reference",
			"15 spec.sandboxes[0].agents[0].integrationRefs[6] reference_not_visible",
		}},
		{"references on their own lines", head + `  sandboxes:
    - name: main
      agents:
        - name: a
          config: a.yaml
          integrationRefs:
            - one
            - two
`, []string{"13 spec.sandboxes[0].agents[0].integrationRefs[0] unknown_reference", "14 spec.sandboxes[0].agents[0].integrationRefs[1] unknown_reference"}},
		{"shadowed names", head + `  integrations:
    tools: {kind: mcpServer, transport: stdio, command: [t]}
  sandboxes:
    - name: main
      integrations:
        tools: {kind: mcpServer, transport: stdio, command: [t2]}
        files: {kind: mcpServer, transport: stdio, command: [f]}
      agents:
        - name: a
          config: a.yaml
          integrations:
            files: {kind: mcpServer, transport: stdio, command: [f2]}
            model: {kind: inference, api: openai-responses, base_url: "https://x"}
        - name: b
          config: b.yaml
          integrations:
            model: {kind: inference, api: openai-responses, base_url: "https://y"}
`, []string{"12 spec.sandboxes[0].integrations.tools shadowed_name", "18 spec.sandboxes[0].agents[0].integrations.files shadowed_name"}},
		{"errors of every stage, sorted by line", head + `  sandboxes:
    - name: main
      agents:
        - name: a
          config: a.yaml
          integrationRefs: [missing]
        - name: a
          config: a.yaml
          config: b.yaml
          restart: {policy: sometimes}
`, []string{
			"12 spec.sandboxes[0].agents[0].integrationRefs[0] unknown_reference",
			"13 spec.sandboxes[0].agents[1].name duplicate_name",
			"15 spec.sandboxes[0].agents[1].config duplicate_key",
			"16 spec.sandboxes[0].agents[1].restart.policy invalid_value",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, problems(t, "deploy.yaml", c.src)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	src := head + `  sandboxes:
    - name: main
      agents:
        - name: a
          config: a.yaml
          integrations:
            m: {kind: inference, api: openai-responses, base_url: "https://x", credential: sk-live-SECRET}
`
	_, err := document.Parse([]byte(src), "deploy.yaml", "")
	var e *document.Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As(*Error) failed on %v", err)
	}
	want := "deploy.yaml:13: spec.sandboxes[0].agents[0].integrations.m.credential: a credential is an object {env: NAME} or {file: PATH}, not a string; never write the secret itself"
	if e.Error() != want {
		t.Errorf("Error() = %q\nwant      %q", e.Error(), want)
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("the error repeats the credential: %v", err)
	}
	if got := (&document.Error{Path: "p", Message: "m"}).Error(); got != "p: m" {
		t.Errorf("unnamed, unlined = %q", got)
	}
}

func TestTooLarge(t *testing.T) {
	big := head + "  sandboxes: []\n#" + strings.Repeat("x", document.MaxDocumentSize) + "\n"
	if diff := cmp.Diff([]string{"0  document_too_large"}, problems(t, "deploy.yaml", big)); diff != "" {
		t.Error(diff)
	}
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	var es document.Errors
	if _, err := document.Load(path); !errors.As(err, &es) || es[0].Code != document.CodeTooLarge {
		t.Errorf("Load of a large file: %v", err)
	}
	if _, err := document.Load(filepath.Join(t.TempDir(), "none.yaml")); !errors.As(err, &es) || es[0].Code != document.CodeUnreadable {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func TestJSONInput(t *testing.T) {
	yamlDoc, err := document.Load("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	jsonDoc, err := document.Load("testdata/valid.json")
	if err != nil {
		t.Fatal(err)
	}
	if yamlDoc.Digest != jsonDoc.Digest {
		t.Errorf("valid.json and valid.yaml differ: digests %s and %s", jsonDoc.Digest, yamlDoc.Digest)
	}
	dup := `{
  "schema_version": "fabric.deployment/v1alpha1",
  "metadata": {"name": "a", "uid": "2f6c0b1e-8d3a-4c5e-9f10-1a2b3c4d5e6f"},
  "spec": {
    "supervisor": {"kind": "process"},
    "supervisor": {"kind": "external"},
    "sandboxes": [{"name": "main", "agents": [{"name": "a", "config": "a.yaml", "extra": null}]}]
  }
}`
	want := []string{"6 spec.supervisor duplicate_key", "7 spec.sandboxes[0].agents[0].extra unknown_field"}
	if diff := cmp.Diff(want, problems(t, "deploy.json", dup)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"3  invalid_syntax"}, problems(t, "deploy.json", "{\n  \"a\": 1,\n}\n")); diff != "" {
		t.Errorf("trailing comma (-want +got):\n%s", diff)
	}
	// A .json file must be JSON even where YAML would read it.
	if diff := cmp.Diff([]string{"1  invalid_syntax"}, problems(t, "deploy.json", "schema_version: x\n")); diff != "" {
		t.Errorf("YAML in a .json file (-want +got):\n%s", diff)
	}
}
