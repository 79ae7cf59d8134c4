package qualify

import (
	"testing"

	"github.com/fabric-runtime/fabric/internal/attest"
	"github.com/fabric-runtime/fabric/internal/receipt"
)

// BenchmarkVerifyReceipt is one receipt's full check (parse, ed25519
// verify, strict statement decode, subjects and rule): a catalog of 50
// entries verifies 50 of them.
func BenchmarkVerifyReceipt(b *testing.B) {
	k := key(b, "qualifier")
	data := signed(b, goldenStatement(), k)
	keys := []attest.PublicKey{k.Public()}
	want := goldenExpectation()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := receipt.VerifyReceipt(data, keys, want); err != nil {
			b.Fatal(err)
		}
	}
}
