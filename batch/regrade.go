package batch

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fabric-runtime/fabric/contract"
)

// Regrade runs the graders again on every trial whose run ended (graded,
// or a grader error) and whose workspace was kept (keep_workspaces), and
// commits the new grade with the new grader's digest; the agent does not
// run again. Open the runner with Options.Regrade, so that a changed
// grader is accepted. It returns how many trials it regraded.
func (r *Runner) Regrade(ctx context.Context) (int, error) {
	n := 0
	for _, t := range r.trials {
		rec, err := r.ReadTrial(t)
		if err != nil {
			return n, err
		}
		if rec == nil || rec.Paths.Workspace == "" {
			continue
		}
		graded := rec.Outcome == contract.TrialPassed || rec.Outcome == contract.TrialFailed
		graderErr := rec.Outcome == contract.TrialErrored && rec.Error != nil && rec.Error.Class == contract.ErrorClassGrader
		if !graded && !graderErr {
			continue
		}
		adir := filepath.Join(t.Dir, "attempts", strconv.Itoa(rec.Attempts))
		abs := filepath.Join(r.dir, adir)
		var res *contract.RunResult
		if b, err := os.ReadFile(filepath.Join(abs, "run_result.json")); err == nil {
			res = &contract.RunResult{}
			if err := json.Unmarshal(b, res); err != nil {
				return n, err
			}
		}
		out, _ := os.ReadFile(filepath.Join(abs, "output.txt"))
		task := r.task(t.Task)
		g, gerr := r.grade(ctx, t, task, res, string(out), filepath.Join(r.dir, rec.Paths.Workspace), abs, adir, rec)
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		applyGrade(rec, g, gerr)
		rec.Digest = t.Digest // the new grader's
		if err := r.Commit(*rec); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
