package supportcatalog

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/attest"
)

// now is the fixed time the fixtures are checked at.
var now = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func hexOf(c byte) string {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

// fixture is a catalog directory with keys made in the test.
type fixture struct {
	t    testing.TB
	dir  string
	keys map[Role][]*attest.PrivateKey
	// extra is a key in no role.
	extra *attest.PrivateKey
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), keys: map[Role][]*attest.PrivateKey{}}
	for _, r := range Roles() {
		f.keys[r] = []*attest.PrivateKey{f.key(string(r)), f.key(string(r))}
	}
	f.extra = f.key("none")
	for _, sub := range []string{"versions", "receipts"} {
		if err := os.MkdirAll(filepath.Join(f.dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.writeTrust(f.trustDoc(1, nil), f.keys[RoleRoot][0])
	return f
}

func (f *fixture) key(role string) *attest.PrivateKey {
	k, err := attest.GenerateKey(role)
	if err != nil {
		f.t.Fatal(err)
	}
	return k
}

// trustDoc is a trust root with threshold 1 for every role (edit
// changes it).
func (f *fixture) trustDoc(version int, edit func(*contract.Trust)) contract.Trust {
	doc := contract.Trust{Type: contract.TrustV1Alpha1, Version: version, Expires: now.AddDate(1, 0, 0), Keys: map[string]contract.TrustKey{}}
	roles := map[Role]*contract.TrustRole{RoleRoot: &doc.Roles.Root, RoleCatalog: &doc.Roles.Catalog, RoleRevoker: &doc.Roles.Revoker, RoleQualifier: &doc.Roles.Qualifier, RolePublisher: &doc.Roles.Publisher}
	for r, ks := range f.keys {
		for _, k := range ks {
			doc.Keys[k.ID] = contract.TrustKey{Alg: "ed25519", Public: k.Public().Key}
			roles[r].KeyIDs = append(roles[r].KeyIDs, k.ID)
		}
		roles[r].Threshold = 1
	}
	if edit != nil {
		edit(&doc)
	}
	return doc
}

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func signBytes(t testing.TB, payloadType string, data []byte, keys ...*attest.PrivateKey) []byte {
	t.Helper()
	var sf *SignatureFile
	for _, k := range keys {
		var err error
		if sf, err = Sign(sf, payloadType, data, k); err != nil {
			t.Fatal(err)
		}
	}
	if sf == nil {
		sf = &SignatureFile{PayloadType: payloadType}
	}
	b, err := sf.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fixture) write(rel string, data []byte) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, rel), data, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) read(rel string) []byte {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, rel))
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

func (f *fixture) writeTrust(doc contract.Trust, signers ...*attest.PrivateKey) {
	data := marshal(f.t, doc)
	f.write(TrustFileName, data)
	f.write(TrustSigFileName, signBytes(f.t, contract.TrustPayloadType, data, signers...))
}

// version returns the next version's document: the latest's with serial
// and previous advanced (an empty catalog when there is none).
func (f *fixture) next() contract.SupportCatalog {
	n := 1
	for {
		if _, err := os.Stat(filepath.Join(f.dir, VersionPath(n))); err != nil {
			break
		}
		n++
	}
	if n == 1 {
		return contract.SupportCatalog{Type: contract.CatalogV1Alpha1, Serial: 1, Issued: now.AddDate(0, 0, -1), Expires: now.AddDate(0, 3, 0), Defaults: map[string]string{}, Entries: []contract.CatalogEntry{}}
	}
	prev := f.read(VersionPath(n - 1))
	var doc contract.SupportCatalog
	if err := json.Unmarshal(prev, &doc); err != nil {
		f.t.Fatal(err)
	}
	doc.Serial = n
	doc.Previous = &contract.DigestSet{SHA256: sha256Hex(prev)}
	return doc
}

// add writes doc as its serial's version, signed by signers.
func (f *fixture) add(doc contract.SupportCatalog, signers ...*attest.PrivateKey) {
	data := marshal(f.t, doc)
	f.write(VersionPath(doc.Serial), data)
	f.write(SigPath(doc.Serial), signBytes(f.t, contract.CatalogPayloadType, data, signers...))
}

func (f *fixture) catalogKey() *attest.PrivateKey { return f.keys[RoleCatalog][0] }

// receipt writes a receipt envelope signed by k and returns its digest.
func (f *fixture) receipt(k *attest.PrivateKey, entry, platform string) string {
	env, err := attest.Sign("application/vnd.in-toto+json", []byte(`{"entry":"`+entry+`","platform":"`+platform+`"}`), k)
	if err != nil {
		f.t.Fatal(err)
	}
	data, err := env.Marshal()
	if err != nil {
		f.t.Fatal(err)
	}
	sum := sha256Hex(data)
	f.write(ReceiptPath(sum), data)
	return sum
}

// entry is a catalog entry of id@version for linux-x86_64 in state,
// with a qualifier-signed receipt that observed everything.
func (f *fixture) entry(id, version, state string) contract.CatalogEntry {
	name := id + "@" + version
	e := contract.CatalogEntry{
		Entry:         name,
		Package:       contract.CatalogPackage{ID: id, Version: version, Publisher: "fabric-runtime", Contract: contract.PackageV1Alpha1},
		PackageDigest: contract.DigestSet{SHA256: sha256Hex([]byte(name))},
		Descriptor:    contract.DigestSet{SHA256: hexOf('d')},
		Runtime:       contract.PackageRuntime{Name: "scripted", Version: "1.0.0"},
		Artifacts:     map[string][]contract.CatalogArtifact{"linux-x86_64": {{Name: "scripted@1.0.0", Digest: map[string]string{"sha512": "abc"}}}},
		Requires:      &contract.PackageRequires{HostProtocol: "fabric.host/v2"},
		Receipts:      map[string]contract.CatalogReceipt{"linux-x86_64": {SHA256: f.receipt(f.keys[RoleQualifier][0], name, "linux-x86_64"), ObservedAll: true}},
		State:         state,
		Since:         "2026-11-01",
	}
	if state != contract.StateCandidate {
		e.RequalifyBy = "2027-06-01"
	}
	return e
}

// qualifierVerifier verifies a receipt envelope's DSSE signature by the
// qualifier role (what internal/qualify adds to it is its own).
var qualifierVerifier = ReceiptVerifierFunc(func(_ context.Context, r Receipt) error {
	env, err := attest.ParseEnvelope(r.Envelope)
	if err != nil {
		return err
	}
	v, err := attest.Verify(env, "application/vnd.in-toto+json", r.Qualifiers)
	if err != nil {
		return err
	}
	ids := make([]string, len(r.Qualifiers))
	for i, k := range r.Qualifiers {
		ids[i] = k.ID
	}
	if v.Count(ids) < r.Threshold {
		return errors.New("below the qualifier threshold")
	}
	return nil
})

func (f *fixture) load(opts Options) (*Catalog, error) {
	if opts.Now.IsZero() {
		opts.Now = now
	}
	if opts.Trust == nil && opts.TrustSHA256 == "" {
		opts.TrustSHA256 = sha256Hex(f.read(TrustFileName))
	}
	if opts.Receipts == nil {
		opts.Receipts = qualifierVerifier
	}
	return Load(context.Background(), os.DirFS(f.dir), f.dir, opts)
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	if got := Code(err); got != code {
		t.Fatalf("code %q, want %s: %v", got, code, err)
	}
}

// expect checks err: nil when code is "", else that code with want in
// its message.
func expect(t *testing.T, err error, code, want string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	wantCode(t, err, code)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}
