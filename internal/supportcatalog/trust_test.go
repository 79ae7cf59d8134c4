package supportcatalog

import (
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

func TestTrust(t *testing.T) {
	f := newFixture(t)
	pub := f.keys[RolePublisher][0].ID
	qual := f.keys[RoleQualifier][0].ID
	cases := []struct {
		name string
		edit func(*contract.Trust)
		when func(*fixture) // after writing
		want string         // "" = valid; else a part of the message
	}{
		{"valid", nil, nil, ""},
		{"expired", func(d *contract.Trust) { d.Expires = now.AddDate(0, 0, -1) }, nil, "expired"},
		{"publisher also catalog", func(d *contract.Trust) { d.Roles.Catalog.KeyIDs = append(d.Roles.Catalog.KeyIDs, pub) }, nil, "both publisher and catalog"},
		{"publisher also revoker", func(d *contract.Trust) { d.Roles.Revoker.KeyIDs = append(d.Roles.Revoker.KeyIDs, pub) }, nil, "both publisher and revoker"},
		{"publisher also qualifier", func(d *contract.Trust) { d.Roles.Qualifier.KeyIDs = append(d.Roles.Qualifier.KeyIDs, pub) }, nil, "both publisher and qualifier"},
		{"qualifier also catalog", func(d *contract.Trust) { d.Roles.Catalog.KeyIDs = append(d.Roles.Catalog.KeyIDs, qual) }, nil, "both qualifier and catalog"},
		{"threshold above keys", func(d *contract.Trust) { d.Roles.Root.Threshold = 3 }, nil, "roles.root.threshold"},
		{"threshold zero", func(d *contract.Trust) { d.Roles.Revoker.Threshold = 0 }, nil, "roles.revoker.threshold"},
		{"unknown key in role", func(d *contract.Trust) { d.Roles.Catalog.KeyIDs = append(d.Roles.Catalog.KeyIDs, hexOf('a')) }, nil, "is not in keys"},
		{"wrong key id", func(d *contract.Trust) {
			k := d.Keys[pub]
			delete(d.Keys, pub)
			d.Keys[hexOf('b')] = k
		}, nil, "keys."},
		{"wrong type", func(d *contract.Trust) { d.Type = "fabric.trust/v9" }, nil, "_type"},
		{"root threshold unmet", func(d *contract.Trust) { d.Roles.Root.Threshold = 2 }, nil, "1 of version 1's root keys signed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := f.trustDoc(1, tc.edit)
			data := marshal(t, doc)
			sig := signBytes(t, contract.TrustPayloadType, data, f.keys[RoleRoot][0])
			tr, err := VerifyTrust("trust.json", data, sig, now)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tr.SHA256 != sha256Hex(data) || len(tr.Keys(RoleCatalog)) != 2 {
					t.Errorf("trust = %s, %d catalog keys", tr.SHA256, len(tr.Keys(RoleCatalog)))
				}
				return
			}
			wantCode(t, err, CodeTrustInvalid)
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "trust.json") {
				t.Errorf("error %q does not say %q and name the file", err, tc.want)
			}
		})
	}

	// Signed by a key that is not root.
	data := marshal(t, f.trustDoc(1, nil))
	_, err := VerifyTrust("trust.json", data, signBytes(t, contract.TrustPayloadType, data, f.catalogKey()), now)
	wantCode(t, err, CodeTrustInvalid)
	// Not JSON, an unknown field.
	for _, bad := range []string{`{`, `{"_type":"fabric.trust/v1alpha1","x":1}`} {
		if _, err := ParseTrust("t.json", []byte(bad)); Code(err) != CodeTrustInvalid {
			t.Errorf("ParseTrust(%s) = %v", bad, err)
		}
	}
}

func TestRotation(t *testing.T) {
	f := newFixture(t)
	oldRoot := f.keys[RoleRoot][0]
	oldDoc := f.trustDoc(1, nil)
	oldData := marshal(t, oldDoc)
	old, err := VerifyTrust("trust.json", oldData, signBytes(t, contract.TrustPayloadType, oldData, oldRoot), now)
	if err != nil {
		t.Fatal(err)
	}
	newRoot := f.key("root")
	f.keys[RoleRoot] = append(f.keys[RoleRoot][1:], newRoot) // drop the old first root key
	nextDoc := f.trustDoc(2, nil)
	next := marshal(t, nextDoc)

	if _, err := VerifyRotation(old, "trust.json", next, signBytes(t, contract.TrustPayloadType, next, newRoot), now); Code(err) != CodeTrustInvalid || !strings.Contains(err.Error(), "rotation from version 1") {
		t.Errorf("rotation signed only by the new root: %v", err)
	}
	if _, err := VerifyRotation(old, "trust.json", next, signBytes(t, contract.TrustPayloadType, next, oldRoot), now); Code(err) != CodeTrustInvalid {
		t.Errorf("rotation signed only by the old root: %v", err)
	}
	if _, err := VerifyRotation(old, "trust.json", next, signBytes(t, contract.TrustPayloadType, next, oldRoot, newRoot), now); err != nil {
		t.Errorf("rotation signed by both: %v", err)
	}
	skip := marshal(t, f.trustDoc(3, nil))
	if _, err := VerifyRotation(old, "trust.json", skip, signBytes(t, contract.TrustPayloadType, skip, oldRoot, newRoot), now); Code(err) != CodeTrustInvalid || !strings.Contains(err.Error(), "must be 2") {
		t.Errorf("rotation skipping a version: %v", err)
	}
}
