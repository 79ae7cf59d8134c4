package qualify

import (
	"testing"

	"github.com/fabric-runtime/fabric/internal/attest"
	"github.com/fabric-runtime/fabric/internal/receipt"
)

// FuzzVerifyReceipt feeds arbitrary bytes to the receipt parser: it must
// never panic, and anything it accepts must be signed by the key and say
// the package qualified on the expected platform.
func FuzzVerifyReceipt(f *testing.F) {
	k := key(f, "qualifier")
	good := signed(f, goldenStatement(), k)
	f.Add(good)
	f.Add([]byte(`{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[{"sig":"AAAA"}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[`))
	keys := []attest.PublicKey{k.Public()}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := receipt.VerifyReceipt(data, keys, goldenExpectation())
		if err != nil {
			if code(err) == "" {
				t.Fatalf("an error without a code: %v", err)
			}
			return
		}
		if !st.Predicate.Verdict.Qualified || st.Predicate.Platform != "linux-x86_64" {
			t.Fatalf("accepted %+v", st.Predicate)
		}
		if _, err := receipt.ParseStatement(data); err == nil {
			t.Fatal("accepted a bare statement as a receipt")
		}
	})
}

// FuzzParseStatement: the strict statement reader never panics.
func FuzzParseStatement(f *testing.F) {
	f.Add([]byte(`{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"a","digest":{"sha256":"00"}}],"predicateType":"https://github.com/fabric-runtime/fabric/predicates/qualification/v1","predicate":{}}`))
	f.Add([]byte(`{"_type":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if st, err := receipt.ParseStatement(data); err == nil && len(st.Subject) == 0 {
			t.Fatal("accepted a statement without subjects")
		}
	})
}
