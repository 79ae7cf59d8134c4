package batchreport

import (
	"fmt"

	"github.com/fabric-runtime/fabric/contract"
)

// fixture is 6 tasks x 3 configs x 3 repeats with passes, failures,
// timeouts, every error class, a cancelled, a skipped and two pending
// trials, reported, priced and unknown costs.
func fixture() Input {
	tasks := []string{"fix-the-off-by-one-error-in-the-pagination-module", "add-cli-flag", "parse-dates", "rename-api", "<b>html-task</b>", "flaky-network"}
	configs := []string{"codex-gpt5", "claude-sonnet", "scripted-baseline"}
	spec := contract.BatchSpec{
		SchemaVersion: contract.BatchSchemaVersion,
		Metadata:      contract.BatchMetadata{Name: "nightly-coding"},
		Repeats:       3,
		Report:        &contract.ReportOptions{K: []int{1, 2, 3}, Baseline: "scripted-baseline"},
	}
	for _, c := range configs {
		spec.Configs = append(spec.Configs, contract.BatchConfig{ID: c, Config: c + ".yaml"})
	}
	in := Input{Spec: spec, SpecDigest: "sha256:4f1c0de5e1ab", FabricVersion: "v0.14.0-test"}
	errClasses := []string{contract.ErrorClassModel, contract.ErrorClassHarness, contract.ErrorClassSetup, contract.ErrorClassGrader, contract.ErrorClassFabric}
	n := 0
	for r := 1; r <= 3; r++ {
		for ti, task := range tasks {
			for ci, cfg := range configs {
				id := fmt.Sprintf("%s__%s__r%02d", task, cfg, r)
				in.Planned = append(in.Planned, PlannedTrial{ID: id, Task: task, Config: cfg, Repeat: r})
				n++
				if ti == 5 && ci == 1 && r >= 2 {
					continue // pending
				}
				dir := fmt.Sprintf("trials/%s/%s/r%02d", task, cfg, r)
				t := contract.BatchTrial{
					SchemaVersion: contract.BatchTrialSchemaVersion, Batch: spec.Metadata.Name, TrialID: id,
					Task: task, Config: cfg, Repeat: r, Digest: fmt.Sprintf("sha256:%04x", n), Attempts: 1,
					Harness: []string{"codex", "claude-code", "fabric.scripted"}[ci], AdapterID: []string{"fabric.codex", "fabric.claude", "fabric.scripted"}[ci],
					Model: []string{"gpt-5", "claude-sonnet-4", "stub"}[ci], Host: "local", RuntimeIDs: []string{fmt.Sprintf("rt-%d", n)},
					Paths: contract.TrialPaths{Dir: dir, RunResult: dir + "/attempts/1/run_result.json", Output: dir + "/output.txt"},
				}
				start := int64(1767225600000) + int64(n)*4000
				dur := 20 + float64((n*37)%50) + float64(ci)*15
				t.Timings = contract.TrialTimings{QueuedMillis: start - 500, StartedMillis: start, EndedMillis: start + int64(dur*1000),
					DurationSeconds: dur, SetupSeconds: 2, RunSeconds: dur - 5, GradeSeconds: 3}
				// Difficulty grows with the task index; configs differ in skill.
				skill := []int{5, 4, 2}[ci]
				pass := (ti+r+ci)%6 < skill-ti/2
				switch {
				case ti == 4 && ci == 0 && r == 2:
					t.Outcome, t.Reason = contract.TrialCancelled, "interrupted"
				case ti == 3 && ci == 2 && r == 3:
					t.Outcome, t.Reason = contract.TrialSkipped, "budget"
				case (ti+ci*2+r)%7 == 0:
					class := errClasses[(ti+r)%len(errClasses)]
					t.Outcome = contract.TrialErrored
					t.Error = &contract.TrialError{Class: class, Code: class + "_failed", Stage: "run", Message: "it broke, \"quoted\", with a comma", Retryable: class == contract.ErrorClassModel}
					t.Attempts = 2
					t.History = []contract.AttemptNote{{Attempt: 1, Outcome: contract.TrialErrored, Error: t.Error}}
				case pass:
					t.Outcome = contract.TrialPassed
					rw := 1.0
					t.Reward = &rw
				default:
					t.Outcome = contract.TrialFailed
					rw := 0.25
					t.Reward, t.Rewards = &rw, map[string]float64{"tests": 0.25, "lint": 1}
					t.TimedOut = (ti+r)%4 == 0
				}
				if t.Outcome != contract.TrialSkipped {
					t.Usage = &contract.TrialUsage{InputTokens: int64(12000 + 900*ti + 3000*ci), CachedInputTokens: int64(4000 * ci), OutputTokens: int64(800 + 50*ti)}
				}
				switch ci {
				case 0:
					c := 0.0123 * float64(1+ti)
					t.CostUSD, t.CostSource = &c, contract.CostReported
				case 1:
					c := 0.0311 + 0.001*float64(r)
					t.CostUSD, t.CostSource = &c, contract.CostPriced
				default:
					t.CostSource = contract.CostUnknown
				}
				if t.Outcome == contract.TrialSkipped {
					t.Timings = contract.TrialTimings{}
				}
				in.Trials = append(in.Trials, t)
			}
		}
	}
	return in
}
