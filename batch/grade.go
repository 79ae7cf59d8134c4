package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

// Grade is a grader's verdict on one trial.
type Grade struct {
	Passed  bool
	Reward  *float64
	Rewards map[string]float64
}

// GradeInput is what a grader sees of a finished run.
type GradeInput struct {
	Trial     Trial
	Task      contract.BatchTask
	Result    *contract.RunResult // nil when the run gave no result (a timeout before any)
	Output    string              // the final output as text
	Workspace string              // the trial's workspace, absolute
	TrialDir  string              // the attempt's directory, absolute
	TestsDir  string              // the task's tests/ copied into the attempt, "" if none
}

// Grader grades trials in Go (Options.Grader), instead of the spec's
// graders. An error is a grader error (error class grader), not a failed
// trial.
type Grader interface {
	Grade(ctx context.Context, in GradeInput) (Grade, error)
}

// defaultGraderTimeout bounds a command grader without timeout_seconds.
const defaultGraderTimeout = 300 * time.Second

// grade copies the task's tests/ into the attempt and runs the grader.
func (r *Runner) grade(ctx context.Context, t Trial, task contract.BatchTask, res *contract.RunResult, output, ws, abs, adir string, rec *contract.BatchTrial) (Grade, error) {
	in := GradeInput{Trial: t, Task: task, Result: res, Output: output, Workspace: ws, TrialDir: abs}
	if task.Dir != "" && exists(filepath.Join(task.Dir, "tests")) {
		in.TestsDir = filepath.Join(abs, "tests")
		if err := copyTree(filepath.Join(task.Dir, "tests"), in.TestsDir); err != nil {
			return Grade{}, fmt.Errorf("copying tests: %w", err)
		}
	}
	if r.opts.Grader != nil {
		return r.opts.Grader.Grade(ctx, in)
	}
	g := r.spec.effectiveGrader(task)
	switch g.Kind {
	case contract.GraderOutputMatch:
		return matchOutput(g.Match, output)
	case contract.GraderNone:
		return Grade{Passed: res != nil && res.Status == contract.StatusSucceeded}, nil
	}
	rec.Paths.GraderLog = filepath.Join(adir, "grader.log")
	return runCommandGrader(ctx, g, in)
}

func matchOutput(m *contract.OutputMatch, output string) (Grade, error) {
	out := strings.TrimSpace(output)
	eq, contains := strings.TrimSpace(m.Equals), m.Contains
	if m.IgnoreCase {
		out, eq, contains = strings.ToLower(out), strings.ToLower(eq), strings.ToLower(contains)
	}
	pass := true
	if m.Equals != "" && out != eq {
		pass = false
	}
	if m.Contains != "" && !strings.Contains(out, contains) {
		pass = false
	}
	if m.Regex != "" {
		expr := m.Regex
		if m.IgnoreCase {
			expr = "(?i)" + expr
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return Grade{}, err
		}
		if !re.MatchString(strings.TrimSpace(output)) {
			pass = false
		}
	}
	reward := 0.0
	if pass {
		reward = 1
	}
	return Grade{Passed: pass, Reward: &reward}, nil
}

// runCommandGrader runs the grader command in the workspace. Exit 0
// passes and 1 fails, unless a reward file decides; any other exit, a
// timeout or a missing reward file is a grader error.
func runCommandGrader(ctx context.Context, g *contract.GraderSpec, in GradeInput) (Grade, error) {
	timeout := defaultGraderTimeout
	if g.TimeoutSeconds > 0 {
		timeout = time.Duration(g.TimeoutSeconds * float64(time.Second))
	}
	gctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	repl := strings.NewReplacer("{task_dir}", in.Task.Dir, "{workspace}", in.Workspace, "{trial_dir}", in.TrialDir, "{tests_dir}", in.TestsDir)
	args := make([]string, len(g.Command))
	for i, a := range g.Command {
		args[i] = repl.Replace(a)
	}
	log, err := os.Create(filepath.Join(in.TrialDir, "grader.log"))
	if err != nil {
		return Grade{}, err
	}
	defer log.Close()
	outFile := filepath.Join(in.TrialDir, "output.txt")
	if _, err := os.Stat(outFile); err != nil {
		_ = os.WriteFile(outFile, []byte(in.Output), 0o644)
	}
	cmd := exec.CommandContext(gctx, args[0], args[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = in.Workspace, log, log
	cmd.Env = append(os.Environ(),
		"FABRIC_TRIAL_DIR="+in.TrialDir, "FABRIC_WORKSPACE="+in.Workspace, "FABRIC_OUTPUT_FILE="+outFile,
		"FABRIC_RESULT_FILE="+filepath.Join(in.TrialDir, "run_result.json"), "FABRIC_TASK_DIR="+in.Task.Dir,
		"FABRIC_TESTS_DIR="+in.TestsDir, "FABRIC_TRIAL_ID="+in.Trial.ID)
	groupKill(cmd)
	runErr := cmd.Run()
	if gctx.Err() != nil && ctx.Err() == nil {
		return Grade{}, fmt.Errorf("the grader did not finish within %s", timeout)
	}
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(runErr, &ee):
		code = ee.ExitCode()
	case runErr != nil:
		return Grade{}, fmt.Errorf("cannot run the grader: %w", runErr)
	}
	if g.Reward != nil {
		if code != 0 && code != 1 {
			return Grade{}, fmt.Errorf("the grader exited %d (see grader.log)", code)
		}
		return readReward(g.Reward, in)
	}
	switch code {
	case 0:
		one := 1.0
		return Grade{Passed: true, Reward: &one}, nil
	case 1:
		zero := 0.0
		return Grade{Passed: false, Reward: &zero}, nil
	}
	return Grade{}, fmt.Errorf("the grader exited %d: 0 is pass, 1 is fail, anything else a grader error (see grader.log)", code)
}

// readReward reads {"reward": R, "other": N, ...} (or a number in a .txt
// file) from the reward file, relative to the workspace or, failing that,
// to the attempt's directory.
func readReward(spec *contract.RewardSpec, in GradeInput) (Grade, error) {
	path := spec.File
	if !filepath.IsAbs(path) {
		path = filepath.Join(in.Workspace, spec.File)
		if !exists(path) {
			path = filepath.Join(in.TrialDir, spec.File)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Grade{}, fmt.Errorf("the grader wrote no reward file %s", spec.File)
	}
	threshold := 1.0
	if spec.PassThreshold != nil {
		threshold = *spec.PassThreshold
	}
	var reward float64
	rewards := map[string]float64{}
	if strings.HasSuffix(path, ".txt") {
		reward, err = strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if err != nil {
			return Grade{}, fmt.Errorf("reward file %s: not a number", spec.File)
		}
	} else {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(bytes.TrimSpace(b), &m); err != nil {
			return Grade{}, fmt.Errorf("reward file %s: %w", spec.File, err)
		}
		raw, ok := m["reward"]
		if !ok {
			return Grade{}, fmt.Errorf("reward file %s has no \"reward\"", spec.File)
		}
		if err := json.Unmarshal(raw, &reward); err != nil {
			return Grade{}, fmt.Errorf("reward file %s: reward is not a number", spec.File)
		}
		for k, v := range m {
			var f float64
			if k != "reward" && json.Unmarshal(v, &f) == nil {
				rewards[k] = f
			}
		}
	}
	if len(rewards) == 0 {
		rewards = nil
	}
	_ = os.WriteFile(filepath.Join(in.TrialDir, "reward.json"), b, 0o644)
	return Grade{Passed: reward >= threshold, Reward: &reward, Rewards: rewards}, nil
}
