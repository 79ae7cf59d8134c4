package supportcatalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/attest"
)

// Role names a trust role.
type Role string

// The trust roles.
const (
	RoleRoot      Role = "root"
	RoleCatalog   Role = "catalog"
	RoleRevoker   Role = "revoker"
	RoleQualifier Role = "qualifier"
	RolePublisher Role = "publisher"
)

// Roles lists every role, in a fixed order.
func Roles() []Role {
	return []Role{RoleRoot, RoleCatalog, RoleRevoker, RoleQualifier, RolePublisher}
}

// Trust is a parsed, structurally valid trust root.
type Trust struct {
	Doc contract.Trust
	// Path is the file it was read from (for messages).
	Path string
	// SHA256 is the hex sha256 of the file's exact bytes.
	SHA256 string
	keys   map[string]attest.PublicKey
}

// Role returns the role's keys and threshold.
func (t *Trust) Role(r Role) contract.TrustRole {
	switch r {
	case RoleRoot:
		return t.Doc.Roles.Root
	case RoleCatalog:
		return t.Doc.Roles.Catalog
	case RoleRevoker:
		return t.Doc.Roles.Revoker
	case RoleQualifier:
		return t.Doc.Roles.Qualifier
	case RolePublisher:
		return t.Doc.Roles.Publisher
	}
	return contract.TrustRole{}
}

// Keys returns the public keys of role r.
func (t *Trust) Keys(r Role) []attest.PublicKey {
	var out []attest.PublicKey
	for _, id := range t.Role(r).KeyIDs {
		if k, ok := t.keys[id]; ok && !slices.ContainsFunc(out, func(o attest.PublicKey) bool { return o.ID == id }) {
			out = append(out, k)
		}
	}
	return out
}

// Met reports whether the distinct signers in v meet role r's threshold.
func (t *Trust) Met(r Role, v attest.Verified) bool {
	role := t.Role(r)
	return role.Threshold >= 1 && v.Count(role.KeyIDs) >= role.Threshold
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}

// ParseTrust reads a trust root strictly and checks its structure: the
// type, every key (ed25519, 32 bytes, id = sha256 of the key), every role
// (known keys, a threshold it can meet) and role separation (no publisher
// key also holds catalog, revoker or qualifier, and no qualifier key also
// holds catalog). It does not check expiry or signatures (VerifyTrust).
// Errors are trust_invalid and name path and the field.
func ParseTrust(path string, data []byte) (*Trust, error) {
	var doc contract.Trust
	if err := decodeStrict(data, &doc); err != nil {
		return nil, trustErr(path, "not a trust root: %v", err)
	}
	if doc.Type != contract.TrustV1Alpha1 {
		return nil, trustErr(path, "_type %q, want %q", doc.Type, contract.TrustV1Alpha1)
	}
	if doc.Version < 1 {
		return nil, trustErr(path, "version: must be at least 1")
	}
	if doc.Expires.IsZero() {
		return nil, trustErr(path, "expires: missing")
	}
	t := &Trust{Doc: doc, Path: path, SHA256: sha256Hex(data), keys: map[string]attest.PublicKey{}}
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range doc.Keys {
			if !yield(id) {
				return
			}
		}
	}) {
		k := doc.Keys[id]
		if k.Alg != "ed25519" {
			return nil, trustErr(path, "keys.%s.alg: %q, only ed25519 is supported", id, k.Alg)
		}
		pub, err := attest.NewPublicKey(k.Public)
		if err != nil {
			return nil, trustErr(path, "keys.%s.public: %v", id, err)
		}
		if pub.ID != id {
			return nil, trustErr(path, "keys.%s: the key id is not the sha256 of its public key (%s)", id, pub.ID)
		}
		t.keys[id] = pub
	}
	for _, r := range Roles() {
		role := t.Role(r)
		distinct := slices.Compact(slices.Sorted(slices.Values(role.KeyIDs)))
		if len(distinct) == 0 {
			return nil, trustErr(path, "roles.%s.keyids: no key", r)
		}
		for _, id := range distinct {
			if _, ok := t.keys[id]; !ok {
				return nil, trustErr(path, "roles.%s.keyids: %s is not in keys", r, id)
			}
		}
		if role.Threshold < 1 || role.Threshold > len(distinct) {
			return nil, trustErr(path, "roles.%s.threshold: %d, must be between 1 and its %d distinct keys", r, role.Threshold, len(distinct))
		}
	}
	overlap := func(a, b Role) error {
		for _, id := range t.Role(a).KeyIDs {
			if slices.Contains(t.Role(b).KeyIDs, id) {
				return trustErr(path, "roles: key %s holds both %s and %s; a %s key must never hold %s", id, a, b, a, b)
			}
		}
		return nil
	}
	for _, pair := range [][2]Role{{RolePublisher, RoleCatalog}, {RolePublisher, RoleRevoker}, {RolePublisher, RoleQualifier}, {RoleQualifier, RoleCatalog}} {
		if err := overlap(pair[0], pair[1]); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// VerifyTrust parses a trust root and its detached signature and checks
// that it has not expired and that its own root role's threshold signed
// its exact bytes.
func VerifyTrust(path string, data, sig []byte, now time.Time) (*Trust, error) {
	t, err := ParseTrust(path, data)
	if err != nil {
		return nil, err
	}
	if !now.Before(t.Doc.Expires) {
		return nil, trustErr(path, "expired at %s", t.Doc.Expires.Format(time.RFC3339))
	}
	if err := t.signedByRoot(t, data, sig); err != nil {
		return nil, err
	}
	return t, nil
}

// signedByRoot checks that signer's root threshold signed data (a trust
// root's bytes) with sig.
func (t *Trust) signedByRoot(signer *Trust, data, sig []byte) error {
	sf, err := ParseSignatureFile(sig)
	if err != nil {
		return trustErr(t.Path, "signature file: %v", err)
	}
	v, _ := sf.verify(contract.TrustPayloadType, data, signer.Keys(RoleRoot))
	if !signer.Met(RoleRoot, v) {
		return trustErr(t.Path, "%d of version %d's root keys signed, its threshold is %d", v.Count(signer.Role(RoleRoot).KeyIDs), signer.Doc.Version, signer.Role(RoleRoot).Threshold)
	}
	return nil
}

// VerifyRotation checks that next (a new trust root's bytes, with its
// signature) may replace old: its version is old's plus one, and both
// old's and its own root thresholds signed it.
func VerifyRotation(old *Trust, path string, next, sig []byte, now time.Time) (*Trust, error) {
	t, err := VerifyTrust(path, next, sig, now)
	if err != nil {
		return nil, err
	}
	if t.Doc.Version != old.Doc.Version+1 {
		return nil, trustErr(path, "version %d cannot follow version %d (must be %d)", t.Doc.Version, old.Doc.Version, old.Doc.Version+1)
	}
	if err := t.signedByRoot(old, next, sig); err != nil {
		return nil, fmt.Errorf("rotation from version %d: %w", old.Doc.Version, err)
	}
	return t, nil
}
