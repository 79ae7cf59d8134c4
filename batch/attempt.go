package batch

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/host"
)

// Trial phases, as Progress reports them.
const (
	PhaseSetup = "setup"
	PhaseStart = "start"
	PhaseRun   = "run"
	PhaseGrade = "grade"
	PhaseDone  = "done"
)

// Progress is what a running trial has done so far.
type Progress struct {
	Phase        string `json:"phase"`
	Events       int    `json:"events"`
	InputTokens  int64  `json:"input_tokens,omitempty"`
	OutputTokens int64  `json:"output_tokens,omitempty"`
}

// errTimeout is the cause of a run's context when its timeout passes.
var errTimeout = errors.New("trial run timeout")

// Attempt runs one attempt of a trial in a fresh directory
// (<trial>/attempts/N): workspace from the template, setup, the agent's
// run (events to events.jsonl, the result to run_result.json), the task's
// tests copied in, the grader. It never commits; cancelling ctx cancels
// the run through Fabric and gives outcome cancelled. Every runtime it
// starts is stopped before it returns.
func (r *Runner) Attempt(ctx context.Context, t Trial, attempt int, progress func(Progress)) contract.BatchTrial {
	if progress == nil {
		progress = func(Progress) {}
	}
	now := r.opts.Now
	rec := contract.BatchTrial{
		SchemaVersion: contract.BatchTrialSchemaVersion, Batch: r.spec.Spec.Metadata.Name,
		TrialID: t.ID, Task: t.Task, Config: t.Config, Repeat: t.Repeat, Digest: t.Digest,
		Attempts: attempt, Host: r.opts.Host, QuotaKey: t.QuotaKey, CostSource: contract.CostUnknown,
	}
	cfg := r.configs[t.Config]
	rec.AdapterID, rec.Model = cfg.adapter, cfg.model
	task := r.task(t.Task)
	start := now()
	rec.Timings.StartedMillis = start.UnixMilli()
	adir := filepath.Join(t.Dir, "attempts", strconv.Itoa(attempt))
	abs := filepath.Join(r.dir, adir)
	rec.Paths = contract.TrialPaths{Dir: t.Dir}
	finish := func() contract.BatchTrial {
		end := now()
		rec.Timings.EndedMillis = end.UnixMilli()
		rec.Timings.DurationSeconds = seconds(end.Sub(start))
		progress(Progress{Phase: PhaseDone})
		return rec
	}
	fail := func(class, code, msg string) contract.BatchTrial {
		rec.Outcome = contract.TrialErrored
		rec.Error = &contract.TrialError{Class: class, Code: code, Message: msg, Retryable: true}
		return finish()
	}
	if err := os.RemoveAll(abs); err != nil {
		return fail(contract.ErrorClassFabric, "trial_dir", err.Error())
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fail(contract.ErrorClassFabric, "trial_dir", err.Error())
	}

	// Setup: the workspace and the task's commands, bounded by the run
	// timeout too.
	progress(Progress{Phase: PhaseSetup})
	runCtx, cancelRun := r.runContext(ctx, task)
	defer cancelRun()
	ws := filepath.Join(abs, "workspace")
	rec.Paths.Workspace = filepath.Join(adir, "workspace")
	if err := r.setup(runCtx, task, ws, filepath.Join(abs, "setup.log")); err != nil {
		if ctx.Err() != nil {
			return r.cancelled(&rec, finish)
		}
		if errors.Is(context.Cause(runCtx), errTimeout) {
			rec.TimedOut = true
		}
		return fail(contract.ErrorClassSetup, "setup_failed", err.Error())
	}
	rec.Timings.SetupEndMillis = now().UnixMilli()
	rec.Timings.SetupSeconds = seconds(now().Sub(start))

	input, err := taskInput(task)
	if err != nil {
		return fail(contract.ErrorClassSetup, "input_unreadable", err.Error())
	}

	// Run.
	progress(Progress{Phase: PhaseStart})
	runStart := now()
	res, runErr := r.run(runCtx, cfg, ws, abs, input, &rec, progress)
	rec.Timings.RunEndMillis = now().UnixMilli()
	rec.Timings.RunSeconds = seconds(now().Sub(runStart))
	// The trial's own timeout, or the config's (runtime.timeout_seconds,
	// which the runtime enforces as host_timeout): either way the agent ran
	// out of time, and the trial is graded.
	timedOut := errors.Is(context.Cause(runCtx), errTimeout) || runTimedOut(runErr, res)
	rec.TimedOut = timedOut
	if res != nil {
		rec.Paths.RunResult = filepath.Join(adir, "run_result.json")
		rec.Paths.Events = filepath.Join(adir, "events.jsonl")
		r.usage(&rec, res)
	}
	switch {
	case ctx.Err() != nil:
		return r.cancelled(&rec, finish)
	case runErr != nil && !timedOut:
		rec.Outcome = contract.TrialErrored
		rec.Error = r.classify(cfg, runErr, res)
		return finish()
	}
	output := outputText(res)
	if res != nil {
		rec.Paths.Output = filepath.Join(adir, "output.txt")
		_ = os.WriteFile(filepath.Join(abs, "output.txt"), []byte(output), 0o644)
	}

	// Grade: the tests arrive only now.
	progress(Progress{Phase: PhaseGrade})
	gradeStart := now()
	g, gerr := r.grade(ctx, t, task, res, output, ws, abs, adir, &rec)
	rec.Timings.GradeEndMillis = now().UnixMilli()
	rec.Timings.GradeSeconds = seconds(now().Sub(gradeStart))
	if ctx.Err() != nil {
		return r.cancelled(&rec, finish)
	}
	applyGrade(&rec, g, gerr)
	if timedOut {
		rec.Reason = "timeout"
	}
	r.keepWorkspace(&rec, ws)
	return finish()
}

// applyGrade records a grader's verdict: its outcome and rewards, or a
// grader error (retryable: graders fail for infrastructure reasons too).
func applyGrade(rec *contract.BatchTrial, g Grade, err error) {
	rec.Error = nil
	switch {
	case err != nil:
		rec.Outcome = contract.TrialErrored
		rec.Error = &contract.TrialError{Class: contract.ErrorClassGrader, Code: "grader_error", Message: err.Error(), Retryable: true}
	case g.Passed:
		rec.Outcome = contract.TrialPassed
	default:
		rec.Outcome = contract.TrialFailed
	}
	rec.Reward, rec.Rewards = g.Reward, g.Rewards
}

func (r *Runner) cancelled(rec *contract.BatchTrial, finish func() contract.BatchTrial) contract.BatchTrial {
	rec.Outcome = contract.TrialCancelled
	rec.Reason = "interrupted"
	rec.Error = nil
	return finish()
}

func (r *Runner) task(id string) contract.BatchTask {
	for _, t := range r.spec.Tasks {
		if t.ID == id {
			return t
		}
	}
	panic("batch: no task " + id)
}

// runContext bounds setup and the agent's run by the task's timeout and
// the spec's run timeout, whichever is shorter.
func (r *Runner) runContext(ctx context.Context, task contract.BatchTask) (context.Context, context.CancelFunc) {
	limit := task.TimeoutSeconds
	if l := r.spec.Spec.Limits; l != nil && l.RunTimeoutSeconds > 0 && (limit == 0 || l.RunTimeoutSeconds < limit) {
		limit = l.RunTimeoutSeconds
	}
	if limit <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, time.Duration(limit*float64(time.Second)), errTimeout)
}

func (r *Runner) keepWorkspace(rec *contract.BatchTrial, ws string) {
	keep := r.spec.Spec.KeepWorkspaces
	failed := rec.Outcome != contract.TrialPassed
	if keep == "always" || keep == "on_failure" && failed {
		return
	}
	_ = os.RemoveAll(ws)
	rec.Paths.Workspace = ""
}

func seconds(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

// setup copies the template into ws and runs the task's setup commands,
// then its setup.sh, with sh -c in ws; their output goes to logPath.
func (r *Runner) setup(ctx context.Context, task contract.BatchTask, ws, logPath string) error {
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	if task.Workspace != nil && task.Workspace.Template != "" {
		if err := copyTree(task.Workspace.Template, ws); err != nil {
			return fmt.Errorf("workspace template: %w", err)
		}
	}
	var cmds []string
	if task.Workspace != nil {
		cmds = append(cmds, task.Workspace.Setup...)
	}
	if task.Dir != "" && exists(filepath.Join(task.Dir, "setup.sh")) {
		cmds = append(cmds, "sh "+shellQuote(filepath.Join(task.Dir, "setup.sh")))
	}
	if len(cmds) == 0 {
		return nil
	}
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	for _, c := range cmds {
		cmd := exec.CommandContext(ctx, "sh", "-c", c)
		cmd.Dir, cmd.Stdout, cmd.Stderr = ws, log, log
		cmd.Env = append(os.Environ(), "FABRIC_WORKSPACE="+ws, "FABRIC_TASK_DIR="+task.Dir)
		groupKill(cmd)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("setup command %q: %w (output in setup.log)", c, err)
		}
	}
	return nil
}

// groupKill runs cmd in its own process group and kills the whole group
// when its context ends, so nothing it started outlives it.
func groupKill(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func taskInput(t contract.BatchTask) (string, error) {
	if t.Input == nil {
		return "", errors.New("the task has no input")
	}
	if t.Input.File != "" {
		b, err := os.ReadFile(t.Input.File)
		return string(b), err
	}
	return t.Input.Text, nil
}

// run starts the config's runtime in ws, invokes it once with input and
// stops it; the result and its events are written into abs.
func (r *Runner) run(ctx context.Context, cfg *agentConfig, ws, abs, input string, rec *contract.BatchTrial, progress func(Progress)) (*contract.RunResult, error) {
	l := *cfg.loaded
	l.Config.Environment = cloneEnv(l.Config.Environment)
	if l.Config.Environment == nil {
		l.Config.Environment = &contract.EnvironmentConfig{Provider: "local"}
	}
	l.Config.Environment.Workspace = &ws
	events, err := os.Create(filepath.Join(abs, "events.jsonl"))
	if err != nil {
		return nil, err
	}
	defer events.Close()
	ew := bufio.NewWriter(events)
	defer ew.Flush()
	var mu sync.Mutex
	n := 0
	onEvent := func(e contract.FabricEvent) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.Marshal(e)
		ew.Write(append(b, '\n'))
		n++
		if n == 1 || n%16 == 0 {
			progress(Progress{Phase: PhaseRun, Events: n})
		}
	}
	rt, err := r.client.StartRuntime(ctx, &l)
	if err != nil {
		return nil, err
	}
	rec.RuntimeIDs = append(rec.RuntimeIDs, rt.ID())
	rec.Harness = rt.Handle().Harness
	progress(Progress{Phase: PhaseRun})
	res, invErr := rt.Invoke(ctx, input, fabric.WithEvents(onEvent), fabric.WithRequestID(rec.TrialID+"-a"+strconv.Itoa(rec.Attempts)))
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 60*time.Second)
	defer cancel()
	_, stopErr := rt.Stop(stopCtx)
	if res != nil {
		b, _ := json.MarshalIndent(res, "", "  ")
		if werr := writeAtomic(filepath.Join(abs, "run_result.json"), append(b, '\n'), false); werr != nil && invErr == nil {
			invErr = werr
		}
		if res.Status != contract.StatusSucceeded && invErr == nil {
			invErr = &resultError{res: res}
		}
	}
	if invErr == nil && stopErr != nil {
		r.log.Warn("batch: runtime stop failed", "trial", rec.TrialID, "err", stopErr)
	}
	return res, invErr
}

// runTimedOut says whether a run failed on the runtime's invoke deadline.
func runTimedOut(err error, res *contract.RunResult) bool {
	info := fabric.ErrorInfo(err)
	if res != nil && res.Error != nil {
		info = res.Error
	}
	return info != nil && info.Code == host.CodeHostTimeout && info.Stage == contract.StageInvoke
}

// resultError is a run whose result is not succeeded.
type resultError struct{ res *contract.RunResult }

func (e *resultError) Error() string {
	if e.res.Error != nil {
		return e.res.Error.Code + ": " + e.res.Error.Message
	}
	return "the run ended " + e.res.Status
}

// outputText is the final output as text: a string as it is, anything
// else as JSON.
func outputText(res *contract.RunResult) string {
	if res == nil || res.Output == nil {
		return ""
	}
	if s, ok := res.Output.(string); ok {
		return s
	}
	b, _ := json.Marshal(res.Output)
	return string(b)
}

// usage records the run's tokens and its cost: reported by the harness,
// else priced from the spec's pricing, else unknown.
func (r *Runner) usage(rec *contract.BatchTrial, res *contract.RunResult) {
	u := res.Usage
	if u == nil {
		return
	}
	tu := &contract.TrialUsage{}
	if u.InputTokens != nil {
		tu.InputTokens = int64(*u.InputTokens)
	}
	if u.OutputTokens != nil {
		tu.OutputTokens = int64(*u.OutputTokens)
	}
	if v, ok := u.Extensions["cached_input_tokens"].(float64); ok {
		tu.CachedInputTokens = int64(v)
	}
	rec.Usage = tu
	if u.CostUSD != nil {
		c := *u.CostUSD
		rec.CostUSD, rec.CostSource = &c, contract.CostReported
		return
	}
	for _, p := range r.spec.Spec.Pricing {
		if p.Model == rec.Model {
			uncached := max(tu.InputTokens-tu.CachedInputTokens, 0)
			c := (float64(uncached)*p.InputPerMTok + float64(tu.CachedInputTokens)*p.CachedInputPerMTok + float64(tu.OutputTokens)*p.OutputPerMTok) / 1e6
			rec.CostUSD, rec.CostSource = &c, contract.CostPriced
			return
		}
	}
}

// copyTree copies the regular files, directories and symlinks of src into
// dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, info.Mode().Perm())
		}
		return nil
	})
}
