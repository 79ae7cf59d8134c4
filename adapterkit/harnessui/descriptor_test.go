package harnessui

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract/validate"
)

var update = flag.Bool("update", false, "rewrite testdata/demo.golden.json")

// TestDescriptorsCarryFragment (S8): every descriptor under adapters/ that
// declares interfaces carries the fragment exactly as generated; run
// `go generate ./adapterkit/harnessui` after changing a declaration.
func TestDescriptorsCarryFragment(t *testing.T) {
	paths, err := filepath.Glob("../../adapters/*/packages/*/*.fabric-adapter.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no descriptors found: %v", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckDescriptor(data); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestUpdateDescriptor: the generator splices the fragment into
// settings_schema.properties, keeps every other byte, is idempotent, and
// the result validates as a descriptor.
func TestUpdateDescriptor(t *testing.T) {
	in, err := os.ReadFile("testdata/demo.fabric-adapter.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := UpdateDescriptor(in)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/demo.golden.json", out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile("testdata/demo.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, golden) {
		t.Fatalf("UpdateDescriptor output differs from testdata/demo.golden.json (run with -update):\n%s", out)
	}
	// Everything before the insertion point and after it is unchanged.
	at := bytes.Index(in, []byte(`{"type": "string", "minLength": 1}`)) + len(`{"type": "string", "minLength": 1}`)
	if !bytes.HasPrefix(out, in[:at]) || !bytes.HasSuffix(out, in[at:]) {
		t.Error("UpdateDescriptor changed bytes outside the fragment")
	}
	again, err := UpdateDescriptor(golden)
	if err != nil || !bytes.Equal(again, golden) {
		t.Errorf("not idempotent: %v", err)
	}
	if err := CheckDescriptor(golden); err != nil {
		t.Error(err)
	}
	if err := CheckDescriptor(in); err == nil || !strings.Contains(err.Error(), "go generate ./adapterkit/harnessui") {
		t.Errorf("CheckDescriptor of the ungenerated descriptor: %v", err)
	}
	if err := validate.Validate("adapter-descriptor", golden); err != nil {
		t.Errorf("the generated descriptor does not validate: %v", err)
	}
}

// TestCheckDescriptorDrift: any change to a descriptor's copy, or to its
// declarations without regenerating, fails the check.
func TestCheckDescriptorDrift(t *testing.T) {
	golden, err := os.ReadFile("testdata/demo.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string][2]string{
		"maximum timeout":    {`"maximum": 75`, `"maximum": 90`},
		"open interfaces":    {`"additionalProperties": false,` + "\n        \"properties\": {\n          \"dashboard\"", `"additionalProperties": true,` + "\n        \"properties\": {\n          \"dashboard\""},
		"declaration change": {`{"name": "api", "kind": "http"`, `{"name": "api", "kind": "http", "public_origins": true, "browser": true`},
		"port not required":  {`"port"` + "\n              ]", `"enabled"` + "\n              ]"},
	} {
		if !bytes.Contains(golden, []byte(edit[0])) {
			t.Fatalf("%s: %q not in the golden file", name, edit[0])
		}
		drifted := bytes.Replace(golden, []byte(edit[0]), []byte(edit[1]), 1)
		if err := CheckDescriptor(drifted); err == nil {
			t.Errorf("%s: drift not detected", name)
		}
	}
	// Interfaces in the settings but no declarations.
	noDecls := bytes.Replace(golden, []byte(`"interfaces": [`), []byte(`"x_interfaces": [`), 1)
	if err := CheckDescriptor(noDecls); err == nil || !strings.Contains(err.Error(), "declares no interfaces") {
		t.Errorf("undeclared fragment: %v", err)
	}
}

func TestUpdateDescriptorShapes(t *testing.T) {
	const head = `{"contract_version": "fabric.adapter/v1alpha2", "adapter_id": "x", "adapter_kind": "process",
  "interfaces": [{"name": "terminal", "kind": "terminal"}],
  "settings_schema": `
	for name, schema := range map[string]string{
		"compact":          `{"type":"object","properties":{"a":{"type":"string"}}}}`,
		"empty properties": "{\n    \"type\": \"object\",\n    \"properties\": {}\n  }\n}\n",
		"replace":          `{"properties": {"interfaces": {"type": "object"}, "b": {}}}}`,
	} {
		out, err := UpdateDescriptor([]byte(head + schema))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := CheckDescriptor(out); err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
	}
	for name, doc := range map[string]string{
		"no settings_schema": `{"contract_version": "fabric.adapter/v1alpha2", "adapter_id": "x", "adapter_kind": "process", "interfaces": [{"name": "t", "kind": "terminal"}]}`,
		"no properties":      head + `{"type": "object"}}`,
		"duplicate names":    strings.Replace(head, `[{"name": "terminal", "kind": "terminal"}]`, `[{"name": "t", "kind": "terminal"}, {"name": "t", "kind": "http"}]`, 1) + `{"properties": {}}}`,
		"browser terminal":   strings.Replace(head, `"kind": "terminal"}`, `"kind": "terminal", "browser": true}`, 1) + `{"properties": {}}}`,
		"reserved setting":   strings.Replace(head, `"kind": "terminal"}`, `"kind": "terminal", "settings": {"port": {}}}`, 1) + `{"properties": {}}}`,
	} {
		if _, err := UpdateDescriptor([]byte(doc)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Without declarations the descriptor is left alone.
	plain := []byte(`{"contract_version": "fabric.adapter/v1alpha2", "adapter_id": "x", "adapter_kind": "process"}`)
	if out, err := UpdateDescriptor(plain); err != nil || !bytes.Equal(out, plain) {
		t.Errorf("plain descriptor: %v %s", err, out)
	}
}
