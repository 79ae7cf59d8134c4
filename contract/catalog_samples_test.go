package contract_test

import (
	"strings"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

func sampleSupportCatalogs() []any {
	return []any{contract.SupportCatalog{
		Type: contract.CatalogV1Alpha1, Serial: 2, Previous: &contract.DigestSet{SHA256: strings.Repeat("a", 64)},
		Issued: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Expires: time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC),
		Defaults: map[string]string{"fabric.scripted": "fabric.scripted@1"},
		Entries: []contract.CatalogEntry{{
			Entry: "fabric.scripted@1", Package: contract.CatalogPackage{ID: "fabric.scripted", Version: "1", Publisher: "fabric-runtime", Contract: contract.PackageV1Alpha1},
			PackageDigest: contract.DigestSet{SHA256: strings.Repeat("b", 64)}, Descriptor: contract.DigestSet{SHA256: strings.Repeat("c", 64)},
			Runtime:   contract.PackageRuntime{Name: "scripted", Version: "1.0.0"},
			Artifacts: map[string][]contract.CatalogArtifact{"linux-x86_64": {{Name: "scripted@1.0.0", Digest: map[string]string{"sha512": "x"}}}},
			Receipts:  map[string]contract.CatalogReceipt{"linux-x86_64": {SHA256: strings.Repeat("d", 64), ObservedAll: true}},
			State:     contract.StateRevoked, Since: "2026-12-01",
			Revocation: &contract.CatalogRevocation{Reason: "security", Running: contract.RunningDrain, Evidence: []contract.DigestSet{{SHA256: strings.Repeat("e", 64)}}},
		}},
	}}
}

func sampleTrusts() []any {
	role := contract.TrustRole{KeyIDs: []string{strings.Repeat("f", 64)}, Threshold: 1}
	return []any{contract.Trust{
		Type: contract.TrustV1Alpha1, Version: 1, Expires: time.Date(2027, 12, 1, 0, 0, 0, 0, time.UTC),
		Keys:  map[string]contract.TrustKey{strings.Repeat("f", 64): {Alg: "ed25519", Public: make([]byte, 32)}},
		Roles: contract.TrustRoles{Root: role, Catalog: role, Revoker: role, Qualifier: role, Publisher: role},
	}}
}
