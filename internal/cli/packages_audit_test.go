package cli

import (
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	sc "github.com/fabric-runtime/fabric/internal/supportcatalog"
)

func TestAuditJudge(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	digest := "ab"
	entry := func(state string, edit func(*contract.CatalogEntry)) *sc.Version {
		e := contract.CatalogEntry{Entry: "x@1", State: state, PackageDigest: contract.DigestSet{SHA256: digest}}
		if edit != nil {
			edit(&e)
		}
		return &sc.Version{Doc: contract.SupportCatalog{Serial: 9, Entries: []contract.CatalogEntry{e}}}
	}
	revoked := func(running string) func(*contract.CatalogEntry) {
		return func(e *contract.CatalogEntry) {
			e.Revocation = &contract.CatalogRevocation{Reason: "security", Running: running}
		}
	}
	sel := &contract.PackageSelection{Entry: "x@1", PackageDigest: digest}
	for _, tc := range []struct {
		name string
		v    *sc.Version
		sel  *contract.PackageSelection
		want string
	}{
		{"supported", entry(contract.StateSupported, nil), sel, auditCompliant},
		{"revoked, continue", entry(contract.StateRevoked, revoked("continue")), sel, auditWarn},
		{"revoked, drain", entry(contract.StateRevoked, revoked("drain")), sel, auditDrain},
		{"revoked, stop", entry(contract.StateRevoked, revoked("stop")), sel, auditStop},
		{"revoked without a policy", entry(contract.StateRevoked, nil), sel, auditStop},
		{"superseded before sunset", entry(contract.StateSuperseded, func(e *contract.CatalogEntry) { e.Sunset = "2026-12-02" }), sel, auditWarn},
		{"superseded past sunset", entry(contract.StateSuperseded, func(e *contract.CatalogEntry) { e.Sunset = "2026-12-01" }), sel, auditDrain},
		{"unlisted", entry(contract.StateSupported, nil), &contract.PackageSelection{Entry: "y@1"}, auditUnlisted},
		{"another digest", entry(contract.StateSupported, nil), &contract.PackageSelection{Entry: "x@1", PackageDigest: "cd"}, auditDrain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got, reason := judge(tc.v, tc.sel, now)
			if got != tc.want || reason == "" {
				t.Errorf("verdict %s (%s), want %s", got, reason, tc.want)
			}
		})
	}
}
