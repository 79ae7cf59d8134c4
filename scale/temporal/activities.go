package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/batch"
	"github.com/fabric-runtime/fabric/contract"
)

// Application error types RunTrial and the planners fail with.
const (
	// errTypeRetry: the attempt ended in an error the spec retries; the
	// attempt directory is written, the trial is not committed.
	errTypeRetry = "fabric_trial_retry"
	// errTypeHostLost: the attempt was interrupted by something other
	// than a cancel request (worker stopping, heartbeat lost); another
	// host reruns it.
	errTypeHostLost = "fabric_trial_interrupted"
	// errTypeBatch: the batch cannot be opened as the workflow describes
	// it (unknown dir, changed spec, unknown trial). Not retried.
	errTypeBatch = "fabric_batch_invalid"
)

// Activities run the batch's steps on a worker. One value serves every
// batch a worker sees; it keeps each opened batch until Close.
type Activities struct {
	// Client runs the trials' agents.
	Client *fabric.Client
	// Host is recorded in trial.json (default: the hostname).
	Host   string
	Logger *slog.Logger
	// Dirs, when not empty, are the only batch directories (or their
	// parents) this worker accepts.
	Dirs []string

	mu      sync.Mutex
	batches map[string]*openBatch
}

type openBatch struct {
	dir    string
	spec   *batch.Spec
	runner *batch.Runner
}

// RegisterPlanning registers PlanBatch and PlanPage (the batch queue).
func (a *Activities) RegisterPlanning(r worker.ActivityRegistry) {
	r.RegisterActivityWithOptions(a.PlanBatch, activity.RegisterOptions{Name: activityPlanBatch})
	r.RegisterActivityWithOptions(a.PlanPage, activity.RegisterOptions{Name: activityPlanPage})
}

// RegisterTrials registers RunTrial (a trial queue).
func (a *Activities) RegisterTrials(r worker.ActivityRegistry) {
	r.RegisterActivityWithOptions(a.RunTrial, activity.RegisterOptions{Name: activityRunTrial})
}

// Close closes every batch the worker opened.
func (a *Activities) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	for k, b := range a.batches {
		errs = append(errs, b.runner.Close())
		delete(a.batches, k)
	}
	return errors.Join(errs...)
}

func (a *Activities) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

func batchError(format string, args ...any) error {
	return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), errTypeBatch, nil)
}

// open returns the batch ref names, opened as a worker (no dir lock, the
// lock.json written by the submitter is checked).
func (a *Activities) open(ctx context.Context, ref BatchRef) (*openBatch, error) {
	dir, err := URIDir(ref.URI)
	if err != nil {
		return nil, batchError("%v", err)
	}
	if !a.accepts(dir) {
		return nil, batchError("batch dir %s is not one of this worker's --dir", dir)
	}
	key := dir + "\x00" + ref.SpecDigest
	a.mu.Lock()
	defer a.mu.Unlock()
	if b := a.batches[key]; b != nil {
		return b, nil
	}
	spec, err := batch.Load(ref.Spec)
	if err != nil {
		return nil, batchError("load spec %s: %v", ref.Spec, err)
	}
	if spec.Digest != ref.SpecDigest {
		return nil, batchError("spec %s changed since the batch was submitted (digest %s, submitted %s)", ref.Spec, spec.Digest, ref.SpecDigest)
	}
	r, err := batch.Open(ctx, spec, dir, batch.Options{Client: a.Client, Host: a.Host, Logger: a.logger(), Worker: true})
	if err != nil {
		return nil, batchError("open batch %s: %v", dir, err)
	}
	if a.batches == nil {
		a.batches = map[string]*openBatch{}
	}
	b := &openBatch{dir: dir, spec: spec, runner: r}
	a.batches[key] = b
	return b, nil
}

func (a *Activities) accepts(dir string) bool {
	if len(a.Dirs) == 0 {
		return true
	}
	for _, d := range a.Dirs {
		d = filepath.Clean(d)
		if dir == d || strings.HasPrefix(dir, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// WritePlan writes the trials a submission runs (the submitter's
// Runner.Pending, which also moves partial trial dirs aside) into the
// batch dir and returns the plan file's path relative to it. Only the
// submitter calls it: a worker's Pending never reopens trials.
func WritePlan(dir string, pending []batch.Trial) (string, error) {
	trials := make([]PlannedTrial, len(pending))
	for i, t := range pending {
		trials[i] = PlannedTrial{ID: t.ID, Task: t.Task, Config: t.Config, Repeat: t.Repeat, QuotaKey: t.QuotaKey}
	}
	rel := filepath.Join(".temporal", fmt.Sprintf("plan-%d.json", time.Now().UnixNano()))
	return rel, writeJSONFile(filepath.Join(dir, rel), trials)
}

// PlanBatch opens the batch on this worker (checking its spec digest and
// lock.json) and returns the size of the submitted plan and the limits
// the workflows apply.
func (a *Activities) PlanBatch(ctx context.Context, ref BatchRef) (Plan, error) {
	b, err := a.open(ctx, ref)
	if err != nil {
		return Plan{}, err
	}
	trials, err := readPlan(b.dir, ref.PlanFile)
	if err != nil {
		return Plan{}, err
	}
	plan := Plan{Count: len(trials), PlanFile: ref.PlanFile, Concurrency: 4, MaxAttempts: 1}
	s := b.spec.Spec
	if s.Limits != nil && s.Limits.Concurrency > 0 {
		plan.Concurrency = s.Limits.Concurrency
	}
	if s.Retry != nil && s.Retry.MaxAttempts > 0 {
		plan.MaxAttempts = s.Retry.MaxAttempts
	}
	plan.TrialTimeoutSeconds = trialTimeout(b.spec)
	return plan, nil
}

func readPlan(dir, rel string) ([]PlannedTrial, error) {
	if rel == "" || filepath.IsAbs(rel) || strings.HasPrefix(filepath.Clean(rel), "..") {
		return nil, batchError("plan file %q: want a path inside the batch dir", rel)
	}
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		return nil, err
	}
	var trials []PlannedTrial
	if err := json.Unmarshal(data, &trials); err != nil {
		return nil, batchError("plan %s: %v", rel, err)
	}
	return trials, nil
}

// trialTimeout is the longest a trial of the spec may take: its run
// timeout, else the longest task timeout plus grading (0: unbounded).
func trialTimeout(spec *batch.Spec) float64 {
	s := spec.Spec
	if s.Limits != nil && s.Limits.RunTimeoutSeconds > 0 {
		return s.Limits.RunTimeoutSeconds
	}
	var longest float64
	for _, t := range spec.Tasks {
		d := t.TimeoutSeconds
		if d == 0 {
			return 0
		}
		if g := t.Grader; g != nil {
			d += g.TimeoutSeconds
		} else if s.Grader != nil {
			d += s.Grader.TimeoutSeconds
		}
		longest = max(longest, d)
	}
	return longest
}

// PlanPage returns up to n planned trials from offset.
func (a *Activities) PlanPage(ctx context.Context, ref BatchRef, plan Plan, offset, n int) ([]PlannedTrial, error) {
	dir, err := URIDir(ref.URI)
	if err != nil {
		return nil, batchError("%v", err)
	}
	trials, err := readPlan(dir, plan.PlanFile)
	if err != nil {
		return nil, err
	}
	offset = min(offset, len(trials))
	return trials[offset:min(offset+n, len(trials))], nil
}

// heartbeat is what RunTrial reports while it runs (and what a retry on
// another host can read back).
type heartbeat struct {
	Host    string `json:"host,omitempty"`
	Attempt int    `json:"attempt"`
	batch.Progress
}

// RunTrial runs one attempt of a trial on this host, heartbeating its
// progress. A graded trial, a non-retried error and a requested cancel are
// committed (trial.json) and returned as a summary; an error the spec
// retries fails the activity with a retryable error carrying the spec's
// delay, and the next activity attempt is the trial's next attempt.
func (a *Activities) RunTrial(ctx context.Context, ref TrialRef) (TrialSummary, error) {
	b, err := a.open(ctx, ref.Batch)
	if err != nil {
		return TrialSummary{}, err
	}
	t, ok := b.runner.Trial(ref.Trial.ID)
	if !ok {
		return TrialSummary{}, batchError("batch %s has no trial %s", ref.Batch.Name, ref.Trial.ID)
	}
	recPath := filepath.Join(b.dir, t.Dir, "trial.json")
	info := activity.GetInfo(ctx)
	// A record this trial workflow wrote already: an earlier attempt
	// committed but its completion never reached the server.
	if data, err := os.ReadFile(recPath); err == nil && info.Attempt > 1 {
		var rec contract.BatchTrial
		if json.Unmarshal(data, &rec) == nil && rec.TrialID == t.ID && rec.Timings.StartedMillis >= ref.SinceMillis {
			return summarize(rec, recPath), nil
		}
	}
	attempt := int(info.Attempt)
	host := a.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	var mu sync.Mutex
	hb := heartbeat{Host: host, Attempt: attempt, Progress: batch.Progress{Phase: "queued"}}
	beat := func() {
		mu.Lock()
		d := hb
		mu.Unlock()
		activity.RecordHeartbeat(ctx, d)
	}
	beat()
	interval := 10 * time.Second
	if hbt := info.HeartbeatTimeout; hbt > 0 && hbt/4 < interval {
		interval = hbt / 4
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				beat()
			}
		}
	}()
	rec := b.runner.Attempt(ctx, t, attempt, func(p batch.Progress) {
		mu.Lock()
		hb.Progress = p
		mu.Unlock()
	})
	close(done)
	wg.Wait()
	if ctx.Err() != nil && !cancelRequested(ctx) {
		// Not a cancel of the trial: the worker is stopping or lost the
		// activity. Leave the attempt uncommitted for another host.
		return TrialSummary{}, sdktemporal.NewApplicationErrorWithCause("trial attempt interrupted: "+context.Cause(ctx).Error(), errTypeHostLost, context.Cause(ctx))
	}
	if ctx.Err() == nil {
		if again, delay := b.runner.Retry(rec); again {
			msg := "trial attempt " + fmt.Sprint(attempt) + " failed"
			if rec.Error != nil {
				msg += ": " + rec.Error.Class + "/" + rec.Error.Code + ": " + rec.Error.Message
			}
			return TrialSummary{}, sdktemporal.NewApplicationErrorWithOptions(msg, errTypeRetry, sdktemporal.ApplicationErrorOptions{NextRetryDelay: delay})
		}
	}
	if err := b.runner.Commit(rec); err != nil {
		return TrialSummary{}, fmt.Errorf("commit trial %s: %w", t.ID, err)
	}
	a.logger().Info("trial committed", "trial", t.ID, "outcome", rec.Outcome, "attempt", attempt)
	return summarize(rec, recPath), nil
}

// cancelRequested says whether ctx ended because the workflow asked the
// activity to cancel (rather than a lost heartbeat or a stopping worker).
func cancelRequested(ctx context.Context) bool {
	var ce *sdktemporal.CanceledError
	return errors.As(context.Cause(ctx), &ce)
}

func summarize(rec contract.BatchTrial, path string) TrialSummary {
	s := TrialSummary{TrialID: rec.TrialID, Outcome: rec.Outcome, Attempts: rec.Attempts, CostUSD: rec.CostUSD, Host: rec.Host, TrialJSON: DirURI(path)}
	if rec.Error != nil {
		s.ErrorClass, s.ErrorCode = rec.Error.Class, rec.Error.Code
	}
	return s
}

func writeJSONFile(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
