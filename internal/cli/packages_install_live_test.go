package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/pkginstall"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// runCLI runs the fabric CLI in this process and returns its exit code
// and output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// The acceptance, end to end with the npm registry: on a clean
// data directory `fabric packages install nvidia.fabric.codex` (the
// package built into fabric), then
// `fabric run` of a Codex config against the scripted model endpoint works
// with FABRIC_HARNESS_PATH unset and no harness on PATH; after one byte of
// the installed launcher is changed the next start fails closed with
// artifact_digest_mismatch, and once restored it runs again.
func TestLivePackagesInstallThenRun(t *testing.T) {
	livetest.Short(t, "npm and the npm registry (it installs @openai/codex)")
	npm, err := exec.LookPath("npm")
	if err != nil {
		livetest.Missing(t, "npm", "install Node.js with npm", err)
	}
	// PATH: the system directories and npm's, nothing of harnesses/.
	path := strings.Join([]string{filepath.Dir(npm), "/usr/local/bin", "/usr/bin", "/bin"}, string(os.PathListSeparator))
	t.Setenv("PATH", path)
	if p, err := exec.LookPath("codex"); err == nil {
		t.Fatalf("codex is on the test's PATH already (%s): the test would not show the install is what finds it", p)
	}
	t.Setenv(fabric.EnvHarnessPath, "")
	os.Unsetenv(fabric.EnvHarnessPath)
	data := t.TempDir()
	t.Setenv(pkginstall.EnvDataHome, data)
	start := time.Now()
	code, out, errOut := runCLI(t, "packages", "install", "nvidia.fabric.codex")
	if code != 0 {
		t.Fatalf("install exit %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("install took %v", time.Since(start))
	var inst struct {
		Status, Dir string
		Bins        []pkginstall.RecordBin
	}
	if err := json.Unmarshal([]byte(out), &inst); err != nil || inst.Status != "installed" || len(inst.Bins) != 1 {
		t.Fatalf("install output %s (%v)", out, err)
	}
	if code, out, _ := runCLI(t, "packages", "install", "nvidia.fabric.codex"); code != 0 || !strings.Contains(out, `"status": "already_installed"`) {
		t.Fatalf("second install: exit %d %s", code, out)
	}

	script, err := modelstub.LoadScript(filepath.Join("..", "..", "adapters", "codex", "packages", "nvidia.fabric.codex", "conformance.modelstub.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const key = "sk-fabric-install-live-7d2a"
	harnessui.RecordForAudit(key)
	stub := modelstub.New(script, modelstub.WithExpectKey(key))
	t.Cleanup(stub.Close)
	t.Setenv("FABRIC_STUB_API_KEY", key)
	cfg := filepath.Join(t.TempDir(), "codex.yaml")
	if err := os.WriteFile(cfg, []byte(`schema_version: fabric.agent/v1alpha1
metadata:
  name: codex-installed
runtime:
  timeout_seconds: 300
harness:
  adapter_id: nvidia.fabric.codex
  package: nvidia.fabric.codex
  settings:
    sandbox: read-only
    approval_mode: deny_all
models:
  default:
    provider: stub
    model: gpt-5-codex
    api_key_env: FABRIC_STUB_API_KEY
    base_url: `+stub.OpenAIBaseURL()+`
`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func() (int, string) {
		code, out, errOut := runCLI(t, "run", cfg, "--input", "hello")
		return code, out + errOut
	}
	if code, out := run(); code != 0 || !strings.Contains(out, `"status": "succeeded"`) || !strings.Contains(out, "conformance ok") {
		t.Fatalf("run with the installed package: exit %d\n%s", code, out)
	}
	// harness.package took the built-in catalog's signed default, which
	// pins the installed package's digest.
	code, out, errOut = runCLI(t, "plan", cfg)
	var planned struct {
		Package *contract.PackageSelection `json:"package"`
	}
	if err := json.Unmarshal([]byte(out), &planned); code != 0 || err != nil || planned.Package == nil {
		t.Fatalf("plan: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	if p := planned.Package; !strings.HasPrefix(p.Entry, "nvidia.fabric.codex@") || p.State != contract.StateSupported || p.CatalogSerial < 2 {
		t.Fatalf("plan selected %+v, want the catalog's supported default", p)
	}

	entry := filepath.Join(inst.Dir, filepath.FromSlash(inst.Bins[0].Resolved))
	orig, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Clone(orig)
	edited[len(edited)/2] ^= 0x20
	if err := os.WriteFile(entry, edited, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, out := run(); code != 1 || !strings.Contains(out, `"code": "artifact_digest_mismatch"`) || !strings.Contains(out, inst.Bins[0].Resolved) {
		t.Fatalf("run after editing %s: exit %d\n%s", entry, code, out)
	}
	if err := os.WriteFile(entry, orig, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, out := run(); code != 0 {
		t.Fatalf("run after restoring %s: exit %d\n%s", entry, code, out)
	}

	selectInstalled(t, cfg, inst.Dir)
}

// selectInstalled is the selection half of the install test: a config
// naming the package (harness.package: nvidia.fabric.codex, the signed
// default of the catalog built into fabric) plans under the catalog entry
// and runs from the install, even with a broken codex first on
// FABRIC_HARNESS_PATH; an edited file of the install's package copy fails
// the plan closed (artifact_digest_mismatch), and with no install the plan
// is refused (package_not_installed) rather than run whatever codex PATH
// holds.
func selectInstalled(t *testing.T, cfg, installDir string) {
	work := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(work, "state"))
	entry := filepath.Base(installDir) // nvidia.fabric.codex@VERSION
	pinned := cfg                      // it names harness.package: nvidia.fabric.codex
	// A codex that fails, first on FABRIC_HARNESS_PATH: the selected
	// install's bin directory must come before it.
	broken := filepath.Join(work, "broken")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "codex"), []byte("#!/bin/sh\necho not the installed codex >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(fabric.EnvHarnessPath, broken)

	code, out, errOut := runCLI(t, "plan", pinned)
	if code != 0 || !strings.Contains(out, `"entry": "`+entry+`"`) || !strings.Contains(out, `"state": "supported"`) {
		t.Fatalf("plan of %s: exit %d\n%s\n%s", entry, code, out, errOut)
	}
	code, out, errOut = runCLI(t, "run", pinned, "--input", "hello")
	if code != 0 || !strings.Contains(out, `"status": "succeeded"`) || !strings.Contains(out, "conformance ok") {
		t.Fatalf("run of the selected install with a broken codex on %s: exit %d\n%s\n%s", fabric.EnvHarnessPath, code, out, errOut)
	}

	desc := filepath.Join(installDir, pkginstall.PackageCopyDir, "fabric-package.json")
	orig, err := os.ReadFile(desc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(desc, append(bytes.Clone(orig), ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "plan", pinned); code == 0 || !strings.Contains(out+errOut, `"code": "artifact_digest_mismatch"`) {
		t.Fatalf("plan after editing the install's package copy: exit %d\n%s\n%s", code, out, errOut)
	}
	if err := os.WriteFile(desc, orig, 0o644); err != nil {
		t.Fatal(err)
	}

	t.Setenv(pkginstall.EnvDataHome, t.TempDir())
	if code, out, errOut := runCLI(t, "plan", pinned); code == 0 || !strings.Contains(out+errOut, `"code": "package_not_installed"`) {
		t.Fatalf("plan with no install: exit %d\n%s\n%s", code, out, errOut)
	}
}
