package batch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/batch"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

// itemsSpec is a spec of n inline tasks named t01..tNN with the given
// configs block and extra top-level YAML.
func itemsSpec(n int, configs, extra string) string {
	var b strings.Builder
	b.WriteString("schema_version: fabric.batch/v1alpha1\nmetadata: {name: t}\ntasks:\n  items:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "    - {id: t%02d, input: {text: \"task %d\"}}\n", i, i)
	}
	b.WriteString("configs:\n" + configs + extra)
	return b.String()
}

func run(t *testing.T, dir string, opts batch.Options) (*batch.Runner, batch.Stats, []contract.BatchTrial) {
	t.Helper()
	r := open(t, filepath.Join(dir, "batch.yaml"), filepath.Join(dir, "run"), opts)
	st, err := r.Run(context.Background(), batch.RunOptions{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	recs, err := r.Records()
	if err != nil {
		t.Fatal(err)
	}
	return r, st, recs
}

// maxOverlap is the most runs (start to run end) in flight at one time.
func maxOverlap(recs []contract.BatchTrial, keep func(contract.BatchTrial) bool) int {
	type ev struct {
		at    int64
		delta int
	}
	var evs []ev
	for _, r := range recs {
		if keep != nil && !keep(r) {
			continue
		}
		evs = append(evs, ev{r.Timings.StartedMillis, 1}, ev{r.Timings.EndedMillis, -1})
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].at != evs[j].at {
			return evs[i].at < evs[j].at
		}
		return evs[i].delta < evs[j].delta
	})
	cur, most := 0, 0
	for _, e := range evs {
		cur += e.delta
		most = max(most, cur)
	}
	return most
}

func TestConcurrencyLimits(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"slow.yaml": scriptedConfig("done", "    delay_ms: 300\n"),
		"batch.yaml": itemsSpec(6, "  - {id: a, config: slow.yaml}\n  - {id: b, config: slow.yaml}\n",
			"grader: {kind: none}\nlimits: {concurrency: 3, per_config: {b: 1}}\n"),
	})
	_, st, recs := run(t, dir, batch.Options{})
	if st.Committed != 12 || len(recs) != 12 {
		t.Fatalf("committed %d, records %d, want 12", st.Committed, len(recs))
	}
	if got := maxOverlap(recs, nil); got > 3 {
		t.Errorf("%d trials in flight at once, want at most 3", got)
	}
	if got := maxOverlap(recs, func(r contract.BatchTrial) bool { return r.Config == "b" }); got != 1 {
		t.Errorf("%d trials of config b in flight at once, want 1 (per_config)", got)
	}
	if got := maxOverlap(recs, func(r contract.BatchTrial) bool { return r.Config == "a" }); got < 2 {
		t.Errorf("config a never ran two trials at once (got %d): the global cap is 3, b's cap is 1", got)
	}
	for _, r := range recs {
		if r.Outcome != contract.TrialPassed {
			t.Errorf("%s: %s %+v", r.TrialID, r.Outcome, r.Error)
		}
	}
}

func TestCommandGrader(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"agent.yaml": scriptedConfig("{input}", ""),
		// The agent's answer is the exit code the grader uses; 3 writes
		// a reward file instead.
		"grade.sh": `#!/bin/sh
test -d "$FABRIC_WORKSPACE/tests" && { echo "tests in the workspace" >&2; exit 2; }
test -f "$FABRIC_TESTS_DIR/expected" || { echo "tests not copied" >&2; exit 2; }
code=$(cat "$FABRIC_OUTPUT_FILE")
if [ "$code" = 3 ]; then echo '{"reward": 0.5, "style": 2}' > reward.json; exit 0; fi
exit "$code"
`,
		"tasks/pass/prompt.md":        "0",
		"tasks/pass/tests/expected":   "x",
		"tasks/fail/prompt.md":        "1",
		"tasks/fail/tests/expected":   "x",
		"tasks/broken/prompt.md":      "2",
		"tasks/broken/tests/expected": "x",
		"tasks/reward/prompt.md":      "3",
		"tasks/reward/tests/expected": "x",
		"tasks/reward/task.yaml":      "grader: {kind: command, command: [sh, \"{task_dir}/../../grade.sh\"], reward: {file: reward.json, pass_threshold: 0.5}}\n",
		"batch.yaml": `schema_version: fabric.batch/v1alpha1
metadata: {name: g}
tasks: {dir: tasks}
configs: [{id: a, config: agent.yaml}]
grader: {kind: command, command: [sh, "{task_dir}/../../grade.sh"]}
retry: {max_attempts: 3, classes: [grader]}
`,
	})
	_, st, recs := run(t, dir, batch.Options{})
	got := map[string]string{}
	for _, r := range recs {
		s := r.Outcome
		if r.Error != nil {
			s += ":" + r.Error.Class
		}
		got[r.Task] = s
		if r.Task == "reward" {
			if r.Reward == nil || *r.Reward != 0.5 || r.Rewards["style"] != 2 {
				t.Errorf("reward trial: reward %v rewards %v, want 0.5 and style 2", r.Reward, r.Rewards)
			}
		}
	}
	want := map[string]string{"pass": "passed", "fail": "failed", "broken": "error:grader", "reward": "passed"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("task %s: %s, want %s", k, got[k], v)
		}
	}
	// A grader error is retried (its class is listed); graded trials never.
	for _, r := range recs {
		wantAttempts := 1
		if r.Task == "broken" {
			wantAttempts = 3
		}
		if r.Attempts != wantAttempts {
			t.Errorf("%s: %d attempts, want %d", r.TrialID, r.Attempts, wantAttempts)
		}
	}
	if st.Retries != 2 {
		t.Errorf("%d retries, want 2", st.Retries)
	}
}

func TestTimeoutIsGraded(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"hang.yaml": scriptedConfig("never", "    mode: hang\n"),
		"batch.yaml": itemsSpec(1, "  - {id: h, config: hang.yaml}\n",
			"grader: {kind: command, command: [sh, -c, \"echo graded > $FABRIC_TRIAL_DIR/graded; exit 1\"]}\nlimits: {run_timeout_seconds: 1}\nretry: {max_attempts: 3}\n"),
	})
	r, _, recs := run(t, dir, batch.Options{})
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	rec := recs[0]
	if !rec.TimedOut || rec.Outcome != contract.TrialFailed || rec.Attempts != 1 {
		t.Fatalf("record: timed_out %v outcome %s attempts %d error %+v; want timed out, failed by the grader, one attempt", rec.TimedOut, rec.Outcome, rec.Attempts, rec.Error)
	}
	if _, err := os.Stat(filepath.Join(r.Dir(), rec.Paths.Dir, "attempts/1/graded")); err != nil {
		t.Errorf("the grader did not run: %v", err)
	}
	for _, id := range rec.RuntimeIDs {
		if pids := testproc.Mentioning(id); len(pids) > 0 {
			t.Errorf("processes of runtime %s are left: %v", id, pids)
		}
	}
}

func TestInfraRetry(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "first-attempt-done")
	// The first attempt of every trial fails in setup (an infrastructure
	// error); the second passes setup.
	spec := itemsSpec(1, "  - {id: a, config: agent.yaml}\n  - {id: f, config: agent.yaml, overrides: {harness.settings.response: \"no\"}}\n",
		"grader: {kind: output_match, match: {equals: ok}}\nretry: {max_attempts: 3, backoff: {initial_seconds: 0.01}}\n")
	spec = strings.Replace(spec, `input: {text: "task 1"}}`, fmt.Sprintf(`input: {text: "task 1"}, workspace: {setup: ["test -f %[1]s-$(basename $(dirname $(dirname $(dirname $(dirname $PWD)))))/x || { mkdir -p %[1]s-$(basename $(dirname $(dirname $(dirname $(dirname $PWD))))); touch %[1]s-$(basename $(dirname $(dirname $(dirname $(dirname $PWD)))))/x; exit 1; }"]}}`, marker), 1)
	files(t, dir, map[string]string{"agent.yaml": scriptedConfig("ok", ""), "batch.yaml": spec})
	_, st, recs := run(t, dir, batch.Options{})
	byConfig := map[string]contract.BatchTrial{}
	for _, r := range recs {
		byConfig[r.Config] = r
	}
	a, f := byConfig["a"], byConfig["f"]
	if a.Outcome != contract.TrialPassed || a.Attempts != 2 || len(a.History) != 1 || a.History[0].Error.Class != contract.ErrorClassSetup {
		t.Errorf("config a: outcome %s attempts %d history %+v; want passed on attempt 2 after a setup error", a.Outcome, a.Attempts, a.History)
	}
	if f.Outcome != contract.TrialFailed || f.Attempts != 2 {
		t.Errorf("config f: outcome %s attempts %d; want failed on attempt 2 (the failure is graded, so never retried)", f.Outcome, f.Attempts)
	}
	if st.Retries != 2 {
		t.Errorf("%d retries, want 2", st.Retries)
	}
}

func TestQuotaSpacing(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"agent.yaml": scriptedConfig("ok", ""),
		"batch.yaml": itemsSpec(4, "  - {id: a, config: agent.yaml, quota_key: A}\n  - {id: b, config: agent.yaml, quota_key: B}\n",
			"grader: {kind: none}\nlimits:\n  concurrency: 8\n  quotas:\n    - {key: A, runs_per_minute: 120}\n    - {key: B, max_in_flight: 1}\n"),
	})
	_, _, recs := run(t, dir, batch.Options{})
	var starts []int64
	for _, r := range recs {
		if r.QuotaKey == "A" {
			starts = append(starts, r.Timings.StartedMillis)
		}
	}
	slices.Sort(starts)
	for i := 1; i < len(starts); i++ {
		if gap := starts[i] - starts[i-1]; gap < 450 {
			t.Errorf("key A starts %d ms apart, want >= 500 ms (120 runs/min)", gap)
		}
	}
	if got := maxOverlap(recs, func(r contract.BatchTrial) bool { return r.QuotaKey == "B" }); got != 1 {
		t.Errorf("key B ran %d trials at once, want 1 (max_in_flight)", got)
	}
}

func TestBudgetSkips(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"agent.yaml": `schema_version: fabric.agent/v1alpha1
metadata: {name: priced}
runtime: {timeout_seconds: 60}
harness:
  adapter_id: fabric.scripted
  settings: {response: ok, usage: {input_tokens: 1000000, output_tokens: 0}}
models:
  default: {provider: stub, model: m1}
`,
		"batch.yaml": itemsSpec(5, "  - {id: a, config: agent.yaml}\n",
			"grader: {kind: none}\nlimits: {concurrency: 1, budget_usd: 2.5}\npricing: [{model: m1, input_per_mtok: 1, output_per_mtok: 1}]\n"),
	})
	_, _, recs := run(t, dir, batch.Options{})
	var passed, skipped int
	for _, r := range recs {
		switch r.Outcome {
		case contract.TrialPassed:
			passed++
			if r.CostSource != contract.CostPriced || r.CostUSD == nil || *r.CostUSD != 1 {
				t.Errorf("%s: cost %v (%s), want 1 priced", r.TrialID, r.CostUSD, r.CostSource)
			}
		case contract.TrialSkipped:
			skipped++
			if r.Reason != "budget" {
				t.Errorf("%s skipped for %q, want budget", r.TrialID, r.Reason)
			}
		}
	}
	if passed != 3 || skipped != 2 {
		t.Errorf("%d passed, %d skipped; want 3 and 2 (the third trial reaches $3 >= $2.50)", passed, skipped)
	}
}

func TestConfigTimeoutIsGraded(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"hang.yaml": strings.Replace(scriptedConfig("never", "    mode: hang\n"), "timeout_seconds: 60", "timeout_seconds: 1", 1),
		"batch.yaml": itemsSpec(1, "  - {id: h, config: hang.yaml}\n",
			"grader: {kind: command, command: [sh, -c, \"exit 1\"]}\nretry: {max_attempts: 3, classes: [harness]}\n"),
	})
	_, _, recs := run(t, dir, batch.Options{})
	if len(recs) != 1 || !recs[0].TimedOut || recs[0].Outcome != contract.TrialFailed || recs[0].Attempts != 1 {
		t.Fatalf("records %+v; want one timed-out trial failed by its grader, never retried", recs)
	}
}
