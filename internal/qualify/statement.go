package qualify

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/receipt"
)

// mandatory are the items whose failure, or absence, fails a
// qualification unless the package descriptor says otherwise.
var mandatory = map[string]bool{"0": true, "1": true, "2": true, "3": true, "4": true, "5": true, "6": true, "7": true, "9": true, "12": true, "14": true}

// Tiers returns the tier of each suite item: MANDATORY for the setup and
// items 1-7, 9, 12 and 14, CAPABILITY for the others, each overridden by
// required (the package descriptor's qualification.required).
func Tiers(required []contract.QualificationRequire) func(id string) string {
	over := map[string]string{}
	for _, r := range required {
		over[r.ID] = r.Tier
	}
	return func(id string) string {
		if t, ok := over[id]; ok {
			return t
		}
		if mandatory[id] {
			return contract.TierMandatory
		}
		return contract.TierCapability
	}
}

// judge turns the suite's items (and the helper operations' results,
// already judged by Operations) into results, summary and verdict under
// contract.QualificationRuleV1: an observable item that passed without an
// observation is not_tested (its evidence only a claim); a MANDATORY item
// the profile skipped is not_tested; a CAPABILITY item it skipped stays
// skip, listed as such. No MANDATORY fail or not_tested and no CAPABILITY
// fail qualifies; ADVISORY and INFORMATIONAL failures only warn.
func judge(items []conformance.Item, tier func(string) string, operations ...contract.QualificationResult) ([]contract.QualificationResult, contract.QualificationSummary, contract.QualificationVerdict) {
	sum := contract.QualificationSummary{PassedTests: []string{}, FailedTests: []string{}, WarnedTests: []string{}, NotTested: []string{},
		Counts: map[string]int{contract.QualificationPass: 0, contract.QualificationFail: 0, contract.QualificationSkip: 0, contract.QualificationNotTested: 0}}
	verdict := contract.QualificationVerdict{Qualified: true, Rule: contract.QualificationRuleV1}
	results := make([]contract.QualificationResult, 0, len(items)+len(operations))
	for _, it := range items {
		results = append(results, result(it, tier(it.ID)))
	}
	results = append(results, operations...)
	for _, r := range results {
		sum.Counts[r.Verdict]++
		blocking := r.Tier == contract.TierMandatory || (r.Tier == contract.TierCapability && r.Verdict == contract.QualificationFail)
		switch r.Verdict {
		case contract.QualificationPass:
			sum.PassedTests = append(sum.PassedTests, r.ID)
			continue
		case contract.QualificationNotTested:
			sum.NotTested = append(sum.NotTested, r.ID)
		case contract.QualificationFail:
			if blocking {
				sum.FailedTests = append(sum.FailedTests, r.ID)
			} else {
				sum.WarnedTests = append(sum.WarnedTests, r.ID)
			}
		case contract.QualificationSkip:
			continue
		}
		if blocking {
			verdict.Qualified = false
			verdict.Reasons = append(verdict.Reasons, fmt.Sprintf("%s item %s %s: %s", r.Tier, r.ID, r.Name, r.Verdict))
		}
	}
	switch {
	case !verdict.Qualified:
		sum.Result = "FAILED"
	case len(sum.WarnedTests) > 0:
		sum.Result = "WARNED"
	default:
		sum.Result = "PASSED"
	}
	return results, sum, verdict
}

// result is one item's result under its tier.
func result(it conformance.Item, tier string) contract.QualificationResult {
	r := contract.QualificationResult{ID: it.ID, Name: it.Name, Tier: tier, Verdict: string(it.Verdict),
		ElapsedMS: float64(it.Elapsed.Microseconds()) / 1000, Detail: it.Detail}
	if c := it.Claim; c != nil {
		r.Claim = &contract.QualificationClaim{By: c.By, Statement: c.Statement}
		r.EvidenceLevel = contract.EvidenceClaimed
	}
	if o := it.Observation; o != nil {
		r.Observation = &contract.QualificationObservation{By: o.By, Method: o.Method, Result: o.Result, Agrees: o.Agrees}
		r.EvidenceLevel = contract.EvidenceObserved
	}
	switch {
	case it.Verdict == conformance.Pass && conformance.Observable(it.ID) && it.Observation == nil:
		r.Verdict = contract.QualificationNotTested
		r.Detail = "no independent observation of the postcondition: " + it.Detail
	case it.Verdict == conformance.Skip && tier == contract.TierMandatory:
		r.Verdict = contract.QualificationNotTested
		r.Detail = "skipped: " + it.Detail
	}
	if b, err := json.Marshal(it); err == nil {
		s := sha256.Sum256(b)
		r.Evidence = []contract.QualificationEvidence{{Name: "conformance-item-" + it.ID + ".json", Digest: map[string]string{"sha256": hex.EncodeToString(s[:])}, MediaType: "application/json"}}
	}
	return r
}

// subjects lists the statement's subjects: the package, its adapter
// descriptor, its artifacts for the platform (sorted by name) and the
// host binary.
func subjects(p *Package, hostSHA256 string) []contract.StatementSubject {
	out := []contract.StatementSubject{
		{Name: receipt.PackageSubject(p.ID, p.Version), Digest: map[string]string{"sha256": p.SHA256}},
		{Name: receipt.SubjectDescriptor, Digest: map[string]string{"sha256": p.Descriptor.SHA256}},
	}
	arts := slices.Clone(p.Artifacts)
	slices.SortFunc(arts, func(a, b contract.PackageArtifact) int {
		return strings.Compare(receipt.ArtifactSubject(a), receipt.ArtifactSubject(b))
	})
	for _, a := range arts {
		out = append(out, contract.StatementSubject{Name: receipt.ArtifactSubject(a), Digest: a.Digest})
	}
	return append(out, contract.StatementSubject{Name: receipt.SubjectHost, Digest: map[string]string{"sha256": hostSHA256}})
}

// rfc3339 is how the statement writes times.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
