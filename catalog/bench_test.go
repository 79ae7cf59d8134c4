package catalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/catalog"
	"github.com/fabric-runtime/fabric/internal/receipt"
	"github.com/fabric-runtime/fabric/internal/supportcatalog"
)

// BenchmarkBuiltInCatalogVerify is what a binary does the first time it
// selects a package: load the catalog built into it and verify the trust
// root, the chain, the newest signature and every entry's receipt under
// the qualification rules (receipt.CatalogVerifier), as pkgselect does.
// Its per-entry figure scales the budget of a 50-entry catalog (50 ms).
func BenchmarkBuiltInCatalogVerify(b *testing.B) {
	opts := supportcatalog.Options{Now: time.Now(), TrustSHA256: catalog.TrustSHA256, Receipts: receipt.CatalogVerifier()}
	var entries int
	b.ReportAllocs()
	for b.Loop() {
		c, err := supportcatalog.Load(context.Background(), catalog.FS(), "catalog", opts)
		if err != nil {
			b.Fatal(err)
		}
		entries = len(c.Latest().Doc.Entries)
	}
	b.ReportMetric(float64(entries), "entries")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(entries)/1e3, "µs/entry")
}
