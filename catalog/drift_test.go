package catalog_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/catalog"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
	"github.com/fabric-runtime/fabric/internal/receipt"
	"github.com/fabric-runtime/fabric/internal/supportcatalog"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// Every bundled package is in the built-in catalog as it is now: its
// signed default is its current id@version, supported, pinning the
// package's current digest, with a receipt that verifies; the packages
// that cannot be qualified on their own are listed, with why, in
// unlisted.json. A change to a package (a profile, a descriptor, a pin)
// fails here until scripts/catalog-requalify lists it again.
func TestBundledPackagesAreCatalogued(t *testing.T) {
	c, err := supportcatalog.Load(context.Background(), catalog.FS(), "catalog", supportcatalog.Options{
		Now: time.Now(), TrustSHA256: catalog.TrustSHA256, Receipts: receipt.CatalogVerifier(),
	})
	if err != nil {
		t.Fatal(err)
	}
	latest := c.Latest()
	var unlisted map[string]string
	data, err := os.ReadFile("unlisted.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &unlisted); err != nil {
		t.Fatalf("unlisted.json: %v", err)
	}
	pkgs, err := bundled.Packages()
	if err != nil {
		t.Fatal(err)
	}
	for id := range unlisted {
		if _, ok := pkgs[id]; !ok {
			t.Errorf("unlisted.json names %s, which is no bundled package", id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(pkgs)) {
		p, err := pkgdesc.LoadFS(pkgs[id])
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		fix := "run scripts/catalog-requalify " + id
		if why, ok := unlisted[id]; ok {
			if d, listed := latest.Doc.Defaults[id]; listed {
				t.Errorf("%s is in unlisted.json (%s) but the catalog's default for it is %s: remove it from unlisted.json", id, why, d)
			}
			continue
		}
		want := p.ID() + "@" + p.Version()
		name, ok := latest.Doc.Defaults[id]
		switch {
		case !ok:
			t.Errorf("bundled package %s has no signed default in the built-in catalog (serial %d): %s (or say in catalog/unlisted.json why it cannot be qualified)", id, latest.Doc.Serial, fix)
			continue
		case name != want:
			t.Errorf("bundled package %s is %s, but the catalog's default is %s: %s", id, want, name, fix)
			continue
		}
		e := latest.Entry(name)
		digest := strings.TrimPrefix(p.Digest(), treemanifest.Prefix)
		if e.PackageDigest.SHA256 != digest {
			t.Errorf("bundled package %s has digest sha256:%s, but catalog entry %s pins sha256:%s: the package changed since it was qualified; %s", id, digest, name, e.PackageDigest.SHA256, fix)
		}
		if e.State != contract.StateSupported {
			t.Errorf("catalog entry %s is %s, not supported: %s", name, e.State, fix)
		}
		if len(e.Receipts) == 0 {
			t.Errorf("catalog entry %s cites no receipt: %s", name, fix)
		}
		for _, r := range c.Receipts {
			if r.Entry == name && !r.Verified {
				t.Errorf("the %s receipt of catalog entry %s does not verify (%s): %s", r.Platform, name, r.Problem, fix)
			}
		}
	}
}
