package supportcatalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/attest"
)

// chain makes versions 1 (empty), 2 (a candidate) and 3 (it supported).
func chain(t *testing.T) *fixture {
	f := newFixture(t)
	f.add(f.next(), f.catalogKey())
	v2 := f.next()
	v2.Entries = append(v2.Entries, f.entry("fabric.scripted", "1", contract.StateCandidate))
	f.add(v2, f.catalogKey())
	v3 := f.next()
	v3.Entries[0].State, v3.Entries[0].RequalifyBy = contract.StateSupported, "2027-06-01"
	v3.Defaults["fabric.scripted"] = "fabric.scripted@1"
	f.add(v3, f.catalogKey())
	return f
}

func TestLoadChain(t *testing.T) {
	f := chain(t)
	c, err := f.load(Options{SignaturesFrom: 1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Latest().Doc.Serial != 3 || len(c.Receipts) != 1 || !c.Receipts[0].Verified {
		t.Fatalf("latest %d, receipts %+v", c.Latest().Doc.Serial, c.Receipts)
	}

	cases := []struct {
		name   string
		break_ func(f *fixture)
		opts   Options
		code   string
		want   string
	}{
		{"serial gap", func(f *fixture) {
			d := f.next()
			d.Serial = 5
			data := marshal(t, d)
			f.write("versions/000005.json", data)
		}, Options{}, CodeCatalogUntrusted, "000004.json is missing"},
		{"missing N-1", func(f *fixture) { os.Remove(filepath.Join(f.dir, VersionPath(2))) }, Options{}, CodeCatalogUntrusted, "000002.json is missing"},
		{"wrong previous", func(f *fixture) {
			d := f.next()
			d.Previous.SHA256 = hexOf('0')
			f.add(d, f.catalogKey())
		}, Options{}, CodeCatalogUntrusted, "is not the sha256 of"},
		{"serial not its file", func(f *fixture) {
			d := f.next()
			d.Serial = 3
			data := marshal(t, d)
			f.write(VersionPath(4), data)
		}, Options{}, CodeCatalogUntrusted, "serial 3 in file 000004.json"},
		{"expired", func(f *fixture) {}, Options{Now: now.AddDate(0, 4, 0)}, CodeCatalogUntrusted, "expired"},
		{"unsigned", func(f *fixture) { os.Remove(filepath.Join(f.dir, SigPath(3))) }, Options{}, CodeCatalogUntrusted, "catalog sign 3"},
		{"unsigned, SignaturesFrom past the newest", func(f *fixture) { os.Remove(filepath.Join(f.dir, SigPath(3))) }, Options{SignaturesFrom: 9}, CodeCatalogUntrusted, "catalog sign 3"},
		{"signed by a key in no role", func(f *fixture) { f.add(f.next(), f.extra) }, Options{}, CodeCatalogUntrusted, "0 distinct catalog keys"},
		{"signed by a publisher key", func(f *fixture) { f.add(f.next(), f.keys[RolePublisher][0]) }, Options{}, CodeCatalogUntrusted, "publisher can never sign"},
		{"signed by a qualifier key", func(f *fixture) { f.add(f.next(), f.keys[RoleQualifier][0]) }, Options{}, CodeCatalogUntrusted, "0 distinct catalog keys"},
		{"old version's signature broken, checked from 1", func(f *fixture) {
			f.write(SigPath(1), signBytes(t, contract.CatalogPayloadType, []byte("x"), f.catalogKey()))
		}, Options{SignaturesFrom: 1}, CodeCatalogUntrusted, "000001.sig.json"},
		{"receipt missing", func(f *fixture) {
			ents, _ := os.ReadDir(filepath.Join(f.dir, "receipts"))
			for _, e := range ents {
				os.Remove(filepath.Join(f.dir, "receipts", e.Name()))
			}
		}, Options{}, CodeCatalogUntrusted, "receipts.linux-x86_64: cannot read"},
		{"receipt edited", func(f *fixture) {
			ents, _ := os.ReadDir(filepath.Join(f.dir, "receipts"))
			p := filepath.Join(f.dir, "receipts", ents[0].Name())
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, ' '), 0o644)
		}, Options{}, CodeCatalogUntrusted, "cites"},
		{"trust not the pinned one", func(f *fixture) {}, Options{TrustSHA256: hexOf('e')}, CodeTrustInvalid, "is not the trust root this Fabric pins"},
		{"unknown _type", func(f *fixture) {
			d := f.next()
			d.Type = "fabric.catalog/v2"
			f.add(d, f.catalogKey())
		}, Options{}, CodeCatalogUntrusted, "_type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := chain(t)
			tc.break_(f)
			_, err := f.load(tc.opts)
			expect(t, err, tc.code, tc.want)
		})
	}
}

func TestRollback(t *testing.T) {
	f := chain(t)
	serial := filepath.Join(t.TempDir(), "state", "fabric", "catalog.serial")
	if _, err := f.load(Options{SerialFile: serial}); err != nil {
		t.Fatal(err)
	}
	if n, err := ReadSerial(serial); err != nil || n != 3 {
		t.Fatalf("recorded serial %d, %v", n, err)
	}
	// The same serial again is fine; a copy that stops at 2 is a rollback.
	if _, err := f.load(Options{SerialFile: serial}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(f.dir, VersionPath(3)))
	_, err := f.load(Options{SerialFile: serial})
	wantCode(t, err, CodeCatalogUntrusted)
	if !strings.Contains(err.Error(), "rollback") {
		t.Errorf("error %q", err)
	}
	// A lower serial never overwrites a higher one.
	RecordSerial(serial, 1)
	if n, _ := ReadSerial(serial); n != 3 {
		t.Errorf("serial went down to %d", n)
	}
}

func TestSerialFile(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if p, _ := SerialFile(env(map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"})); p != "/s/fabric/catalog.serial" {
		t.Errorf("with XDG_STATE_HOME: %s", p)
	}
	if p, _ := SerialFile(env(map[string]string{"XDG_STATE_HOME": "rel", "HOME": "/h"})); p != "/h/.local/state/fabric/catalog.serial" {
		t.Errorf("with a relative XDG_STATE_HOME: %s", p)
	}
	if _, err := SerialFile(env(nil)); err == nil {
		t.Error("no HOME and no XDG_STATE_HOME gave a path")
	}
}

func TestThresholds(t *testing.T) {
	a, b := 0, 1
	for _, tc := range []struct {
		name    string
		signers []int
		ok      bool
	}{{"1 of 2", []int{a}, false}, {"one key twice", []int{a, a}, false}, {"2 of 2", []int{a, b}, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.writeTrust(f.trustDoc(1, func(d *contract.Trust) { d.Roles.Catalog.Threshold = 2 }), f.keys[RoleRoot][0])
			var keys []*attest.PrivateKey
			for _, i := range tc.signers {
				keys = append(keys, f.keys[RoleCatalog][i])
			}
			f.add(f.next(), keys...)
			_, err := f.load(Options{})
			if tc.ok {
				expect(t, err, "", "")
			} else {
				expect(t, err, CodeCatalogUntrusted, "1 distinct catalog keys signed")
			}
		})
	}
}
