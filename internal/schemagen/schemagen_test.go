package schemagen_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/contract/validate"
	"github.com/fabric-runtime/fabric/internal/schemagen"
	"github.com/fabric-runtime/fabric/schemas"
)

var update = flag.Bool("update", false, "rewrite schemas/ from the Go types instead of comparing")

const (
	schemaDir = "../../schemas"
	regen     = "go test ./internal/schemagen -run TestSchemasUpToDate -update"
)

// TestSchemasUpToDate is the drift check: the committed schemas/ files,
// and the copies package schemas embeds, are what the generator writes.
// With -update it writes them.
func TestSchemasUpToDate(t *testing.T) {
	names := schemagen.Names()
	for _, name := range names {
		want, err := schemagen.Generate(name)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(schemaDir, name+".schema.json")
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("schemas/%s.schema.json: %v; run `%s`", name, err, regen)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("schemas/%s.schema.json is out of date with the Go types in contract/; run `%s`. Diff (-committed +generated):\n%s",
				name, regen, cmp.Diff(string(got), string(want)))
		}
		if embedded, ok := schemas.Lookup(name); !ok || !bytes.Equal(embedded, got) {
			t.Errorf("package schemas does not embed schemas/%s.schema.json as committed (found: %v)", name, ok)
		}
	}
	if !*update {
		sorted := slices.Sorted(slices.Values(names))
		if diff := cmp.Diff(sorted, schemas.Names()); diff != "" {
			t.Errorf("package schemas embeds other schemas than the generator writes (-generated +embedded):\n%s", diff)
		}
	}
	files, err := filepath.Glob(filepath.Join(schemaDir, "*.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".schema.json")
		if slices.Contains(names, name) {
			continue
		}
		if *update {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("schemas/%s is not generated from any contract type; remove it or run `%s`", filepath.Base(f), regen)
	}
}

func TestSchemaCatalogue(t *testing.T) {
	want := []string{
		"agent", "adapter-descriptor", "run-plan", "run-request", "run-result", "fabric-event", "error-info",
		"artifact-manifest", "runtime-handle", "invocation-handle", "environment-handle", "service-handle",
		"service-reference", "runtime-stop-result", "agent-config", "runtime-context", "agent-run-request",
		"agent-run-result", "check-request", "check-report", "doctor-report", "deployment", "batch", "batch-trial",
		"batch-summary", "runtime-package", "support-catalog", "trust", "qualification-predicate",
	}
	if diff := cmp.Diff(want, schemagen.Names()); diff != "" {
		t.Errorf("SchemaNames (-want +got):\n%s", diff)
	}
	kebab := regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)
	for _, d := range schemagen.All() {
		if !kebab.MatchString(d.Name) {
			t.Errorf("%q is not kebab-case", d.Name)
		}
		if d.Type == nil || d.Type.Kind() != reflect.Struct || d.Title != d.Type.Name() && d.Name != "agent" {
			t.Errorf("%s: bad type %v or title %q", d.Name, d.Type, d.Title)
		}
		a, err := schemagen.Generate(d.Name)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := schemagen.Generate(d.Name)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: generation is not deterministic", d.Name)
		}
		if !bytes.HasSuffix(a, []byte("}\n")) || !bytes.HasPrefix(a, []byte("{\n  \"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n")) {
			t.Errorf("%s: unexpected framing:\n%.200s", d.Name, a)
		}
		var m map[string]any
		if err := json.Unmarshal(a, &m); err != nil {
			t.Fatal(err)
		}
		if m["title"] != d.Title || m["type"] != "object" {
			t.Errorf("%s: title %v type %v", d.Name, m["title"], m["type"])
		}
		if _, ok := m["$id"]; ok {
			t.Errorf("%s: unexpected $id", d.Name)
		}
	}
	if _, err := schemagen.Generate("nope"); err == nil || !strings.Contains(err.Error(), "agent-config") {
		t.Errorf("unknown name: err = %v, want one listing the known names", err)
	}
}

func TestFabricConfigSchemaShape(t *testing.T) {
	m := schemaMap(t, "agent")
	if diff := cmp.Diff([]any{"schema_version", "metadata", "runtime"}, m["required"]); diff != "" {
		t.Errorf("agent required (-want +got):\n%s", diff)
	}
	if m["additionalProperties"] != true {
		t.Errorf("agent additionalProperties = %v, want true", m["additionalProperties"])
	}
	props := m["properties"].(map[string]any)
	for _, k := range contract.FabricConfigKeys() {
		if _, ok := props[k]; !ok {
			t.Errorf("agent schema lacks typed key %q", k)
		}
	}
	if got := props["schema_version"].(map[string]any)["const"]; got != contract.ConfigSchemaVersion {
		t.Errorf("schema_version const = %v", got)
	}
	for _, southbound := range []string{"agent-config", "runtime-context", "agent-run-request", "agent-run-result"} {
		if got := schemaMap(t, southbound)["additionalProperties"]; got != false {
			t.Errorf("%s additionalProperties = %v, want false", southbound, got)
		}
	}
}

// TestSchemasReject checks that the generated schemas do constrain.
func TestSchemasReject(t *testing.T) {
	cases := []struct{ name, schema, doc string }{
		{"config without runtime", "agent", `{"schema_version":"fabric.agent/v1alpha1","metadata":{"name":"a"}}`},
		{"config with another version", "agent", `{"schema_version":"fabric.agent/v2","metadata":{"name":"a"},"runtime":{}}`},
		{"config with blank instruction", "agent", `{"schema_version":"fabric.agent/v1alpha1","metadata":{"name":"a"},"runtime":{},"instructions":{"system":{"content":"  "}}}`},
		{"config with bad mcp transport", "agent", `{"schema_version":"fabric.agent/v1alpha1","metadata":{"name":"a"},"runtime":{},"mcp":{"servers":{"x":{"transport":"ws","url":"u","exposure":"harness_native"}}}}`},
		{"config with zero max_turns", "agent", `{"schema_version":"fabric.agent/v1alpha1","metadata":{"name":"a"},"runtime":{"max_turns":0}}`},
		{"oauth2 with token_url", "agent-config", `{"mcp":{"servers":{"x":{"transport":"sse","url":"u","authentication":{"type":"oauth2","token_url":"t"}}}}}`},
		{"service account without token_url", "agent-config", `{"mcp":{"servers":{"x":{"transport":"sse","url":"u","authentication":{"type":"service_account","client_id":"c","client_secret_env":"E"}}}}}`},
		{"unknown auth type", "agent-config", `{"mcp":{"servers":{"x":{"transport":"sse","url":"u","authentication":{"type":"basic"}}}}}`},
		{"southbound unknown key", "agent-config", `{"telemetry":{}}`},
		{"southbound model top_p", "agent-config", `{"models":{"default":{"provider":"p","model":"m","top_p":0.5}}}`},
		{"negative max_turns", "agent-config", `{"runtime":{"max_turns":-1}}`},
		{"failed without error", "agent-run-result", `{"status":"failed","output":null}`},
		{"succeeded with error", "agent-run-result", `{"status":"succeeded","output":"x","error":{"code":"c","message":"m"}}`},
		{"missing output", "agent-run-result", `{"status":"succeeded"}`},
		{"absolute artifact path", "agent-run-result", `{"status":"succeeded","output":1,"artifacts":[{"name":"a","kind":"file","path":"/etc/passwd"}]}`},
		{"drive artifact path", "agent-run-result", `{"status":"succeeded","output":1,"artifacts":[{"name":"a","kind":"file","path":"C:x"}]}`},
		{"dotdot artifact path", "agent-run-result", `{"status":"succeeded","output":1,"artifacts":[{"name":"a","kind":"file","path":"a/../../b"}]}`},
		{"negative cost", "agent-run-result", `{"status":"succeeded","output":1,"usage":{"cost_usd":-1}}`},
		{"negative tokens", "agent-run-result", `{"status":"succeeded","output":1,"usage":{"input_tokens":-1}}`},
		{"request without input", "agent-run-request", `{"context":{}}`},
		{"context without environment", "runtime-context", `{"runtime_id":"r","invocation_id":"i","request_id":"q","artifacts":{"artifacts":[]}}`},
		{"null artifact list", "runtime-context", `{"runtime_id":"r","invocation_id":"i","request_id":"q","environment":{"environment_id":"e","provider":"local","control_location":"in_env_control","ownership":"caller_owned"},"artifacts":{"artifacts":null}}`},
		{"descriptor bad kind", "adapter-descriptor", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"wasm"}`},
		{"descriptor unknown extension point", "adapter-descriptor", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","extension_schemas":{"nope":{}}}`},
		{"descriptor boolean settings schema", "adapter-descriptor", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","settings_schema":true}`},
		{"descriptor limits typo", "adapter-descriptor", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","limits":{"start":3}}`},
		{"event without id", "fabric-event", `{"timestamp_millis":1,"kind":"k","message":"m"}`},
		{"error-info bad stage", "error-info", `{"stage":"boot","code":"c","message":"m"}`},
		{"check report bad outcome", "check-report", `{"schema_version":"fabric.check/v1alpha1","scope":"server","runtime_id":null,"outcome":"ok","observations":[],"started_at_millis":0,"finished_at_millis":0,"elapsed_millis":0}`},
		{"service reference extra key", "service-reference", `{"adapter_id":"a","service_type":"t","token":"secret"}`},
	}
	v := validate.NewValidator()
	for _, c := range cases {
		if err := v.Validate(c.schema, []byte(c.doc)); err == nil {
			t.Errorf("%s: %s accepted %s", c.name, c.schema, c.doc)
		}
	}
}

// TestSchemasAcceptUpstreamStyle feeds documents shaped the way upstream
// producers write them (explicit nulls, omitted defaults) through our schemas
// and Go types.
func TestSchemasAcceptUpstreamStyle(t *testing.T) {
	cases := []struct{ schema, doc string }{
		{"agent-run-result", `{"status":"succeeded","output":"hi","error":null,"usage":null}`},
		{"agent-run-result", `{"status":"failed","output":null,"error":{"code":"boom","message":"it broke"}}`},
		{"agent-run-result", `{"status":"cancelled","output":null,"usage":{"input_tokens":null,"cost_usd":null}}`},
		{"agent-config", `{"harness":null,"instructions":{"system":null},"tools":{"enabled":null},"mcp":{"servers":{"x":{"transport":"stdio","url":"srv","allowed_tools":null,"authentication":null}}}}`},
		{"runtime-context", `{"runtime_id":"r","invocation_id":"i","request_id":"q","environment":{"environment_id":"e","provider":"local","control_location":"in_env_control","ownership":"caller_owned","workspace":null,"artifacts":null},"artifacts":{"root":null,"artifacts":[]},"telemetry":null}`},
		{"agent", `{"schema_version":"fabric.agent/v1alpha1","metadata":{"name":"a","description":null},"runtime":{"max_turns":null,"future_field":1},"harness":{"adapter_id":"x","resolution":null},"tools":{"enabled":null},"brand_new_block":{}}`},
		{"adapter-descriptor", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","settings_schema":null,"capabilities":{"streaming":true},"config":{"accepts":["models"],"future":1},"future_top_level":true}`},
		{"adapter-descriptor", `{"contract_version":"fabric.adapter/v1alpha1","adapter_id":"a","harness":"codex","adapter_kind":"python","runner":{"module":"x.host"}}`},
	}
	v := validate.NewValidator()
	for _, c := range cases {
		if err := v.Validate(c.schema, []byte(c.doc)); err != nil {
			t.Errorf("%s rejected %s: %v", c.schema, c.doc, err)
		}
		d, _ := schemagen.Lookup(c.schema)
		val := reflect.New(d.Type)
		if err := json.Unmarshal([]byte(c.doc), val.Interface()); err != nil {
			t.Errorf("%s: Go type rejected %s: %v", c.schema, c.doc, err)
			continue
		}
		if err := v.ValidateValue(c.schema, val.Interface()); err != nil {
			t.Errorf("%s: re-marshalled %s is invalid: %v", c.schema, c.doc, err)
		}
	}
}

func TestNilVersusEmptyLists(t *testing.T) {
	cases := []struct {
		value any
		want  string
	}{
		{contract.AgentToolsConfig{}, `{}`},
		{contract.AgentToolsConfig{Enabled: []string{}}, `{"enabled":[]}`},
		{contract.ToolsConfig{}, `{}`},
		{contract.ToolsConfig{Enabled: []string{}}, `{"enabled":[]}`},
		{contract.AgentMCPServer{Transport: "stdio", URL: "x"}, `{"transport":"stdio","url":"x"}`},
		{contract.AgentMCPServer{Transport: "stdio", URL: "x", AllowedTools: []string{}}, `{"transport":"stdio","url":"x","allowed_tools":[]}`},
		{contract.MCPServerConfig{Transport: "stdio", URL: "x", Exposure: "harness_native", AllowedTools: []string{}}, `{"transport":"stdio","url":"x","exposure":"harness_native","allowed_tools":[]}`},
		{contract.ArtifactManifest{}, `{"artifacts":[]}`},
		{&contract.ArtifactManifest{}, `{"artifacts":[]}`},
		{contract.RuntimeContext{}, `{"runtime_id":"","invocation_id":"","request_id":"","environment":{"environment_id":"","provider":"","control_location":"","ownership":""},"artifacts":{"artifacts":[]}}`},
		{contract.AdapterDescriptor{}, `{"contract_version":"","adapter_id":"","adapter_kind":"","capabilities":{"service":false,"streaming":false,"updates":false,"cancellation":false}}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.value)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%T: got %s, want %s", c.value, b, c.want)
		}
	}
	var back contract.AgentToolsConfig
	if err := json.Unmarshal([]byte(`{"enabled":[]}`), &back); err != nil || back.Enabled == nil {
		t.Errorf("empty enabled list did not survive unmarshal: %#v, %v", back, err)
	}
}

// TestMCPAuthenticationVariants checks that every field of the shared Go
// type belongs to at least one upstream variant of the schema.
func TestMCPAuthenticationVariants(t *testing.T) {
	defs := schemaMap(t, "agent-config")["$defs"].(map[string]any)
	variants := defs["MCPAuthentication"].(map[string]any)["oneOf"].([]any)
	seen := map[string]bool{}
	for _, v := range variants {
		for k := range v.(map[string]any)["properties"].(map[string]any) {
			seen[k] = true
		}
	}
	typ := reflect.TypeFor[contract.MCPAuthentication]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if !seen[name] {
			t.Errorf("MCPAuthentication field %q is in no schema variant; update mcpAuthenticationSchema", name)
		}
		delete(seen, name)
	}
	for k := range seen {
		t.Errorf("schema variant property %q has no MCPAuthentication field", k)
	}
}

func TestValidatorErrors(t *testing.T) {
	v := validate.NewValidator()
	if err := v.Validate("nope", []byte(`{}`)); err == nil {
		t.Error("unknown schema accepted")
	}
	if err := v.Validate("fabric-event", []byte(`{"event_id":`)); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("truncated JSON: err = %v", err)
	}
	err := v.Validate("invocation-handle", []byte(`{"invocation_id":"i","request_id":"r"}`))
	if err == nil || !strings.Contains(err.Error(), "invocation-handle") || !strings.Contains(err.Error(), "runtime_id") {
		t.Errorf("missing runtime_id: err = %v, want one naming the schema and the property", err)
	}
	if err := validate.Validate("invocation-handle", []byte(`{"invocation_id":"i","request_id":"r","runtime_id":"x"}`)); err != nil {
		t.Errorf("package-level Validate: %v", err)
	}
}

func schemaMap(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := schemagen.Generate(name)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
