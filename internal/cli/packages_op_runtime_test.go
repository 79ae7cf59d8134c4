package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
)

// opsPackageJSON is a package whose operations run against a runtime's
// home: one that only reads, one that chmods the home (a change neither
// Landlock nor a read operation may make, so it is always caught).
const opsPackageJSON = `{
  "contract_version": "fabric.package/v1alpha1",
  "package": {"id": "example.ops", "version": "0.1.0", "publisher": "example"},
  "adapter": {"path": "adapter.json", "sha256": "a02610b31571be18687d74ec9d13428ae4f034d0c60144f11a107f33450bca98"},
  "runtime": {"name": "example", "version": "0.1.0"},
  "artifacts": {},
  "state_paths": [{"id": "config", "path": "config.json", "class": "config"}],
  "operations": [
    {"id": "show", "mode": "read", "argv": ["sh", "-c", "ls -a >/dev/null"]},
    {"id": "bad-chmod", "mode": "read", "argv": ["sh", "-c", "chmod 751 ."]}
  ]
}
`

// A read operation run against a running runtime that changes its state
// marks the runtime tainted: its handle says so from then on, with the
// operation and the diff, and a clean operation afterwards does not clear
// it. A runtime that is not there is operation_runtime_not_found.
func TestOperationTaintsRuntime(t *testing.T) {
	pkg := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(pkg, contract.PackageDescriptorFile), []byte(opsPackageJSON), 0o644))
	must(os.WriteFile(filepath.Join(pkg, "adapter.json"), []byte(`{"contract_version": "fabric.adapter/v1alpha2", "adapter_id": "example.ops", "adapter_kind": "process", "runner": {"command": "true"}}`+"\n"), 0o644))

	stateDir := t.TempDir()
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(stateDir))
	cfg, err := client.ParseConfig([]byte("schema_version: fabric.agent/v1alpha1\nmetadata: {name: taint}\nruntime: {timeout_seconds: 30}\nharness: {adapter_id: fabric.scripted, settings: {response: ok}}\n"), "agent.yaml", fabric.LoadOptions{})
	must(err)
	ctx := context.Background()
	rt, err := client.StartRuntime(ctx, cfg)
	must(err)
	defer rt.Stop(ctx)
	if h := rt.Handle(); h.Tainted || len(h.Taints) != 0 {
		t.Fatalf("a fresh runtime is tainted: %+v", h)
	}

	opRun := func(op string, args ...string) (int, map[string]any) {
		var out, errb bytes.Buffer
		code := Run(ctx, append([]string{"packages", "op", "run", pkg, op, "--allow-unenforced-read"}, args...), Stdio{In: strings.NewReader(""), Out: &out, Err: &errb})
		var doc map[string]any
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("%s: %v\n%s\n%s", op, err, out.String(), errb.String())
		}
		return code, doc
	}
	if code, doc := opRun("show", "--runtime", rt.ID(), "--state-dir", stateDir); code != 0 || doc["status"] != "ok" {
		t.Fatalf("show: exit %d %v", code, doc)
	}
	if rt.Handle().Tainted {
		t.Fatal("a clean read tainted the runtime")
	}
	code, doc := opRun("bad-chmod", "--runtime", rt.ID(), "--state-dir", stateDir)
	if code != ExitFailure || !strings.Contains(toJSON(doc), `"code":"operation_mutated_state"`) {
		t.Fatalf("bad-chmod: exit %d %v", code, doc)
	}
	check := func() {
		t.Helper()
		h := rt.Handle()
		if !h.Tainted || len(h.Taints) != 1 {
			t.Fatalf("handle after a mutating operation: tainted %v taints %+v", h.Tainted, h.Taints)
		}
		tt := h.Taints[0]
		if tt.Package != "example.ops@0.1.0" || tt.Operation != "bad-chmod" || tt.Mode != "read" || tt.At == "" || len(tt.Violations) != 1 || !strings.HasPrefix(tt.Violations[0], "modified "+filepath.ToSlash(stateDir)) {
			t.Errorf("taint %+v", tt)
		}
		b, _ := json.Marshal(h)
		if !strings.Contains(string(b), `"tainted":true`) {
			t.Errorf("the handle's JSON does not say tainted: %s", b)
		}
	}
	check()
	if code, _ := opRun("show", "--runtime", rt.ID(), "--state-dir", stateDir); code != 0 {
		t.Fatalf("show after the taint: exit %d", code)
	}
	check() // persists, not cleared by a clean operation

	if code, doc := opRun("show", "--runtime", "runtime-nope", "--state-dir", stateDir); code != ExitFailure || !strings.Contains(toJSON(doc), `"code":"operation_runtime_not_found"`) {
		t.Errorf("unknown runtime: exit %d %v", code, doc)
	}
	var out, errb bytes.Buffer
	if code := Run(ctx, []string{"packages", "op", "run", pkg, "show", "--runtime", rt.ID(), "--home", "."}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}); code != ExitUsage {
		t.Errorf("--home with --runtime: exit %d %s", code, errb.String())
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
