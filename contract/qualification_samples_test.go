package contract_test

import "github.com/fabric-runtime/fabric/contract"

func sampleQualificationStatements() []any {
	sum := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	return []any{contract.QualificationStatement{
		Type: contract.InTotoStatementV1,
		Subject: []contract.StatementSubject{
			{Name: "package:fabric.scripted@1", Digest: map[string]string{"sha256": sum}},
			{Name: "adapter-descriptor", Digest: map[string]string{"sha256": sum}},
			{Name: "fabric-host", Digest: map[string]string{"sha256": sum}},
		},
		PredicateType: contract.QualificationPredicateV1,
		Predicate: contract.QualificationPredicate{
			Package:     contract.QualifiedPackage{ID: "fabric.scripted", Version: "1", Contract: contract.PackageV1Alpha1},
			Platform:    "linux-x86_64",
			Suite:       contract.QualificationSuite{Name: "fabric-conformance", Version: "0.9.0", Profile: contract.Digest{SHA256: sum}},
			Environment: contract.QualificationEnvironment{OS: "linux", Kernel: "6.18.44", Arch: "x86_64", Fabric: contract.FabricVersion{Version: "0.9.0"}},
			Run:         contract.QualificationRun{StartedOn: "2026-12-02T06:00:00Z", FinishedOn: "2026-12-02T06:00:09Z"},
			Results: []contract.QualificationResult{{
				ID: "12", Name: "cleanup", Tier: contract.TierMandatory, Verdict: contract.QualificationPass, ElapsedMS: 840,
				EvidenceLevel: contract.EvidenceObserved,
				Claim:         &contract.QualificationClaim{By: "executor:fabric-host@sha256:" + sum, Statement: "stopped"},
				Observation:   &contract.QualificationObservation{By: "observer:fabric.conformance/procscan@0.9.0", Method: "proc-table+filesystem", Result: "no live process", Agrees: true},
				Evidence:      []contract.QualificationEvidence{{Name: "conformance-item.json", Digest: map[string]string{"sha256": sum}, MediaType: "application/json"}},
			}},
			Summary: contract.QualificationSummary{Result: "PASSED", PassedTests: []string{"12"}, FailedTests: []string{}, WarnedTests: []string{}, NotTested: []string{},
				Counts: map[string]int{"pass": 1, "fail": 0, "skip": 0, "not_tested": 0}},
			Verdict: contract.QualificationVerdict{Qualified: true, Rule: contract.QualificationRuleV1},
		},
	}}
}
