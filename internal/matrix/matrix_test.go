package matrix_test

import (
	"bytes"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/matrix"
)

func bundledDescriptors() []matrix.Descriptor {
	var ds []matrix.Descriptor
	for _, d := range bundled.Descriptors() {
		ds = append(ds, matrix.Descriptor{Name: d.Name, Data: d.Data})
	}
	return ds
}

// TestMatrixUpToDate fails when docs/harnesses.md differs from what the
// descriptors and the harnesses' lockfiles generate. The discoverable
// (npm-installed) descriptors need harnesses/install.sh; without it the
// test is skipped unless FABRIC_REQUIRE_HARNESSES=1.
func TestMatrixUpToDate(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "harnesses", "node_modules")); err != nil {
		livetest.Missing(t, "the pinned harnesses (their descriptors are discovered from harnesses/)", "run harnesses/install.sh", nil)
	}
	want, err := matrix.Generate(root, bundledDescriptors())
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(matrix.OutputPath)))
	if err != nil {
		t.Fatalf("%v (run go generate ./internal/matrix)", err)
	}
	if !bytes.Equal(have, want) {
		t.Fatalf("%s is out of date: run go generate ./internal/matrix\n--- generated:\n%s", matrix.OutputPath, want)
	}
}

// TestMatrixPicksUpNewAdapters: a descriptor added to the bundle and one
// installed in a harnesses project appear without code changes, with the
// pinned version of the package that provides the harness binary.
func TestMatrixPicksUpNewAdapters(t *testing.T) {
	root := t.TempDir()
	h := filepath.Join(root, "harnesses", "demo")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(h, "package.json"), `{"dependencies": {"demo-agent": "1.2.3", "demo-host": "0.1.0", "demo-lib": "2.0.1", "lib-host": "file:host"}}`)
	write(filepath.Join(h, "package-lock.json"), `{"packages": {
		"node_modules/demo-agent": {"version": "1.2.3", "bin": {"demo": "cli.js"}},
		"node_modules/demo-host": {"version": "0.1.0", "peerDependencies": {"demo-agent": "^1"}},
		"node_modules/demo-lib": {"version": "2.0.1"},
		"node_modules/lib-host": {"resolved": "host", "link": true},
		"host": {"name": "lib-host", "version": "0.0.0", "bin": {"lib-host": "host.mjs"}, "peerDependencies": {"demo-lib": "2.0.1"}}}}`)
	write(filepath.Join(h, "node_modules", "demo-host", "demo.fabric-adapter.json"), `{
		"contract_version": "fabric.adapter/v1alpha2", "adapter_id": "example.host", "adapter_kind": "process",
		"runner": {"command": "node", "script": "cli.js"}, "requirements": {"binaries": ["node"]},
		"config": {"accepts": ["models", "tools.enabled", "skills"]}}`)
	bundledDesc := `{
		"contract_version": "fabric.adapter/v1alpha2", "adapter_id": "example.native", "harness": "demo", "adapter_kind": "process",
		"runner": {"builtin": "example.native", "protocol": "fabric.host/v2"}, "requirements": {"binaries": ["demo"]},
		"config": {"accepts": ["models", "mcp", "tools.blocked"], "system_instruction_modes": ["replace"]},
		"capabilities": {"streaming": true, "cancellation": true},
		"settings_schema": {"type": "object", "properties": {"permission_mode": {"type": "string"}, "resume_session": {"type": "string"}}},
		"interfaces": [{"name": "web", "kind": "http"}]}`
	// A bundled descriptor whose host is a linked folder of the project:
	// pinned are the packages that host drives (its peers).
	libDesc := `{
		"contract_version": "fabric.adapter/v1alpha2", "adapter_id": "example.lib", "harness": "demolib", "adapter_kind": "process",
		"runner": {"command": "lib-host", "protocol": "fabric.host/v2"}, "requirements": {"binaries": ["lib-host", "node"]},
		"config": {"accepts": ["models"]}}`
	out, err := matrix.Generate(root, []matrix.Descriptor{{Name: "native.fabric-adapter.json", Data: []byte(bundledDesc)}, {Name: "lib.fabric-adapter.json", Data: []byte(libDesc)}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{
		"| `example.host` | npm demo-host 0.1.0 | demo-agent 1.2.3 | fabric.host/v1 | enabled | — | yes | no | — | — | no | — |",
		"| `example.native` | bundled | demo: demo-agent 1.2.3 | fabric.host/v2 | blocked | mcp | no | yes | `resume_session` | `permission_mode` | yes | web (http) |",
		"| `example.lib` | bundled | demolib: demo-lib 2.0.1 |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("matrix lacks\n%s\n---\n%s", want, s)
		}
	}
}
