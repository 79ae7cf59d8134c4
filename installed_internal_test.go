package fabric

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/pkginstall"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// writeInstall lays out an install of example.tool@1 by hand (what
// pkginstall.Install leaves, without npm) and returns its root.
func writeInstall(t *testing.T, data string) string {
	t.Helper()
	root := filepath.Join(pkginstall.PackagesDir(data), "example.tool@1")
	bin := filepath.Join(root, "node_modules", "tool", "bin", "tool.js")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho tool\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "node_modules", ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../tool/bin/tool.js", filepath.Join(root, "node_modules", ".bin", "tool")); err != nil {
		t.Fatal(err)
	}
	m, err := treemanifest.Take(root, treemanifest.Options{NoIgnoreFile: true})
	if err != nil {
		t.Fatal(err)
	}
	var sum string
	for _, e := range m.Entries {
		if e.Path == "node_modules/tool/bin/tool.js" {
			sum = e.SHA256
		}
	}
	rec := pkginstall.Record{
		Type: pkginstall.RecordV1Alpha1, Package: pkginstall.RecordPackage{ID: "example.tool", Version: "1"},
		Platform: pkginstall.Platform(), Artifacts: []pkginstall.RecordArtifact{},
		Bins:     []pkginstall.RecordBin{{Name: "tool", Path: "node_modules/.bin/tool", Resolved: "node_modules/tool/bin/tool.js", SHA256: sum}},
		Manifest: pkginstall.RecordManifest{Digest: m.Digest(), Entries: m.Entries},
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, pkginstall.RecordFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// A client with WithInstalledPackages puts the installs' bin directories
// on its extra path (after FABRIC_HARNESS_PATH) and checks an install
// before a start executes a binary inside it.
func TestWithInstalledPackages(t *testing.T) {
	data := t.TempDir()
	root := writeInstall(t, data)
	t.Setenv(EnvHarnessPath, "/opt/harness/bin")
	lookup := func(string) (string, bool) { return "", false }
	c := New(WithEnv(lookup), WithInstalledPackages(data))
	if want := []string{"/opt/harness/bin", filepath.Join(root, "node_modules", ".bin")}; !slices.Equal(c.extraPath, want) {
		t.Fatalf("extra path %v, want %v", c.extraPath, want)
	}
	if c.runtimeOptions().CheckExec == nil {
		t.Fatal("no pre-exec check with an install present")
	}
	link := filepath.Join(root, "node_modules", ".bin", "tool")
	if err := c.checkInstalledExec(link); err != nil {
		t.Fatalf("unchanged install: %v", err)
	}
	if err := c.checkInstalledExec("/usr/bin/env"); err != nil {
		t.Fatalf("a binary outside every install: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "node_modules", "tool", "bin", "tool.js"), []byte("#!/bin/sh\necho evil\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var re *contract.RuntimeError
	if err := c.checkInstalledExec(link); !errors.As(err, &re) || re.Code != pkginstall.CodeArtifactDigestMismatch {
		t.Fatalf("changed install: %v; want %s", err, pkginstall.CodeArtifactDigestMismatch)
	}

	// Without the option, or with an empty data directory, nothing changes.
	if c := New(WithEnv(lookup)); len(c.extraPath) != 1 || c.runtimeOptions().CheckExec != nil {
		t.Fatalf("without the option: extra path %v", c.extraPath)
	}
	if c := New(WithEnv(lookup), WithInstalledPackages(t.TempDir())); len(c.extraPath) != 1 || c.runtimeOptions().CheckExec != nil {
		t.Fatalf("empty data dir: extra path %v", c.extraPath)
	}
}
