package supportcatalog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

// copyDir copies the fixture's directory: the "merge base".
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

func TestAppendOnly(t *testing.T) {
	cases := []struct {
		name string
		edit func(f *fixture)
		code string
		want string
	}{
		{"a new version", func(f *fixture) { f.add(f.next(), f.catalogKey()) }, "", ""},
		{"an old version edited", func(f *fixture) { f.write(VersionPath(2), append(f.read(VersionPath(2)), ' ')) }, CodeCatalogUntrusted, "000002.json: append-only"},
		{"an old signature re-signed", func(f *fixture) {
			f.write(SigPath(1), signBytes(t, contract.CatalogPayloadType, f.read(VersionPath(1)), f.keys[RoleCatalog][1]))
		}, CodeCatalogUntrusted, "000001.sig.json: append-only"},
		{"a receipt edited", func(f *fixture) {
			ents, _ := os.ReadDir(filepath.Join(f.dir, "receipts"))
			rel := "receipts/" + ents[0].Name()
			f.write(rel, append(f.read(rel), '\n'))
		}, CodeCatalogUntrusted, "receipts/sha256-"},
		{"a version deleted", func(f *fixture) { os.Remove(filepath.Join(f.dir, VersionPath(3))) }, CodeCatalogUntrusted, "the file of the base is gone"},
		{"trust changed without rotation", func(f *fixture) {
			f.writeTrust(f.trustDoc(1, func(d *contract.Trust) { d.Expires = d.Expires.AddDate(1, 0, 0) }), f.keys[RoleRoot][0])
		}, CodeTrustInvalid, "cannot follow version 1"},
		{"trust rotated by the new root only", func(f *fixture) {
			newRoot := f.key("root")
			f.keys[RoleRoot] = append(f.keys[RoleRoot][:0:0], newRoot)
			f.writeTrust(f.trustDoc(2, nil), newRoot)
		}, CodeTrustInvalid, "rotation from version 1"},
		{"trust rotated by both roots", func(f *fixture) {
			oldRoot, newRoot := f.keys[RoleRoot][0], f.key("root")
			f.keys[RoleRoot] = append(f.keys[RoleRoot][:0:0], newRoot)
			f.writeTrust(f.trustDoc(2, nil), newRoot, oldRoot)
		}, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := chain(t)
			base := copyDir(t, f.dir)
			tc.edit(f)
			last, err := CheckAppendOnly(os.DirFS(base), base, os.DirFS(f.dir), f.dir, now)
			expect(t, err, tc.code, tc.want)
			if err == nil && last != 3 {
				t.Errorf("base latest %d, want 3", last)
			}
		})
	}
}
