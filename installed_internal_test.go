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
	if err := c.runtimeOptions().CheckExec(link); err != nil {
		t.Fatalf("unchanged install: %v", err)
	}
	if err := c.runtimeOptions().CheckExec("/usr/bin/env"); err != nil {
		t.Fatalf("a binary outside every install: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "node_modules", "tool", "bin", "tool.js"), []byte("#!/bin/sh\necho evil\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var re *contract.RuntimeError
	if err := c.runtimeOptions().CheckExec(link); !errors.As(err, &re) || re.Code != pkginstall.CodeArtifactDigestMismatch {
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

// A runtime planned under a package selection that names an install runs
// from it: the install's bin directories come before FABRIC_HARNESS_PATH,
// also for an install made after the client, which the pre-exec check then
// covers; a selection of another entry or digest leaves the path alone.
func TestExecPathsOfSelectedInstall(t *testing.T) {
	data := t.TempDir()
	t.Setenv(EnvHarnessPath, "/opt/harness/bin")
	lookup := func(string) (string, bool) { return "", false }
	c := New(WithEnv(lookup), WithInstalledPackages(data))
	root := writeInstall(t, data) // after New: the client does not list it
	bins := filepath.Join(root, "node_modules", ".bin")
	sel := &contract.PackageSelection{Entry: "example.tool@1", PackageDigest: ""}
	for _, tc := range []struct {
		name string
		sel  *contract.PackageSelection
		want []string
	}{
		{"no selection", nil, []string{"/opt/harness/bin"}},
		{"the install", sel, []string{bins, "/opt/harness/bin"}},
		{"another entry", &contract.PackageSelection{Entry: "example.tool@2"}, []string{"/opt/harness/bin"}},
		{"another digest", &contract.PackageSelection{Entry: "example.tool@1", PackageDigest: "00"}, []string{"/opt/harness/bin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra, check := c.execPaths(tc.sel)
			if !slices.Equal(extra, tc.want) {
				t.Fatalf("extra path %v, want %v", extra, tc.want)
			}
			if tc.sel != sel {
				if check != nil {
					t.Fatal("a pre-exec check without an install")
				}
				return
			}
			if check == nil {
				t.Fatal("no pre-exec check for the selected install")
			}
			link := filepath.Join(bins, "tool")
			if err := check(link); err != nil {
				t.Fatalf("unchanged install: %v", err)
			}
		})
	}
	if err := os.WriteFile(filepath.Join(root, "node_modules", "tool", "bin", "tool.js"), []byte("#!/bin/sh\necho evil\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, check := c.execPaths(sel)
	var re *contract.RuntimeError
	if err := check(filepath.Join(bins, "tool")); !errors.As(err, &re) || re.Code != pkginstall.CodeArtifactDigestMismatch {
		t.Fatalf("changed install: %v; want %s", err, pkginstall.CodeArtifactDigestMismatch)
	}
}
