package supportcatalog

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

// selectionCatalog lists fabric.pi in every state, fabric.solo with one
// revoked default, and fabric.new with a future contract.
func selectionCatalog(t *testing.T) *Catalog {
	f := newFixture(t)
	f.add(f.next(), f.catalogKey())
	v := f.next()
	for _, ver := range []string{"1", "2", "3", "4", "5", "6", "7"} {
		v.Entries = append(v.Entries, f.entry("fabric.pi", ver, contract.StateCandidate))
	}
	v.Entries = append(v.Entries, f.entry("fabric.solo", "1", contract.StateCandidate))
	newer := f.entry("fabric.new", "1", contract.StateCandidate)
	newer.Package.Contract = "fabric.package/v2"
	v.Entries = append(v.Entries, newer)
	f.add(v, f.catalogKey())

	v = f.next()
	set := func(i int, state string) *contract.CatalogEntry {
		e := &v.Entries[i]
		e.State, e.RequalifyBy = state, "2027-06-01"
		return e
	}
	set(0, contract.StateSupported)  // fabric.pi@1
	set(1, contract.StateCompatible) // @2
	// @3 stays a candidate
	set(3, contract.StateSupported).RequalifyBy = "2026-11-30" // @4: expired
	set(4, contract.StateSupported)                            // @5: superseded below
	set(5, contract.StateSupported)                            // @6: revoked below
	e := set(6, contract.StateSupported)                       // @7: no receipt for darwin
	e.Artifacts["darwin-aarch64"] = e.Artifacts["linux-x86_64"]
	e.State = contract.StateCandidate
	e.Receipts["darwin-aarch64"] = e.Receipts["linux-x86_64"]
	set(7, contract.StateSupported) // fabric.solo@1
	v.Entries[6] = f.entry("fabric.pi", "7", contract.StateCandidate)
	v.Defaults["fabric.pi"] = "fabric.pi@1"
	v.Defaults["fabric.solo"] = "fabric.solo@1"
	f.add(v, f.catalogKey())

	v = f.next()
	v.Entries[4].State, v.Entries[4].SupersededBy, v.Entries[4].Sunset = contract.StateSuperseded, "fabric.pi@1", "2027-01-01"
	for _, i := range []int{5, 7} {
		v.Entries[i].State = contract.StateRevoked
		v.Entries[i].Revocation = &contract.CatalogRevocation{Reason: "security", Running: contract.RunningDrain, Evidence: []contract.DigestSet{{SHA256: hexOf('5')}}}
	}
	f.add(v, f.catalogKey())
	c, err := f.load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSelect(t *testing.T) {
	c := selectionCatalog(t)
	digest := func(name string) string { return c.Latest().Entry(name).PackageDigest.SHA256 }
	pi1 := digest("fabric.pi@1")
	cases := []struct {
		name  string
		req   Request
		entry string // selected, or
		code  string // the error code
		alts  []string
	}{
		{"the signed default", Request{Package: "fabric.pi", Digest: pi1}, "fabric.pi@1", "", nil},
		{"an exact pin", Request{Package: "fabric.pi@1", Digest: pi1}, "fabric.pi@1", "", nil},
		{"compatible, with a warning", Request{Package: "fabric.pi@2", Digest: digest("fabric.pi@2")}, "fabric.pi@2", "", nil},
		{"unlisted id", Request{Package: "fabric.other", Digest: pi1}, "", CodePackageNotInCatalog, nil},
		{"unlisted version", Request{Package: "fabric.pi@99", Digest: pi1}, "", CodePackageNotInCatalog, []string{"fabric.pi@1", "fabric.pi@2"}},
		{"not a request", Request{Package: "fabric.pi@", Digest: pi1}, "", CodePackageNotInCatalog, nil},
		{"digest mismatch", Request{Package: "fabric.pi", Digest: hexOf('0')}, "", CodePackageDigest, []string{"fabric.pi@1", "fabric.pi@2"}},
		{"candidate without the flag", Request{Package: "fabric.pi@3", Digest: digest("fabric.pi@3")}, "", CodePackageNotSelectable, []string{"fabric.pi@1", "fabric.pi@2"}},
		{"candidate with the flag", Request{Package: "fabric.pi@3", Digest: digest("fabric.pi@3"), AllowCandidate: true}, "fabric.pi@3", "", nil},
		{"past requalify_by", Request{Package: "fabric.pi@4", Digest: digest("fabric.pi@4")}, "", CodePackageNotSelectable, nil},
		{"past requalify_by with the flag", Request{Package: "fabric.pi@4", Digest: digest("fabric.pi@4"), AllowCandidate: true}, "fabric.pi@4", "", nil},
		{"superseded without the flag", Request{Package: "fabric.pi@5", Digest: digest("fabric.pi@5")}, "", CodePackageSuperseded, nil},
		{"superseded with the flag", Request{Package: "fabric.pi@5", Digest: digest("fabric.pi@5"), AllowSuperseded: true}, "fabric.pi@5", "", nil},
		{"superseded past sunset", Request{Package: "fabric.pi@5", Digest: digest("fabric.pi@5"), AllowSuperseded: true, Now: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}, "", CodePackageSuperseded, nil},
		{"revoked, every flag", Request{Package: "fabric.pi@6", Digest: digest("fabric.pi@6"), AllowCandidate: true, AllowSuperseded: true}, "", CodePackageRevoked, nil},
		{"a revoked default picks nothing", Request{Package: "fabric.solo", Digest: digest("fabric.solo@1")}, "", CodePackageRevoked, []string{}},
		{"no receipt for the platform", Request{Package: "fabric.pi@1", Digest: pi1, Platform: "darwin-aarch64"}, "", CodePackageUnqualified, []string{}},
		{"a contract this Fabric does not speak", Request{Package: "fabric.new@1", Digest: digest("fabric.new@1"), AllowCandidate: true}, "", CodePackageIncompatible, []string{}},
		{"a host protocol this Fabric does not speak", Request{Package: "fabric.pi@1", Digest: pi1, Contracts: []string{contract.PackageV1Alpha1}}, "", CodePackageIncompatible, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.req.Platform == "" {
				tc.req.Platform = "linux-x86_64"
			}
			if tc.req.Now.IsZero() {
				tc.req.Now = now
			}
			sel, err := Select(c, tc.req)
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if sel.Entry != tc.entry || sel.Serial != 4 || sel.PackageDigest != tc.req.Digest {
					t.Errorf("selected %+v, want %s at serial 4", sel, tc.entry)
				}
				if (sel.State != contract.StateSupported || tc.req.AllowCandidate) != (sel.Warning != "") {
					t.Errorf("state %s with warning %q", sel.State, sel.Warning)
				}
				return
			}
			if sel != (Selection{}) {
				t.Errorf("a refused request selected %+v", sel)
			}
			wantCode(t, err, tc.code)
			var se *SelectionError
			if !errors.As(err, &se) {
				t.Fatalf("not a SelectionError: %T", err)
			}
			if tc.alts != nil && !slices.Equal(se.Alternatives, tc.alts) && !(len(tc.alts) == 0 && len(se.Alternatives) == 0) {
				t.Errorf("alternatives %v, want %v", se.Alternatives, tc.alts)
			}
			if len(se.Alternatives) > 0 && !strings.Contains(err.Error(), "selectable: "+strings.Join(se.Alternatives, ", ")) {
				t.Errorf("message %q does not list the alternatives", err)
			}
			var ce *contract.ConfigError
			if info := se.Info(); info.Code != tc.code || info.Stage != contract.StagePlan || !errors.As(err, &ce) || ce.Code != tc.code {
				t.Errorf("info %+v, config error %v", info, ce)
			}
		})
	}
}

func TestSelectUnverifiedReceipt(t *testing.T) {
	f := chain(t)
	c, err := f.load(Options{Receipts: ReceiptVerifierFunc(func(_ context.Context, r Receipt) error {
		return errors.New("signer is not a qualifier")
	})})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Select(c, Request{Package: "fabric.scripted", Digest: c.Latest().Doc.Entries[0].PackageDigest.SHA256, Platform: "linux-x86_64", Now: now})
	wantCode(t, err, CodePackageUnqualified)
	if !strings.Contains(err.Error(), "signer is not a qualifier") {
		t.Errorf("error %q", err)
	}
	// A receipt signed by a key outside the qualifier role, through the
	// DSSE verifier.
	f = newFixture(t)
	f.add(f.next(), f.catalogKey())
	v := f.next()
	e := f.entry("fabric.scripted", "1", contract.StateCandidate)
	e.Receipts["linux-x86_64"] = contract.CatalogReceipt{SHA256: f.receipt(f.keys[RolePublisher][0], e.Entry, "linux-x86_64")}
	v.Entries = append(v.Entries, e)
	f.add(v, f.catalogKey())
	c, err = f.load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Select(c, Request{Package: "fabric.scripted@1", Digest: e.PackageDigest.SHA256, Platform: "linux-x86_64", AllowCandidate: true, Now: now})
	wantCode(t, err, CodePackageUnqualified)
}
