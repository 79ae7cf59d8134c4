package batch_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/batch"
	"github.com/fabric-runtime/fabric/contract"
)

func TestRunScripted(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"echo.yaml": scriptedConfig("answer: {input}", ""),
		"batch.yaml": `schema_version: fabric.batch/v1alpha1
metadata: {name: smoke}
tasks:
  items:
    - id: hello
      input: {text: "hello"}
    - id: bye
      input: {text: "bye"}
      grader: {kind: output_match, match: {contains: "nope"}}
configs:
  - {id: echo, config: echo.yaml}
repeats: 2
grader: {kind: output_match, match: {contains: hello}}
`,
	})
	r := open(t, filepath.Join(dir, "batch.yaml"), filepath.Join(dir, "run"), batch.Options{})
	st, err := r.Run(context.Background(), batch.RunOptions{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if st.Committed != 4 {
		t.Fatalf("committed %d, want 4: %+v", st.Committed, st)
	}
	got := outcomes(t, r)
	if got[contract.TrialPassed] != 2 || got[contract.TrialFailed] != 2 {
		t.Fatalf("outcomes %v, want 2 passed 2 failed", got)
	}
}

func TestRegradeWithAFixedGrader(t *testing.T) {
	dir := t.TempDir()
	spec := func(want string) string {
		return `schema_version: fabric.batch/v1alpha1
metadata: {name: rg}
tasks: {items: [{id: a, input: {text: "alpha"}}, {id: b, input: {text: "beta"}}]}
configs: [{id: echo, config: echo.yaml}]
grader: {kind: command, command: [sh, -c, "grep -q ` + want + ` $FABRIC_OUTPUT_FILE"]}
keep_workspaces: always
`
	}
	files(t, dir, map[string]string{"echo.yaml": scriptedConfig("answer: {input}", ""), "batch.yaml": spec("nothing")})
	r := open(t, filepath.Join(dir, "batch.yaml"), filepath.Join(dir, "run"), batch.Options{})
	if _, err := r.Run(context.Background(), batch.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := outcomes(t, r); got[contract.TrialFailed] != 2 {
		t.Fatalf("outcomes %v, want 2 failed with the wrong grader", got)
	}
	r.Close()
	// The grader is fixed: a run refuses the directory, a regrade takes it.
	files(t, dir, map[string]string{"batch.yaml": spec("answer")})
	s, err := batch.Load(filepath.Join(dir, "batch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := batch.Open(context.Background(), s, filepath.Join(dir, "run"), batch.Options{}); err == nil {
		t.Fatal("Open accepted a changed grader without --rerun-changed")
	}
	rg := open(t, filepath.Join(dir, "batch.yaml"), filepath.Join(dir, "run"), batch.Options{Regrade: true})
	n, err := rg.Regrade(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("Regrade: %d, %v; want 2 regraded", n, err)
	}
	if got := outcomes(t, rg); got[contract.TrialPassed] != 2 {
		t.Fatalf("outcomes after regrade %v, want 2 passed", got)
	}
	rg.Close()
	// The records now carry the new digests: a run has nothing to do.
	again := open(t, filepath.Join(dir, "batch.yaml"), filepath.Join(dir, "run"), batch.Options{})
	st, err := again.Run(context.Background(), batch.RunOptions{})
	if err != nil || st.Started != 0 {
		t.Errorf("run after regrade: started %d, %v; want nothing to run", st.Started, err)
	}
	again.Close()
	// A changed config is no regrade.
	files(t, dir, map[string]string{"echo.yaml": scriptedConfig("other: {input}", "")})
	s2, _ := batch.Load(filepath.Join(dir, "batch.yaml"))
	if _, err := batch.Open(context.Background(), s2, filepath.Join(dir, "run"), batch.Options{Regrade: true}); err == nil || !strings.Contains(err.Error(), "regrade runs the graders again") {
		t.Errorf("Open for regrade after a config change: %v, want batch_spec_changed", err)
	}
}

// lengthGrader is an SDK grader: a trial passes when the output is longer
// than min characters; its reward is the length.
type lengthGrader struct{ min int }

func (g lengthGrader) Grade(_ context.Context, in batch.GradeInput) (batch.Grade, error) {
	n := float64(len(in.Output))
	return batch.Grade{Passed: len(in.Output) > g.min, Reward: &n}, nil
}

func TestGoGrader(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"echo.yaml": scriptedConfig("{input}", ""),
		"batch.yaml": `schema_version: fabric.batch/v1alpha1
metadata: {name: gog}
tasks: {items: [{id: short, input: {text: "hi"}}, {id: long, input: {text: "a longer answer"}}]}
configs: [{id: echo, config: echo.yaml}]
grader: {kind: none}
`,
	})
	r := open(t, filepath.Join(dir, "batch.yaml"), filepath.Join(dir, "run"), batch.Options{Grader: lengthGrader{min: 5}})
	if _, err := r.Run(context.Background(), batch.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	recs, _ := r.Records()
	for _, rec := range recs {
		want := rec.Task == "long"
		if (rec.Outcome == contract.TrialPassed) != want || rec.Reward == nil {
			t.Errorf("%s: %s reward %v", rec.Task, rec.Outcome, rec.Reward)
		}
	}
}

// A runner killed between a trial's commit point (trial.json) and its line
// in results.jsonl left the trial done but unlisted, and a resume skipped
// it: results.jsonl stayed one line short for good. Opening the directory
// again lists every committed trial once, and drops a torn last line.
func TestOpenRepairsResults(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"echo.yaml": scriptedConfig("answer: {input}", ""),
		"batch.yaml": `schema_version: fabric.batch/v1alpha1
metadata: {name: repair}
tasks: {items: [{id: a, input: {text: "a"}}, {id: b, input: {text: "b"}}]}
configs: [{id: echo, config: echo.yaml}]
repeats: 2
grader: {kind: output_match, match: {contains: answer}}
`,
	})
	run := filepath.Join(dir, "run")
	r := open(t, filepath.Join(dir, "batch.yaml"), run, batch.Options{})
	if _, err := r.Run(context.Background(), batch.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	results := filepath.Join(run, "results.jsonl")
	full := resultLines(t, results)
	if len(full) != 4 {
		t.Fatalf("%d result lines after the run, want 4", len(full))
	}
	for _, tc := range []struct {
		name string
		file string
	}{
		{"last line missing", strings.Join(full[:3], "")},
		{"two lines missing", full[0] + full[2]},
		{"torn last line", strings.Join(full[:3], "") + full[3][:10]},
		{"empty", ""},
		{"complete", strings.Join(full, "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(results, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			for range 2 { // a second open changes nothing
				open(t, filepath.Join(dir, "batch.yaml"), run, batch.Options{}).Close()
				got := resultLines(t, results)
				if len(got) != 4 {
					t.Fatalf("%d result lines after open, want 4:\n%s", len(got), strings.Join(got, ""))
				}
				seen := map[string]bool{}
				for _, l := range got {
					var e struct {
						TrialID string `json:"trial_id"`
						Path    string `json:"path"`
					}
					if err := json.Unmarshal([]byte(l), &e); err != nil {
						t.Fatalf("line %q: %v", l, err)
					}
					if seen[e.TrialID] {
						t.Fatalf("%s listed twice", e.TrialID)
					}
					seen[e.TrialID] = true
				}
			}
		})
	}
}

// resultLines reads results.jsonl as lines, each with its newline.
func resultLines(t *testing.T, p string) []string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
}
