package bundled_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
)

const repoRoot = "../.."

// TestEveryAdapterIsAPackage: each bundled descriptor has exactly one
// package named for its adapter id, which loads from the binary and from
// disk with one digest and carries that very descriptor.
func TestEveryAdapterIsAPackage(t *testing.T) {
	pkgs, err := bundled.Packages()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range bundled.Descriptors() {
		var doc struct {
			ID string `json:"adapter_id"`
		}
		if err := json.Unmarshal(d.Data, &doc); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		ids = append(ids, doc.ID)
		fsys, ok := pkgs[doc.ID]
		if !ok {
			t.Errorf("descriptor %s (%s) has no package", d.Name, doc.ID)
			continue
		}
		embedded, err := pkgdesc.LoadFS(fsys)
		if err != nil {
			t.Errorf("%s (embedded): %v", doc.ID, err)
			continue
		}
		if embedded.ID() != doc.ID {
			t.Errorf("package %s has id %s", doc.ID, embedded.ID())
		}
		carried, err := fs.ReadFile(fsys, embedded.AdapterPath)
		if err != nil || string(carried) != string(d.Data) {
			t.Errorf("%s: the package's adapter descriptor is not the bundled one (%v)", doc.ID, err)
		}
		dir := filepath.Join(repoRoot, filepath.FromSlash(embedded.Descriptor.Source.Path))
		disk, err := pkgdesc.Load(dir)
		if err != nil {
			t.Errorf("%s (disk): %v", doc.ID, err)
			continue
		}
		for _, f := range pkgdesc.CheckLockfile(embedded) {
			t.Errorf("%s: %v", doc.ID, f)
		}
		if disk.Digest() != embedded.Digest() {
			t.Errorf("%s: disk digest %s != embedded %s", doc.ID, disk.Digest(), embedded.Digest())
		}
	}
	for id := range pkgs {
		if !slices.Contains(ids, id) {
			t.Errorf("package %s has no bundled descriptor", id)
		}
	}
	if len(pkgs) != 17 {
		t.Errorf("%d bundled packages, want 17", len(pkgs))
	}
}

// TestArtifactDigestsAreTheHarnessLockfiles: every npm artifact of a
// bundled package is pinned at the very integrity the harness lockfiles
// under harnesses/ record for the same name@version, so a package cannot
// drift from what Fabric tests. After changing a pin there, run
// `go run ./adapters/bundled/internal/pkggen`.
func TestArtifactDigestsAreTheHarnessLockfiles(t *testing.T) {
	integrity := map[string][]string{} // name@version -> integrities
	err := filepath.WalkDir(filepath.Join(repoRoot, "harnesses"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if d.Name() != "package-lock.json" {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		recorded, err := pkgdesc.LockfileIntegrities(raw)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for k, v := range recorded {
			integrity[k] = append(integrity[k], v...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := bundled.Packages()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for id, fsys := range pkgs {
		p, err := pkgdesc.LoadFS(fsys)
		if err != nil {
			t.Fatal(err)
		}
		for plat, arts := range p.Descriptor.Artifacts {
			for _, a := range arts {
				key := a.Name + "@" + a.Version
				got := pkgdesc.Integrity(a)
				want := integrity[key]
				if len(want) == 0 {
					t.Errorf("%s %s: %s is in no harnesses/**/package-lock.json", id, plat, key)
					continue
				}
				if !slices.Contains(want, got) {
					t.Errorf("%s %s: %s has digest %s, the harness lockfiles record %v", id, plat, key, got, want)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no artifact was checked")
	}
}

// BenchmarkLoadFS: loading (strict read, schema, lint, checks, digest) of
// the largest bundled package, the one with the biggest lockfile.
func BenchmarkLoadFS(b *testing.B) {
	pkgs, err := bundled.Packages()
	if err != nil {
		b.Fatal(err)
	}
	fsys := pkgs["nvidia.fabric.openclaw"]
	if _, err := pkgdesc.LoadFS(fsys); err != nil { // compiles the schema once
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := pkgdesc.LoadFS(fsys); err != nil {
			b.Fatal(err)
		}
	}
}
