package qualify

import (
	"context"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/attest"
	"github.com/fabric-runtime/fabric/internal/receipt"
	"github.com/fabric-runtime/fabric/internal/supportcatalog"
)

// goldenEntry is the catalog entry the golden statement qualifies.
func goldenEntry() *contract.CatalogEntry {
	p := goldenPackage()
	e := &contract.CatalogEntry{
		Entry:         p.ID + "@" + p.Version,
		Package:       contract.CatalogPackage{ID: p.ID, Version: p.Version, Publisher: "fabric", Contract: p.Contract},
		PackageDigest: contract.DigestSet{SHA256: p.SHA256},
		Descriptor:    contract.DigestSet{SHA256: p.Descriptor.SHA256},
		Artifacts:     map[string][]contract.CatalogArtifact{},
		Receipts:      map[string]contract.CatalogReceipt{"linux-x86_64": {ObservedAll: true}},
	}
	for _, a := range p.Artifacts {
		e.Artifacts["linux-x86_64"] = append(e.Artifacts["linux-x86_64"], contract.CatalogArtifact{Name: receipt.ArtifactSubject(a), Digest: a.Digest})
	}
	return e
}

func TestCatalogVerifier(t *testing.T) {
	q1, q2, other := key(t, "qualifier"), key(t, "qualifier"), key(t, "publisher")
	good := signed(t, goldenStatement(), q1)
	rcpt := func(env []byte, edit func(*supportcatalog.Receipt)) supportcatalog.Receipt {
		r := supportcatalog.Receipt{Entry: goldenEntry(), Platform: "linux-x86_64", Path: "receipts/x", Envelope: env,
			Qualifiers: []attest.PublicKey{q1.Public(), q2.Public()}, Threshold: 1}
		if edit != nil {
			edit(&r)
		}
		return r
	}
	for _, tc := range []struct {
		name string
		r    supportcatalog.Receipt
		code string
		in   string
	}{
		{"valid", rcpt(good, nil), "", ""},
		{"below the qualifier threshold", rcpt(good, func(r *supportcatalog.Receipt) { r.Threshold = 2 }), receipt.CodeReceiptUnverifiable, "threshold is 2"},
		{"signed by a key outside the role", rcpt(signed(t, goldenStatement(), other), nil), receipt.CodeReceiptUnverifiable, "no valid signature"},
		{"another package digest", rcpt(good, func(r *supportcatalog.Receipt) { r.Entry.PackageDigest.SHA256 = strings.Repeat("0", 64) }), receipt.CodePackageUnqualified, "package:"},
		{"another descriptor", rcpt(good, func(r *supportcatalog.Receipt) { r.Entry.Descriptor.SHA256 = strings.Repeat("0", 64) }), receipt.CodePackageUnqualified, "adapter-descriptor"},
		{"another artifact digest", rcpt(good, func(r *supportcatalog.Receipt) {
			r.Entry.Artifacts["linux-x86_64"][0].Digest = map[string]string{"sha512": "sha512-x"}
		}), receipt.CodePackageUnqualified, "with the entry's digest"},
		{"another platform", rcpt(good, func(r *supportcatalog.Receipt) { r.Platform = "darwin-aarch64" }), receipt.CodePackageUnqualified, "platform"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := receipt.CatalogVerifier().VerifyReceipt(context.Background(), tc.r)
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if code(err) != tc.code || !strings.Contains(err.Error(), tc.in) {
				t.Fatalf("err = %v, want %s naming %q", err, tc.code, tc.in)
			}
		})
	}
}

// BenchmarkCatalogVerifier50 is the receipt part of verifying a catalog
// of 50 entries: 50 receipts through the verifier the catalog uses.
func BenchmarkCatalogVerifier50(b *testing.B) {
	k := key(b, "qualifier")
	r := supportcatalog.Receipt{Entry: goldenEntry(), Platform: "linux-x86_64", Path: "receipts/x",
		Envelope: signed(b, goldenStatement(), k), Qualifiers: []attest.PublicKey{k.Public()}, Threshold: 1}
	v := receipt.CatalogVerifier()
	b.ReportAllocs()
	for b.Loop() {
		for range 50 {
			if err := v.VerifyReceipt(context.Background(), r); err != nil {
				b.Fatal(err)
			}
		}
	}
}
