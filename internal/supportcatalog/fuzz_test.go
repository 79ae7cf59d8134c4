package supportcatalog

import (
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

func FuzzParseTrust(f *testing.F) {
	fx := newFixture(f)
	f.Add(marshal(f, fx.trustDoc(1, nil)))
	f.Add([]byte(`{"_type":"fabric.trust/v1alpha1","version":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ParseTrust("trust.json", data)
		if err != nil {
			if Code(err) != CodeTrustInvalid {
				t.Fatalf("error without trust_invalid: %v", err)
			}
			return
		}
		for _, r := range Roles() {
			if len(tr.Keys(r)) < tr.Role(r).Threshold {
				t.Fatalf("role %s: %d keys, threshold %d", r, len(tr.Keys(r)), tr.Role(r).Threshold)
			}
		}
	})
}

func FuzzParseVersion(f *testing.F) {

	fx := newFixture(f)
	d := fx.next()
	d.Entries = append(d.Entries, fx.entry("fabric.pi", "1", contract.StateCandidate))
	f.Add(marshal(f, d))
	d.Serial = 2
	d.Previous = &contract.DigestSet{SHA256: hexOf('a')}
	d.Entries[0].State = contract.StateRevoked
	d.Entries[0].Revocation = &contract.CatalogRevocation{Reason: "security", Running: "stop", Evidence: []contract.DigestSet{{SHA256: hexOf('b')}}}
	f.Add(marshal(f, d))
	f.Add([]byte(`{"_type":"fabric.catalog/v1alpha1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseVersion("versions/000001.json", data)
		if err != nil {
			if Code(err) != CodeCatalogUntrusted {
				t.Fatalf("error without catalog_untrusted: %v", err)
			}
			return
		}
		// A valid version passes the transition check from itself.
		if err := CheckTransition(v, v); err != nil && Code(err) != CodeCatalogUntrusted {
			t.Fatal(err)
		}
		RevocationsOnly(v, v)
	})
}

func FuzzParseSignatureFile(f *testing.F) {
	f.Add([]byte(`{"payloadType":"application/vnd.fabric.catalog.v1+json","signatures":[{"keyid":"x","sig":"AA=="}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := ParseSignatureFile(data)
		if err != nil {
			return
		}
		sf.verify(contract.CatalogPayloadType, data, nil)
	})
}
