package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
)

// Runner error codes; docs/batch.md explains each.
const (
	CodeConfigInvalid = "batch_config_invalid"
	CodeSpecChanged   = "batch_spec_changed"
	CodeLocked        = "batch_locked"
	CodeNotABatch     = "batch_dir_invalid"
)

// RunError is an error of a batch directory (not of one trial).
type RunError struct {
	Code    string
	Message string
	Trials  []string // the trials concerned, if any
}

func (e *RunError) Error() string { return e.Message }

// LockSchemaVersion is the schema_version of lock.json.
const LockSchemaVersion = "fabric.batch.lock/v1alpha1"

// Lock is lock.json: what a batch directory was planned from.
type Lock struct {
	SchemaVersion string                `json:"schema_version"`
	Batch         string                `json:"batch"`
	SpecDigest    string                `json:"spec_digest"`
	Spec          string                `json:"spec"` // the spec file, absolute
	FabricVersion string                `json:"fabric_version"`
	Configs       map[string]LockConfig `json:"configs"`
	Pricing       []contract.ModelPrice `json:"pricing,omitempty"`
	Trials        []LockTrial           `json:"trials"`
}

// LockConfig is one config as planned.
type LockConfig struct {
	Digest    string `json:"digest"`
	AdapterID string `json:"adapter_id,omitempty"`
	Model     string `json:"model,omitempty"`
	QuotaKey  string `json:"quota_key"`
}

// LockTrial is one planned trial.
type LockTrial struct {
	ID        string `json:"id"`
	Task      string `json:"task"`
	Config    string `json:"config"`
	Repeat    int    `json:"repeat"`
	Digest    string `json:"digest"`
	RunDigest string `json:"run_digest"`
}

// Options configure a Runner.
type Options struct {
	// Client plans and starts the trials' runtimes (default fabric.New()).
	Client *fabric.Client
	// Host is recorded in every trial (default: the host name).
	Host   string
	Logger *slog.Logger
	// Worker: this runner shares the directory with the one that opened
	// it (a distributed executor's worker); it takes no lock, never writes
	// lock.json and refuses a directory whose lock.json differs.
	Worker bool
	// RetryErrors reopens errored trials of these classes ("all" or empty
	// string: every class); nil reopens none.
	RetryErrors []string
	// RerunChanged reruns done trials whose digest changed instead of
	// refusing the directory (batch_spec_changed).
	RerunChanged bool
	// Grader, when set, grades every trial instead of the spec's graders.
	Grader Grader
	// Regrade opens the directory to grade its runs again: the graders may
	// have changed, nothing else (the task, config or repeat of a done
	// trial changing is batch_spec_changed).
	Regrade bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Runner runs the trials of one spec in one batch directory.
type Runner struct {
	spec    *Spec
	dir     string
	opts    Options
	client  *fabric.Client
	configs map[string]*agentConfig
	trials  []Trial
	byID    map[string]int
	lock    *os.File
	mu      sync.Mutex // results.jsonl
	log     *slog.Logger
}

// Open prepares dir (created if missing) as the batch directory of spec:
// it loads every config, computes the trial digests and writes lock.json,
// or checks it against an earlier run: adding tasks, configs or repeats is
// allowed, a done trial whose digest changed is refused unless
// RerunChanged.
func Open(ctx context.Context, spec *Spec, dir string, opts Options) (*Runner, error) {
	if opts.Client == nil {
		opts.Client = fabric.New()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Host == "" {
		opts.Host, _ = os.Hostname()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r := &Runner{spec: spec, dir: abs, opts: opts, client: opts.Client, log: opts.Logger}
	if r.configs, err = loadConfigs(r.client, spec, func(p string) int { return spec.lines[p] }); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	if !opts.Worker {
		if err := r.takeLock(); err != nil {
			return nil, err
		}
	}
	ok := false
	defer func() {
		if !ok {
			r.Close()
		}
	}()
	r.trials = Expand(spec)
	if err := digests(ctx, spec, r.trials, r.configs, opts.Grader); err != nil {
		return nil, err
	}
	r.byID = make(map[string]int, len(r.trials))
	for i, t := range r.trials {
		r.byID[t.ID] = i
	}
	if err := r.checkLock(); err != nil {
		return nil, err
	}
	if !opts.Worker {
		if err := r.repairResults(); err != nil {
			return nil, err
		}
	}
	ok = true
	return r, nil
}

func (r *Runner) takeLock() error {
	f, err := os.OpenFile(filepath.Join(r.dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return &RunError{Code: CodeLocked, Message: fmt.Sprintf("%s is in use by another batch runner (%v)", r.dir, err)}
	}
	r.lock = f
	return nil
}

// Close releases the directory lock.
func (r *Runner) Close() error {
	if r.lock != nil {
		err := r.lock.Close()
		r.lock = nil
		return err
	}
	return nil
}

// Dir is the batch directory (absolute).
func (r *Runner) Dir() string { return r.dir }

// Spec is the runner's spec.
func (r *Runner) Spec() *Spec { return r.spec }

// Trials are every planned trial in run order.
func (r *Runner) Trials() []Trial { return slices.Clone(r.trials) }

// Trial finds a planned trial by id.
func (r *Runner) Trial(id string) (Trial, bool) {
	i, ok := r.byID[id]
	if !ok {
		return Trial{}, false
	}
	return r.trials[i], true
}

func (r *Runner) lockValue() Lock {
	l := Lock{SchemaVersion: LockSchemaVersion, Batch: r.spec.Spec.Metadata.Name, SpecDigest: r.spec.Digest, Spec: r.spec.Path,
		FabricVersion: FabricVersion(), Configs: map[string]LockConfig{}, Pricing: r.spec.Spec.Pricing}
	for id, c := range r.configs {
		l.Configs[id] = LockConfig{Digest: c.digest, AdapterID: c.adapter, Model: c.model, QuotaKey: c.quotaKey}
	}
	for _, t := range r.trials {
		l.Trials = append(l.Trials, LockTrial{ID: t.ID, Task: t.Task, Config: t.Config, Repeat: t.Repeat, Digest: t.Digest, RunDigest: t.RunDigest})
	}
	return l
}

// ReadLock reads a batch directory's lock.json.
func ReadLock(dir string) (*Lock, error) {
	b, err := os.ReadFile(filepath.Join(dir, "lock.json"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &RunError{Code: CodeNotABatch, Message: fmt.Sprintf("%s is not a batch directory (no lock.json)", dir)}
		}
		return nil, err
	}
	var l Lock
	if err := json.Unmarshal(b, &l); err != nil || l.SchemaVersion != LockSchemaVersion {
		return nil, &RunError{Code: CodeNotABatch, Message: fmt.Sprintf("%s: not a %s file", filepath.Join(dir, "lock.json"), LockSchemaVersion)}
	}
	return &l, nil
}

func (r *Runner) checkLock() error {
	old, err := ReadLock(r.dir)
	var re *RunError
	switch {
	case errors.As(err, &re) && re.Code == CodeNotABatch && !r.opts.Worker && !exists(filepath.Join(r.dir, "lock.json")):
		old = nil
	case err != nil:
		return err
	}
	if old != nil && old.Batch != r.spec.Spec.Metadata.Name {
		return &RunError{Code: CodeSpecChanged, Message: fmt.Sprintf("%s holds batch %q, not %q", r.dir, old.Batch, r.spec.Spec.Metadata.Name)}
	}
	var changed []string
	if old != nil {
		prev := map[string]string{}
		for _, t := range old.Trials {
			prev[t.ID] = t.Digest
			if r.opts.Regrade {
				prev[t.ID] = t.RunDigest
			}
		}
		for _, t := range r.trials {
			d, ok := prev[t.ID]
			if r.opts.Regrade {
				if ok && d != t.RunDigest {
					changed = append(changed, t.ID)
				}
				continue
			}
			switch {
			case r.opts.Worker && d != t.Digest:
				changed = append(changed, t.ID)
			case ok && d != t.Digest:
				rec, err := r.ReadTrial(t)
				if err != nil {
					return err
				}
				if rec != nil && r.done(rec) {
					changed = append(changed, t.ID)
				}
			}
		}
	} else if r.opts.Worker {
		return &RunError{Code: CodeNotABatch, Message: fmt.Sprintf("%s has no lock.json: open the batch with its runner first", r.dir)}
	}
	if len(changed) > 0 && r.opts.Regrade {
		return &RunError{Code: CodeSpecChanged, Trials: changed, Message: fmt.Sprintf(
			"regrade runs the graders again and nothing else, but the task, config or repeat of %d trial(s) changed (%s): run them with fabric batch run --rerun-changed",
			len(changed), strings.Join(changed[:min(len(changed), 5)], ", "))}
	}
	if len(changed) > 0 && (r.opts.Worker || !r.opts.RerunChanged) {
		shown := changed[:min(len(changed), 5)]
		more := ""
		if len(changed) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(changed)-len(shown))
		}
		return &RunError{Code: CodeSpecChanged, Trials: changed, Message: fmt.Sprintf(
			"the spec changed what %d done trial(s) are (%s%s): their digests differ from lock.json; rerun them with --rerun-changed or use a new directory",
			len(changed), strings.Join(shown, ", "), more)}
	}
	for _, id := range changed {
		if err := r.reopen(r.trials[r.byID[id]]); err != nil {
			return err
		}
	}
	if r.opts.Worker {
		return nil
	}
	if err := writeJSONAtomic(filepath.Join(r.dir, "lock.json"), r.lockValue()); err != nil {
		return err
	}
	return copyFile(r.spec.Path, filepath.Join(r.dir, "batch"+filepath.Ext(r.spec.Path)))
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// ReadTrial reads the record of a trial, nil when it has none.
func (r *Runner) ReadTrial(t Trial) (*contract.BatchTrial, error) {
	b, err := os.ReadFile(filepath.Join(r.dir, t.Dir, "trial.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec contract.BatchTrial
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(r.dir, t.Dir, "trial.json"), err)
	}
	return &rec, nil
}

// done says whether a record ends its trial for this run: graded trials
// always, errors unless reopened by class; cancelled and skipped trials
// run again.
func (r *Runner) done(rec *contract.BatchTrial) bool {
	switch rec.Outcome {
	case contract.TrialPassed, contract.TrialFailed:
		return true
	case contract.TrialErrored:
		if r.opts.RetryErrors == nil {
			return true
		}
		for _, c := range r.opts.RetryErrors {
			if c == "" || c == "all" || rec.Error == nil || rec.Error.Class == c {
				return false
			}
		}
		return true
	}
	return false
}

// Pending lists the trials still to run, in run order: those without a
// record, and those whose record this run reopens (cancelled, skipped,
// errors of RetryErrors). A trial directory without a record, left by an
// interrupted run, is moved to .incomplete/ first. Only the runner that
// opened the directory plans: a Worker's Pending leaves such trials out,
// for their directories are the submitter's to move.
func (r *Runner) Pending() ([]Trial, error) {
	var out []Trial
	for _, t := range r.trials {
		rec, err := r.ReadTrial(t)
		if err != nil {
			return nil, err
		}
		if rec != nil && r.done(rec) {
			continue
		}
		if rec != nil || exists(filepath.Join(r.dir, t.Dir)) {
			if r.opts.Worker {
				// The submitter reopens; a worker only runs what it is given.
				continue
			}
			if err := r.reopen(t); err != nil {
				return nil, err
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// Reopen moves a trial's directory aside (.incomplete/) so that it runs
// again from nothing; a worker calls it before its first attempt.
func (r *Runner) reopen(t Trial) error {
	src := filepath.Join(r.dir, t.Dir)
	if !exists(src) {
		return nil
	}
	aside := filepath.Join(r.dir, ".incomplete")
	if err := os.MkdirAll(aside, 0o755); err != nil {
		return err
	}
	dst := filepath.Join(aside, t.ID)
	for i := 2; exists(dst); i++ {
		dst = filepath.Join(aside, t.ID+"."+strconv.Itoa(i))
	}
	return os.Rename(src, dst)
}

// Commit records a trial's final outcome: trial.json written by rename
// (the commit point), then one line in results.jsonl.
func (r *Runner) Commit(rec contract.BatchTrial) error {
	t, ok := r.Trial(rec.TrialID)
	if !ok {
		return fmt.Errorf("commit: %s is not a trial of this batch", rec.TrialID)
	}
	if err := os.MkdirAll(filepath.Join(r.dir, t.Dir), 0o755); err != nil {
		return err
	}
	if err := writeJSONAtomic(filepath.Join(r.dir, t.Dir, "trial.json"), rec); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.appendResults(resultLine(t, rec))
}

// resultLine is a committed trial's line in results.jsonl.
func resultLine(t Trial, rec contract.BatchTrial) []byte {
	line, _ := json.Marshal(resultEntry{TrialID: rec.TrialID, Outcome: rec.Outcome, Digest: rec.Digest, Attempts: rec.Attempts, Path: filepath.Join(t.Dir, "trial.json")})
	return append(line, '\n')
}

// resultEntry is one line of results.jsonl.
type resultEntry struct {
	Attempts int    `json:"attempts"`
	Digest   string `json:"digest"`
	Outcome  string `json:"outcome"`
	Path     string `json:"path"`
	TrialID  string `json:"trial_id"`
}

func (r *Runner) appendResults(lines []byte) error {
	f, err := os.OpenFile(filepath.Join(r.dir, "results.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(lines)
	return errors.Join(err, f.Close())
}

// repairResults makes results.jsonl list every committed trial: a runner
// stopped between a trial's commit point (trial.json) and its line left
// the trial done but unlisted, and a resume skips done trials. A torn last
// line (a machine crash mid-append) is cut first. Only the runner that
// holds the directory lock repairs.
func (r *Runner) repairResults() error {
	p := filepath.Join(r.dir, "results.jsonl")
	b, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if i := bytes.LastIndexByte(b, '\n'); i+1 < len(b) {
		r.log.Warn("batch: cut a torn last line of results.jsonl", "file", p, "bytes", len(b)-i-1)
		if err := os.Truncate(p, int64(i+1)); err != nil {
			return fmt.Errorf("%s: cut torn last line: %w", p, err)
		}
		b = b[:i+1]
	}
	last := map[string]resultEntry{}
	for l := range bytes.Lines(b) {
		var e resultEntry
		if json.Unmarshal(l, &e) == nil {
			last[e.TrialID] = e
		}
	}
	var missing []byte
	for _, t := range r.trials {
		rec, err := r.ReadTrial(t)
		if err != nil {
			return err
		}
		if rec == nil {
			continue
		}
		if e, ok := last[rec.TrialID]; ok && e.Outcome == rec.Outcome && e.Digest == rec.Digest && e.Attempts == rec.Attempts {
			continue
		}
		missing = append(missing, resultLine(t, *rec)...)
	}
	if len(missing) == 0 {
		return nil
	}
	r.log.Warn("batch: listed committed trials missing from results.jsonl", "file", p, "trials", bytes.Count(missing, []byte{'\n'}))
	return r.appendResults(missing)
}

// Records reads the record of every planned trial that has one, in run
// order.
func (r *Runner) Records() ([]contract.BatchTrial, error) {
	var out []contract.BatchTrial
	for _, t := range r.trials {
		rec, err := r.ReadTrial(t)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			out = append(out, *rec)
		}
	}
	return out, nil
}

// writeJSONAtomic writes v to path through a temporary file in the same
// directory, synced, then renamed over path.
func writeJSONAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'), true)
}

// writeAtomic writes data to path through a temporary file renamed over
// it, so a reader (or a crash of this process) sees the old file or the
// new one, never a part; durable also syncs the data before the rename, so
// that a machine crash does not leave an empty file under the name (for
// the commit points: trial.json and lock.json).
func writeAtomic(path string, data []byte, durable bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	b, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	return writeAtomic(dst, b, true)
}
