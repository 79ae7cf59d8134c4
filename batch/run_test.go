package batch_test

import (
	"context"
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
