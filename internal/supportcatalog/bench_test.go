package supportcatalog

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

// fifty is a catalog of 50 entries, each with a qualifier-signed
// receipt, reached in three versions.
func fifty(b *testing.B) *fixture {
	f := newFixture(b)
	f.add(f.next(), f.catalogKey())
	v := f.next()
	for i := range 50 {
		v.Entries = append(v.Entries, f.entry("fabric.pkg"+strconv.Itoa(i), "1", contract.StateCandidate))
	}
	f.add(v, f.catalogKey())
	v = f.next()
	for i := range v.Entries {
		v.Entries[i].State, v.Entries[i].RequalifyBy = contract.StateSupported, "2027-06-01"
		v.Defaults[v.Entries[i].Package.ID] = v.Entries[i].Entry
	}
	f.add(v, f.catalogKey())
	return f
}

// BenchmarkLoad50 is the verify of a 50-entry catalog with receipts:
// trust, chain, transitions, the newest signature, 50 receipt files and
// their DSSE signatures (target: <= 50 ms).
func BenchmarkLoad50(b *testing.B) {
	f := fifty(b)
	fsys := os.DirFS(f.dir)
	opts := Options{Now: now, TrustSHA256: sha256Hex(f.read(TrustFileName)), Receipts: qualifierVerifier}
	for b.Loop() {
		if _, err := Load(context.Background(), fsys, f.dir, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSelect is the selection a plan adds (target: <= 2 ms).
func BenchmarkSelect(b *testing.B) {
	f := fifty(b)
	c, err := f.load(Options{})
	if err != nil {
		b.Fatal(err)
	}
	e := c.Latest().Doc.Entries[49]
	req := Request{Package: e.Package.ID, Digest: e.PackageDigest.SHA256, Platform: "linux-x86_64", Now: now}
	for b.Loop() {
		if _, err := Select(c, req); err != nil {
			b.Fatal(err)
		}
	}
}
