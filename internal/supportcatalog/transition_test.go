package supportcatalog

import (
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

// withEntry starts a fixture whose version 2 lists one entry of
// fabric.scripted@1 in state from (reached through legal versions), and
// a supported successor fabric.scripted@2.
func withEntry(t *testing.T, from string) *fixture {
	f := newFixture(t)
	f.add(f.next(), f.catalogKey())
	v := f.next()
	v.Entries = append(v.Entries, f.entry("fabric.scripted", "1", contract.StateCandidate), f.entry("fabric.scripted", "2", contract.StateCandidate))
	f.add(v, f.catalogKey())
	v = f.next()
	v.Entries[1] = f.entry("fabric.scripted", "2", contract.StateSupported)
	v.Entries[1].Receipts = f.next().Entries[1].Receipts
	v.Entries[1].Since = f.next().Entries[1].Since
	v.Defaults["fabric.scripted"] = "fabric.scripted@2"
	if from != contract.StateCandidate {
		e := f.entry("fabric.scripted", "1", from)
		e.Receipts = v.Entries[0].Receipts
		if from == contract.StateSuperseded {
			e.SupersededBy, e.Sunset = "fabric.scripted@2", "2027-01-01"
		}
		if from == contract.StateRevoked {
			e.Revocation = &contract.CatalogRevocation{Reason: "security", Running: contract.RunningStop, Evidence: []contract.DigestSet{{SHA256: hexOf('5')}}}
		}
		v.Entries[0] = e
	}
	f.add(v, f.catalogKey())
	if _, err := f.load(Options{SignaturesFrom: 1}); err != nil {
		t.Fatalf("fixture in state %s: %v", from, err)
	}
	return f
}

func TestTransitions(t *testing.T) {
	revocation := &contract.CatalogRevocation{Reason: "upstream_yanked", Running: contract.RunningDrain, Evidence: []contract.DigestSet{{SHA256: hexOf('7')}}}
	cases := []struct {
		name string
		from string
		edit func(f *fixture, d *contract.SupportCatalog) // edits entry 0 of the next version
		want string                                       // "" = legal
	}{
		{"candidate -> compatible", contract.StateCandidate, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries[0].State, d.Entries[0].RequalifyBy = contract.StateCompatible, "2027-06-01"
		}, ""},
		{"candidate -> supported", contract.StateCandidate, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries[0].State, d.Entries[0].RequalifyBy = contract.StateSupported, "2027-06-01"
		}, ""},
		{"compatible -> supported", contract.StateCompatible, func(f *fixture, d *contract.SupportCatalog) { d.Entries[0].State = contract.StateSupported }, ""},
		{"supported -> compatible with a reason", contract.StateSupported, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries[0].State, d.Entries[0].Reason = contract.StateCompatible, "flaky cancel on arm"
		}, ""},
		{"supported -> superseded", contract.StateSupported, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries[0].State, d.Entries[0].SupersededBy, d.Entries[0].Sunset = contract.StateSuperseded, "fabric.scripted@2", "2027-01-01"
		}, ""},
		{"superseded -> revoked", contract.StateSuperseded, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries[0].State, d.Entries[0].SupersededBy, d.Entries[0].Sunset, d.Entries[0].Revocation = contract.StateRevoked, "", "", revocation
		}, ""},
		{"candidate -> revoked", contract.StateCandidate, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries[0].State, d.Entries[0].Revocation = contract.StateRevoked, revocation
		}, ""},
		{"requalification of a supported entry", contract.StateSupported, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries[0].RequalifyBy = "2027-09-01"
		}, ""},
		{"a new candidate", contract.StateSupported, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries = append(d.Entries, f.entry("fabric.scripted", "3", contract.StateCandidate))
		}, ""},

		{"revoked -> supported", contract.StateRevoked, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries[0].State, d.Entries[0].Revocation = contract.StateSupported, nil
		}, "revoked is terminal"},
		{"supported without every postcondition observed", contract.StateCompatible, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries[0].State = contract.StateSupported
			r := d.Entries[0].Receipts["linux-x86_64"]
			r.ObservedAll = false
			d.Entries[0].Receipts["linux-x86_64"] = r
		}, "observed_all"},
		{"supersede to a revoked successor", contract.StateSupported, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries[1].State, d.Entries[1].Revocation = contract.StateRevoked, revocation
			d.Entries[0].State, d.Entries[0].SupersededBy, d.Entries[0].Sunset = contract.StateSuperseded, "fabric.scripted@2", "2027-01-01"
		}, "the successor must be supported or compatible"},
		{"supported -> compatible without a reason", contract.StateSupported, func(f *fixture, d *contract.SupportCatalog) { d.Entries[0].State = contract.StateCompatible }, "reason is required"},
		{"compatible -> candidate", contract.StateCompatible, func(f *fixture, d *contract.SupportCatalog) { d.Entries[0].State = contract.StateCandidate }, "not a legal transition"},
		{"superseded -> supported", contract.StateSuperseded, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries[0].State, d.Entries[0].SupersededBy, d.Entries[0].Sunset = contract.StateSupported, "", ""
		}, "not a legal transition"},
		{"a new entry listed as supported", contract.StateSupported, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries = append(d.Entries, f.entry("fabric.scripted", "3", contract.StateSupported))
		}, "starts as candidate"},
		{"a new candidate without a receipt", contract.StateSupported, func(f *fixture, d *contract.SupportCatalog) {
			e := f.entry("fabric.scripted", "3", contract.StateCandidate)
			e.Receipts = nil
			d.Entries = append(d.Entries, e)
		}, "no qualification receipt for platform linux-x86_64"},
		{"compatible without requalify_by", contract.StateCandidate, func(f *fixture, d *contract.SupportCatalog) { d.Entries[0].State = contract.StateCompatible }, "requalify_by is required"},
		{"a digest edited", contract.StateSupported, func(f *fixture, d *contract.SupportCatalog) { d.Entries[0].PackageDigest.SHA256 = hexOf('9') }, "fixed once listed"},
		{"an entry removed", contract.StateSupported, func(f *fixture, d *contract.SupportCatalog) { d.Entries = d.Entries[1:] }, "entries are never removed"},
		{"a default demoted to compatible", contract.StateSupported, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries[1].State, d.Entries[1].Reason = contract.StateCompatible, "flaky"
		}, "only a supported entry can be a default"},
		{"a default naming a candidate", contract.StateCandidate, func(f *fixture, d *contract.SupportCatalog) { d.Defaults["fabric.scripted"] = "fabric.scripted@1" }, "only a supported entry can be a default"},
		{"a revocation without evidence", contract.StateSupported, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries[0].State, d.Entries[0].Revocation = contract.StateRevoked, &contract.CatalogRevocation{Reason: "security", Running: contract.RunningStop}
		}, "revocation.evidence"},
		{"a revocation with a reason not in the list", contract.StateSupported, func(f *fixture, d *contract.SupportCatalog) {
			d.Entries[0].State, d.Entries[0].Revocation = contract.StateRevoked, &contract.CatalogRevocation{Reason: "bored", Running: contract.RunningStop, Evidence: revocation.Evidence}
		}, "revocation.reason"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := withEntry(t, tc.from)
			d := f.next()
			tc.edit(f, &d)
			f.add(d, f.catalogKey())
			_, err := f.load(Options{})
			code := CodeCatalogUntrusted
			if tc.want == "" {
				code = ""
			}
			expect(t, err, code, tc.want)
			if err != nil && !strings.Contains(err.Error(), "000004.json") {
				t.Errorf("error %q does not name the version file", err)
			}
		})
	}
}

func TestRevokerOnly(t *testing.T) {
	revoke := func(d *contract.SupportCatalog) {
		d.Entries[0].State, d.Entries[0].Since = contract.StateRevoked, "2026-12-02"
		d.Entries[0].Revocation = &contract.CatalogRevocation{Reason: "security", Running: contract.RunningStop, Evidence: []contract.DigestSet{{SHA256: hexOf('5')}}}
	}
	cases := []struct {
		name string
		edit func(d *contract.SupportCatalog)
		ok   bool
	}{
		{"revocations only", revoke, true},
		{"revoke and promote", func(d *contract.SupportCatalog) {
			revoke(d)
			d.Entries[2].State, d.Entries[2].RequalifyBy = contract.StateCompatible, "2027-06-01"
		}, false},
		{"revoke the default", func(d *contract.SupportCatalog) {
			revoke(d)
			d.Entries[1].State, d.Entries[1].Since = contract.StateRevoked, "2026-12-02"
			d.Entries[1].Revocation = d.Entries[0].Revocation
		}, true},
		{"revoke and requalify", func(d *contract.SupportCatalog) {
			revoke(d)
			d.Entries[1].RequalifyBy = "2028-01-01"
		}, false},
		{"revoke and extend expiry", func(d *contract.SupportCatalog) {
			revoke(d)
			d.Expires = d.Expires.AddDate(1, 0, 0)
		}, false},
		{"revoke and change a default", func(d *contract.SupportCatalog) {
			revoke(d)
			delete(d.Defaults, "fabric.scripted")
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := withEntry(t, contract.StateCompatible)
			d := f.next()
			d.Entries = append(d.Entries, f.entry("fabric.scripted", "3", contract.StateCandidate))
			f.add(d, f.catalogKey())
			d = f.next()
			tc.edit(&d)
			f.add(d, f.keys[RoleRevoker][1])
			_, err := f.load(Options{})
			if tc.ok {
				expect(t, err, "", "")
			} else {
				expect(t, err, CodeCatalogUntrusted, "revoker role only")
			}
		})
	}
}
