package qualify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/pkgop"
	"github.com/fabric-runtime/fabric/internal/receipt"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

func sh(script string) []string { return []string{"sh", "-c", script} }

// opsPackage is a package directory and the state paths its operations
// run against.
func opsPackage(t *testing.T) (string, []contract.PackageStatePath) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, contract.PackageDescriptorFile), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, []contract.PackageStatePath{{ID: "config", Path: "config.json", Class: contract.StateClassConfig}, {ID: "sessions", Path: "~/sessions", Class: contract.StateClassSession}}
}

// Every helper operation becomes an item with the executor's claim and
// the observer's manifests apart; a read operation that writes fails,
// and its item records the diff.
func TestOperationItems(t *testing.T) {
	landlock := pkgop.LandlockABI() > 0
	cases := []struct {
		name     string
		op       contract.PackageOperation
		opts     OperationOptions
		landlock bool // needs Landlock
		verdict  string
		tier     string
		agrees   bool
		changes  string // the first change's "kind path-suffix", when one is recorded
		result   string
	}{
		{name: "read that reads", landlock: true, op: contract.PackageOperation{ID: "show", Mode: "read", Argv: sh("ls -a; echo hi")},
			verdict: "pass", tier: "MANDATORY", agrees: true, result: "no change"},
		{name: "read that creates a state file: denied", landlock: true, op: contract.PackageOperation{ID: "bad", Mode: "read", Argv: sh("echo '{}' > config.json")},
			verdict: "fail", tier: "MANDATORY", result: "denied (EACCES)"},
		{name: "read that creates a state file: detection only", op: contract.PackageOperation{ID: "bad", Mode: "read", Argv: sh("echo '{}' > config.json")},
			opts:    OperationOptions{NoLandlock: true, AllowUnenforcedRead: true, NoOverlay: true},
			verdict: "fail", tier: "MANDATORY", changes: "added /config.json", result: "1 change(s) outside the declared writes: added "},
		{name: "read that chmods the home", op: contract.PackageOperation{ID: "bad", Mode: "read", Argv: sh("chmod 751 .")},
			verdict: "fail", tier: "MANDATORY", changes: "modified ", result: "outside the declared writes"},
		{name: "configure within its writes", op: contract.PackageOperation{ID: "set", Mode: "configure", Writes: []string{"config"}, Argv: sh("echo '{}' > config.json")},
			verdict: "pass", tier: "CAPABILITY", agrees: true, changes: "added /config.json", result: "within the declared writes"},
		{name: "configure writing a sibling", op: contract.PackageOperation{ID: "set", Mode: "configure", Writes: []string{"config"}, Argv: sh("mkdir sessions")},
			opts: OperationOptions{NoLandlock: true}, verdict: "fail", tier: "CAPABILITY", changes: "added /sessions"},
		{name: "read that fails", op: contract.PackageOperation{ID: "show", Mode: "read", Argv: sh("exit 3")},
			opts: OperationOptions{NoLandlock: true, AllowUnenforcedRead: true}, verdict: "fail", tier: "MANDATORY", agrees: true, result: "no change"},
		{name: "read without Landlock: not allowed", op: contract.PackageOperation{ID: "show", Mode: "read", Argv: sh("true")},
			opts: OperationOptions{NoLandlock: true}, verdict: "not_tested", tier: "MANDATORY"},
		{name: "tier from qualification.required", op: contract.PackageOperation{ID: "show", Mode: "read", Argv: sh("true")},
			opts:    OperationOptions{NoLandlock: true, AllowUnenforcedRead: true, Required: []contract.QualificationRequire{{ID: "op.show", Tier: "ADVISORY"}}},
			verdict: "pass", tier: "ADVISORY", agrees: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.landlock && !landlock {
				livetest.Missing(t, "Landlock", "a Linux kernel >= 5.13 with Landlock enabled", nil)
			}
			dir, sps := opsPackage(t)
			tc.opts.TempDir = t.TempDir()
			rs := Operations(context.Background(), dir, sps, []contract.PackageOperation{tc.op}, tc.opts)
			if len(rs) != 1 {
				t.Fatalf("%d results", len(rs))
			}
			r := rs[0]
			t.Logf("%s %s %s: %s", r.ID, r.Tier, r.Verdict, r.Detail)
			if r.ID != "op."+tc.op.ID || r.Verdict != tc.verdict || r.Tier != tc.tier {
				t.Fatalf("id %s verdict %s tier %s, want op.%s %s %s (%s)", r.ID, r.Verdict, r.Tier, tc.op.ID, tc.verdict, tc.tier, r.Detail)
			}
			if tc.verdict == "not_tested" {
				if r.Observation != nil || r.Claim != nil {
					t.Errorf("a refused operation has a claim or observation: %+v %+v", r.Claim, r.Observation)
				}
				return
			}
			if r.Claim == nil || !strings.HasPrefix(r.Claim.By, "executor:sh@sha256:") || !strings.HasPrefix(r.Claim.Statement, "exit ") {
				t.Errorf("claim %+v", r.Claim)
			}
			o := r.Observation
			if o == nil || o.By != OperationObserver || !strings.HasPrefix(o.Method, "tree-manifest") || !strings.HasPrefix(o.Before, "fm1:") || !strings.HasPrefix(o.After, "fm1:") {
				t.Fatalf("observation %+v", o)
			}
			if o.Agrees != tc.agrees || !strings.Contains(o.Result, tc.result) {
				t.Errorf("agrees %v result %q, want %v %q", o.Agrees, o.Result, tc.agrees, tc.result)
			}
			if (o.Enforcement == pkgop.EnforcementNone) == strings.Contains(o.Method, "landlock") {
				t.Errorf("method %q and enforcement %q disagree", o.Method, o.Enforcement)
			}
			if tc.changes != "" {
				kind, suffix, _ := strings.Cut(tc.changes, " ")
				if len(o.Changes) == 0 || o.Changes[0].Kind != kind || !strings.HasSuffix(o.Changes[0].Path, suffix) {
					t.Errorf("changes %+v, want first %q", o.Changes, tc.changes)
				}
				if o.Before == o.After && len(o.Overlay) == 0 {
					t.Errorf("a change with equal digests and no overlay")
				}
			}
		})
	}
}

// The operations' items count in the verdict like the suite's: a
// MANDATORY read operation that fails fails the qualification, and a
// receipt whose operation item passed without an agreeing observation
// does not verify.
func TestJudgeOperations(t *testing.T) {
	dir, sps := opsPackage(t)
	opts := OperationOptions{TempDir: t.TempDir(), NoLandlock: true, AllowUnenforcedRead: true, NoOverlay: true}
	good := Operations(context.Background(), dir, sps, []contract.PackageOperation{{ID: "show", Mode: "read", Argv: sh("true")}}, opts)
	bad := Operations(context.Background(), dir, sps, []contract.PackageOperation{{ID: "bad", Mode: "read", Argv: sh("touch config.json")}}, opts)

	_, sum, v := judge(nil, Tiers(nil), good...)
	if !v.Qualified || sum.Result != "PASSED" || len(sum.PassedTests) != 1 || sum.PassedTests[0] != "op.show" {
		t.Fatalf("good: %+v %+v", v, sum)
	}
	results, sum, v := judge(nil, Tiers(nil), append(good, bad...)...)
	if v.Qualified || sum.Result != "FAILED" || len(sum.FailedTests) != 1 || sum.FailedTests[0] != "op.bad" || !strings.Contains(strings.Join(v.Reasons, ";"), "MANDATORY item op.bad") {
		t.Fatalf("bad: %+v %+v", v, sum)
	}
	if c := results[1].Observation.Changes; len(c) != 1 || c[0].Kind != "added" || c[0].After == nil || c[0].After.Type != "file" {
		t.Errorf("the diff is not recorded: %+v", c)
	}

	st := &receipt.Statement{Predicate: contract.QualificationPredicate{Platform: "p", Results: good,
		Verdict: contract.QualificationVerdict{Qualified: true, Rule: contract.QualificationRuleV1}}}
	if p := receipt.Check(st, receipt.Expectation{}); len(p) != 0 {
		t.Fatalf("good statement: %v", p)
	}
	forged := *st
	forged.Predicate.Results = append([]contract.QualificationResult{}, bad...)
	forged.Predicate.Results[0].Verdict = contract.QualificationPass
	if p := receipt.Check(&forged, receipt.Expectation{}); len(p) != 1 || !strings.Contains(p[0], "op.bad") || !strings.Contains(p[0], "without an agreeing observation") {
		t.Errorf("a read operation's pass over a disagreeing observation: %v", p)
	}
}
