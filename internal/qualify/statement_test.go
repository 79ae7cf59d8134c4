package qualify

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/contract/validate"
	"github.com/fabric-runtime/fabric/internal/receipt"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const hexA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// passing is a suite report in which every item passed, the observable
// ones with a claim and an agreeing observation.
func passing() []conformance.Item {
	names := []string{"discovery", "smallest-plan", "unsupported-field", "invalid-settings", "doctor-env", "start-stop", "invoke",
		"failed-invoke", "start-failure", "transport-failure", "malformed-output", "cleanup", "isolation", "secret-redaction"}
	items := make([]conformance.Item, len(names))
	for i, n := range names {
		id := strconv.Itoa(i + 1)
		items[i] = conformance.Item{ID: id, Name: n, Verdict: conformance.Pass, Detail: "ok", Elapsed: 1500 * time.Microsecond}
		if conformance.Observable(id) {
			items[i].Claim = &conformance.Claim{By: "executor:fabric-host@sha256:" + hexA, Statement: "stopped"}
			items[i].Observation = &conformance.Observation{By: conformance.ObserverProcScan, Method: conformance.MethodProcAndFS, Result: "nothing left", Agrees: true}
		}
	}
	return items
}

func edit(items []conformance.Item, id string, f func(*conformance.Item)) []conformance.Item {
	items = slices.Clone(items)
	for i := range items {
		if items[i].ID == id {
			f(&items[i])
		}
	}
	return items
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name      string
		items     []conformance.Item
		required  []contract.QualificationRequire
		qualified bool
		result    string
		notTested []string
		failed    []string
		skipped   int
	}{
		{name: "all pass", items: passing(), qualified: true, result: "PASSED"},
		{name: "mandatory observable without observation", qualified: false, result: "FAILED", notTested: []string{"12"},
			items: edit(passing(), "12", func(it *conformance.Item) { it.Observation = nil })},
		{name: "capability observable without observation", qualified: true, result: "PASSED", notTested: []string{"10"},
			items: edit(passing(), "10", func(it *conformance.Item) { it.Observation = nil })},
		{name: "mandatory skipped", qualified: false, result: "FAILED", notTested: []string{"7"},
			items: edit(passing(), "7", func(it *conformance.Item) { it.Verdict = conformance.Skip })},
		{name: "capability skipped is listed", qualified: true, result: "PASSED", skipped: 1,
			items: edit(passing(), "11", func(it *conformance.Item) { it.Verdict = conformance.Skip })},
		{name: "capability fails", qualified: false, result: "FAILED", failed: []string{"8"},
			items: edit(passing(), "8", func(it *conformance.Item) { it.Verdict = conformance.Fail })},
		{name: "claim stopped, observation disagrees", qualified: false, result: "FAILED", failed: []string{"12"},
			items: edit(passing(), "12", func(it *conformance.Item) {
				it.Verdict, it.Observation.Agrees = conformance.Fail, false
			})},
		{name: "descriptor raises a capability item", qualified: false, result: "FAILED", notTested: []string{"11"},
			required: []contract.QualificationRequire{{ID: "11", Tier: contract.TierMandatory}},
			items:    edit(passing(), "11", func(it *conformance.Item) { it.Verdict = conformance.Skip })},
		{name: "descriptor lowers an item to advisory", qualified: true, result: "WARNED",
			required: []contract.QualificationRequire{{ID: "8", Tier: contract.TierAdvisory}},
			items:    edit(passing(), "8", func(it *conformance.Item) { it.Verdict = conformance.Fail })},
		{name: "setup failed", qualified: false, result: "FAILED", failed: []string{"0"},
			items: []conformance.Item{{ID: "0", Name: "setup", Verdict: conformance.Fail, Detail: "invalid profile"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results, sum, v := judge(tt.items, Tiers(tt.required))
			if v.Qualified != tt.qualified || sum.Result != tt.result || v.Rule != contract.QualificationRuleV1 {
				t.Errorf("verdict %+v, summary %s", v, sum.Result)
			}
			if !slices.Equal(sum.NotTested, nonNil(tt.notTested)) || !slices.Equal(sum.FailedTests, nonNil(tt.failed)) {
				t.Errorf("not tested %v, failed %v", sum.NotTested, sum.FailedTests)
			}
			if sum.Counts[contract.QualificationSkip] != tt.skipped || len(results) != len(tt.items) {
				t.Errorf("counts %v, %d results", sum.Counts, len(results))
			}
			if !tt.qualified && len(v.Reasons) == 0 {
				t.Error("an unqualified verdict without reasons")
			}
		})
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// goldenPackage is the package of the golden statement.
func goldenPackage() *Package {
	return &Package{ID: "fabric.scripted", Version: "1", Contract: contract.PackageV1Alpha1, SHA256: hexA, Dir: "/pkg",
		Descriptor: contract.PackageAdapter{Path: "scripted.fabric-adapter.json", SHA256: hexA},
		Artifacts: []contract.PackageArtifact{
			{Kind: "npm", Name: "@scope/tool", Version: "1.2.3", Digest: map[string]string{"sha512": "c2hhNTEy"}},
			{Kind: "npm", Name: "@scope/tool-linux-x64", Version: "1.2.3", Digest: map[string]string{"sha512": "bGludXg="}},
		},
		Profile: "conformance.profile.yaml"}
}

func goldenStatement() *receipt.Statement {
	items := edit(passing(), "11", func(it *conformance.Item) {
		it.Verdict, it.Detail = conformance.Skip, "the profile has no malformed_output overlay"
	})
	t0 := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	return newStatement(goldenPackage(), conformance.Report{Adapter: "fabric.scripted", Items: items,
		ModelEndpoint: &conformance.ModelEndpoint{Script: "/pkg/conformance.modelstub.yaml", SHA256: hexA}},
		run{platform: "linux-x86_64", started: t0, finished: t0.Add(9 * time.Second), profileSHA256: hexA, hostSHA256: hexA, revision: "0123abc",
			env: contract.QualificationEnvironment{OS: "linux", Kernel: "6.18.44", Arch: "x86_64", Node: "24.22.3", Fabric: contract.FabricVersion{Version: "0.9.0", Revision: "0123abc"}}})
}

// The statement's JSON is pinned: field names, subjects, tiers, the
// separate claim and observation objects.
func TestStatementGolden(t *testing.T) {
	got, err := json.MarshalIndent(goldenStatement(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "statement.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("statement differs from %s (-want +got):\n%s", path, cmp.Diff(string(want), string(got)))
	}
	if _, err := receipt.ParseStatement(want); err != nil {
		t.Errorf("the golden statement does not parse: %v", err)
	}
	if err := validate.NewValidator().Validate("qualification-predicate", want); err != nil {
		t.Errorf("the golden statement fails its schema: %v", err)
	}
}
