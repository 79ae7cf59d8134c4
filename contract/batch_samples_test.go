package contract_test

import (
	"encoding/json"

	"github.com/fabric-runtime/fabric/contract"
)

func sampleBatchSpecs() []any {
	gate := 0.8
	return []any{
		contract.BatchSpec{
			SchemaVersion: contract.BatchSchemaVersion,
			Metadata:      contract.BatchMetadata{Name: "smoke"},
			Tasks:         contract.BatchTasks{Items: []contract.BatchTask{{ID: "t1", Input: &contract.TaskInput{Text: "hi"}}}},
			Configs:       []contract.BatchConfig{{ID: "a", Config: "a.yaml", Overrides: map[string]json.RawMessage{"model.name": json.RawMessage(`"m"`)}}},
			Repeats:       3,
			Grader:        &contract.GraderSpec{Kind: contract.GraderCommand, Command: []string{"sh", "-c", "test -f ok"}},
			Pricing:       []contract.ModelPrice{{Model: "m", InputPerMTok: 1, OutputPerMTok: 2}},
			Report:        &contract.ReportOptions{K: []int{1, 3}, CI: &contract.CIOptions{Method: "auto", Level: 0.95, Resamples: 2000, Seed: 1}, CompletionGate: &gate},
		},
		contract.BatchSpec{
			SchemaVersion: contract.BatchSchemaVersion,
			Metadata:      contract.BatchMetadata{Name: "minimal"},
			Configs:       []contract.BatchConfig{{ID: "a"}},
		},
	}
}

func sampleBatchTrials() []any {
	cost := 0.0123
	return []any{
		contract.BatchTrial{
			SchemaVersion: contract.BatchTrialSchemaVersion, Batch: "smoke", TrialID: "t1__a__r01", Task: "t1", Config: "a", Repeat: 1,
			Digest: "sha256:00", Outcome: contract.TrialPassed, Attempts: 2, CostUSD: &cost, CostSource: contract.CostPriced,
			Timings: contract.TrialTimings{StartedMillis: 1000, EndedMillis: 3000, DurationSeconds: 2, RunSeconds: 1.5},
			Usage:   &contract.TrialUsage{InputTokens: 10, OutputTokens: 5},
			Paths:   contract.TrialPaths{Dir: "trials/t1/a/r01"},
			History: []contract.AttemptNote{{Attempt: 1, Outcome: contract.TrialErrored, Error: &contract.TrialError{Class: contract.ErrorClassModel, Code: "model_overloaded", Message: "529", Retryable: true}}},
		},
		contract.BatchTrial{
			SchemaVersion: contract.BatchTrialSchemaVersion, Batch: "smoke", TrialID: "t1__a__r02", Task: "t1", Config: "a", Repeat: 2,
			Outcome: contract.TrialErrored, Attempts: 1, CostSource: contract.CostUnknown,
			Error: &contract.TrialError{Class: contract.ErrorClassHarness, Code: "host_crashed", Message: "exit 2"},
			Paths: contract.TrialPaths{Dir: "trials/t1/a/r02"},
		},
	}
}

func sampleBatchSummaries() []any {
	f := func(v float64) *float64 { return &v }
	return []any{
		contract.BatchSummary{
			SchemaVersion: contract.BatchSummarySchemaVersion, Batch: "smoke", SpecDigest: "sha256:00", FabricVersion: "dev",
			StartedMillis: 1000, EndedMillis: 3000, WallSeconds: 2, Repeats: 2, K: []int{1, 2},
			CI:     contract.BatchCISummary{Method: "bootstrap", Level: 0.95, Resamples: 2000, Seed: 1},
			Totals: contract.BatchCounts{Planned: 2, Scored: 1, Passed: 1, Errored: 1},
			Configs: []contract.BatchConfigSummary{{
				Config: "a", BatchCounts: contract.BatchCounts{Planned: 2, Scored: 1, Passed: 1, Errored: 1}, Tasks: 1,
				Errors: map[string]int{"harness": 1}, Retries: 1,
				PassAt1:   contract.BatchPassAt1{Strict: f(0.5), Scored: f(1), CILow: f(0.5), CIHigh: f(0.5), SE: f(0), Method: "bootstrap"},
				PassAtK:   map[string]float64{"1": 1},
				DurationS: &contract.BatchQuantiles{N: 1, P50: 2, P90: 2, P99: 2},
				Tokens:    &contract.BatchTokens{N: 1, Input: 10, Output: 5},
				CostUSD:   contract.BatchCost{Total: f(0.0123), PerTrial: f(0.0123), PerPass: f(0.0123), SourceCounts: map[string]int{"priced": 1, "unknown": 1}},
			}},
			Pairs:      []contract.BatchPairSummary{},
			Tasks:      []contract.BatchTaskSummary{{Task: "t1", PerConfig: map[string]contract.BatchTaskCell{"a": {Passes: 1, Trials: 1, Errors: 1, Planned: 2}}}},
			Completion: contract.BatchCompletion{Fraction: 0.5, Gate: 0.9},
		},
	}
}
