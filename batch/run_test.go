package batch_test

import (
	"context"
	"path/filepath"
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
