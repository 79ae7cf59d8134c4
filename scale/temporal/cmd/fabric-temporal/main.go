package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdktemporal "go.temporal.io/sdk/temporal"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/batch"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/otlp"
	ftemporal "github.com/fabric-runtime/fabric/scale/temporal"
)

// Exit codes, as the local batch runner's.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 3
)

// submission is written to <dir>/temporal.json by run, so cancel (and a
// person) can find the workflow of a batch directory.
type submission struct {
	Address    string `json:"address"`
	Namespace  string `json:"namespace"`
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id,omitempty"`
}

const submissionFile = "temporal.json"

func main() {
	// The worker hosts Fabric's bundled adapters by re-executing itself.
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func usage(stderr io.Writer) int {
	fmt.Fprintln(stderr, `usage:
  fabric-temporal worker [--address A] [--namespace N] [--dir DIR]... [--slots N] [--queues key1,key2] [--queue-rps R] [--host NAME]
  fabric-temporal run SPEC --dir DIR [--address A] [--namespace N] [--follow] [--heartbeat-timeout D] [--retry-errors classes] [--rerun-changed] [--children-per-run N]
  fabric-temporal cancel --dir DIR [--address A] [--namespace N]`)
	return exitUsage
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usage(stderr)
	}
	switch args[0] {
	case "worker":
		return workerCmd(args[1:], stderr)
	case "run":
		return runCmd(args[1:], stdout, stderr)
	case "cancel":
		return cancelCmd(args[1:], stderr)
	case "-h", "--help", "help":
		usage(stderr)
		return exitOK
	}
	fmt.Fprintf(stderr, "fabric-temporal: unknown command %q\n", args[0])
	return usage(stderr)
}

type dirList []string

func (d *dirList) String() string     { return strings.Join(*d, ",") }
func (d *dirList) Set(v string) error { *d = append(*d, v); return nil }

type common struct {
	address, namespace string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.address, "address", envOr("TEMPORAL_ADDRESS", client.DefaultHostPort), "Temporal frontend host:port")
	fs.StringVar(&c.namespace, "namespace", envOr("TEMPORAL_NAMESPACE", client.DefaultNamespace), "Temporal namespace")
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// dial connects to the frontend; the SDK's own log lines (warnings and
// errors only) go to w.
func (c *common) dial(w io.Writer) (client.Client, error) {
	quiet := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return client.Dial(client.Options{HostPort: c.address, Namespace: c.namespace, Logger: sdklog.NewStructuredLogger(quiet)})
}

func newLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// parse parses flags wherever they are among args and returns the
// positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func workerCmd(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	var dirs dirList
	fs.Var(&dirs, "dir", "a batch directory (or a parent of batch directories) this worker accepts; repeatable; default: any")
	slots := fs.Int("slots", 4, "trials run at once on each trial queue")
	queues := fs.String("queues", "default", "comma-separated quota keys whose queues (fabric-trials/<key>) to poll")
	rps := fs.Float64("queue-rps", 0, "cap on trial starts per second per queue, across all workers (0: none)")
	host := fs.String("host", "", "host name recorded in trial.json (default: the hostname)")
	pos, err := parse(fs, args)
	if err != nil || len(pos) > 0 {
		return exitUsage
	}
	logger := newLogger(stderr)
	for i, d := range dirs {
		if dirs[i], err = filepath.Abs(d); err != nil {
			fmt.Fprintln(stderr, "fabric-temporal:", err)
			return exitUsage
		}
	}
	cl, err := c.dial(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "fabric-temporal: dial:", err)
		return exitFailure
	}
	defer cl.Close()
	acts := &ftemporal.Activities{Client: fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithOTLPExporters(otlp.Exporters{})), Host: *host, Logger: logger, Dirs: dirs}
	var keys []string
	for _, k := range strings.Split(*queues, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	ws, err := ftemporal.StartWorkers(cl, acts, ftemporal.WorkerOptions{Queues: keys, Slots: *slots, QueueRPS: *rps})
	if err != nil {
		fmt.Fprintln(stderr, "fabric-temporal:", err)
		return exitFailure
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	qs := make([]string, len(keys))
	for i, k := range keys {
		qs[i] = ftemporal.TrialQueue(k)
	}
	logger.Info("worker ready", "address", c.address, "namespace", c.namespace, "queues", strings.Join(qs, ","), "slots", *slots, "pid", os.Getpid())
	<-ctx.Done()
	logger.Info("worker stopping")
	ws.Stop()
	if err := acts.Close(); err != nil {
		logger.Warn("close batches", "error", err)
	}
	return exitOK
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	dir := fs.String("dir", "", "batch directory (required; on a filesystem every worker shares)")
	follow := fs.Bool("follow", false, "print a line per finished trial")
	hbt := fs.Duration("heartbeat-timeout", ftemporal.DefaultHeartbeatTimeout, "trial heartbeat timeout: a host silent this long is taken as lost")
	retryErrors := fs.String("retry-errors", "", "comma-separated error classes whose committed trials run again (all: every class)")
	rerunChanged := fs.Bool("rerun-changed", false, "rerun trials whose digest changed instead of refusing")
	perRun := fs.Int("children-per-run", ftemporal.ChildrenPerRun, "trial workflows a BatchWorkflow run starts before it continues as new")
	pos, err := parse(fs, args)
	if err != nil || len(pos) != 1 || *dir == "" {
		if err == nil {
			fmt.Fprintln(stderr, "fabric-temporal run: want one SPEC and --dir")
		}
		return exitUsage
	}
	logger := newLogger(stderr)
	spec, err := batch.Load(pos[0])
	if err != nil {
		fmt.Fprintln(stderr, "fabric-temporal:", err)
		return exitUsage
	}
	absDir, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintln(stderr, "fabric-temporal:", err)
		return exitUsage
	}
	specPath, err := filepath.Abs(spec.Path)
	if err != nil {
		fmt.Fprintln(stderr, "fabric-temporal:", err)
		return exitUsage
	}
	opts := batch.Options{Client: fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithOTLPExporters(otlp.Exporters{})), Logger: logger, RerunChanged: *rerunChanged}
	if *retryErrors != "" {
		opts.RetryErrors = strings.Split(*retryErrors, ",")
	}
	bg := context.Background()
	r, err := batch.Open(bg, spec, absDir, opts)
	if err != nil {
		fmt.Fprintln(stderr, "fabric-temporal:", err)
		var ce *fabric.ConfigError
		if errors.As(err, &ce) {
			return exitUsage
		}
		return exitFailure
	}
	defer r.Close()
	cl, err := c.dial(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "fabric-temporal: dial:", err)
		return exitFailure
	}
	defer cl.Close()
	name := spec.Spec.Metadata.Name
	id := ftemporal.BatchWorkflowID(name)
	var we client.WorkflowRun
	if d, err := cl.DescribeWorkflowExecution(bg, id, ""); err == nil && d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		// Still running (its submitter went away): follow it. Listing
		// the pending trials now would move the running ones aside.
		we = cl.GetWorkflow(bg, id, "")
		fmt.Fprintf(stderr, "fabric-temporal: %s is running; following it\n", id)
	} else {
		pending, err := r.Pending()
		if err != nil {
			fmt.Fprintln(stderr, "fabric-temporal:", err)
			return exitFailure
		}
		plan, err := ftemporal.WritePlan(absDir, pending)
		if err != nil {
			fmt.Fprintln(stderr, "fabric-temporal:", err)
			return exitFailure
		}
		ref := ftemporal.BatchRef{URI: ftemporal.DirURI(absDir), Spec: specPath, SpecDigest: spec.Digest, Name: name, PlanFile: plan, HeartbeatTimeoutSeconds: hbt.Seconds()}
		we, err = cl.ExecuteWorkflow(bg, client.StartWorkflowOptions{
			ID:                       id,
			TaskQueue:                ftemporal.BatchQueue,
			WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		}, "BatchWorkflow", ftemporal.BatchState{Ref: ref, ChildrenPerRun: *perRun})
		if err != nil {
			fmt.Fprintln(stderr, "fabric-temporal: submit:", err)
			return exitFailure
		}
		fmt.Fprintf(stderr, "fabric-temporal: submitted %s (run %s): %d of %d trials to run\n", id, we.GetRunID(), len(pending), len(r.Trials()))
	}
	sub := submission{Address: c.address, Namespace: c.namespace, WorkflowID: id, RunID: we.GetRunID()}
	if err := writeJSON(filepath.Join(absDir, submissionFile), sub); err != nil {
		fmt.Fprintln(stderr, "fabric-temporal:", err)
	}

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	waitCtx, cancelWait := context.WithCancel(bg)
	defer cancelWait()
	interrupted := make(chan struct{})
	go func() {
		n := 0
		for range sigs {
			n++
			if n == 1 {
				close(interrupted)
				fmt.Fprintln(stderr, "fabric-temporal: interrupted: cancelling the batch (again to stop waiting)")
				if err := cl.CancelWorkflow(bg, id, ""); err != nil {
					fmt.Fprintln(stderr, "fabric-temporal: cancel:", err)
				}
				continue
			}
			cancelWait()
			return
		}
	}()
	done := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		followProgress(done, r, absDir, *follow, stderr)
	}()
	var res ftemporal.BatchProgress
	werr := we.Get(waitCtx, &res)
	close(done)
	<-progressDone
	wasInterrupted := false
	select {
	case <-interrupted:
		wasInterrupted = true
	default:
	}
	var canceled *sdktemporal.CanceledError
	if errors.As(werr, &canceled) {
		// Cancelled here (SIGINT) or by `fabric-temporal cancel`: the
		// cancelled trials are committed and rerun on resume.
		wasInterrupted = true
	}
	if waitCtx.Err() != nil {
		fmt.Fprintln(stderr, "fabric-temporal: stopped waiting; the batch keeps cancelling on the server")
		return exitInterrupted
	}
	if werr != nil && !wasInterrupted {
		fmt.Fprintln(stderr, "fabric-temporal: batch workflow:", werr)
	}
	sum, err := r.Report(bg)
	if err != nil {
		fmt.Fprintln(stderr, "fabric-temporal: report:", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "%s: %s  completion %.2f (gate %.2f)\n", name, tally(r, absDir), sum.Completion.Fraction, sum.Completion.Gate)
	switch {
	case wasInterrupted:
		fmt.Fprintf(stderr, "fabric-temporal: interrupted: run the same command to resume (%s)\n", absDir)
		return exitInterrupted
	case werr != nil, !sum.Completion.Met, sum.Totals.Errored > 0:
		return exitFailure
	}
	return exitOK
}

type status struct {
	total, missing int
	counts         map[string]int
}

func (s status) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d done", s.total-s.missing, s.total)
	for _, o := range []string{contract.TrialPassed, contract.TrialFailed, contract.TrialErrored, contract.TrialCancelled, contract.TrialSkipped} {
		fmt.Fprintf(&b, "  %s %d", o, s.counts[o])
	}
	return b.String()
}

func readRecord(path string) (contract.BatchTrial, bool) {
	var rec contract.BatchTrial
	data, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(data, &rec) != nil {
		return rec, false
	}
	return rec, true
}

func tally(r *batch.Runner, dir string) status {
	st := status{counts: map[string]int{}}
	for _, t := range r.Trials() {
		st.total++
		rec, ok := readRecord(filepath.Join(dir, t.Dir, "trial.json"))
		if !ok {
			st.missing++
			continue
		}
		st.counts[rec.Outcome]++
	}
	return st
}

// followProgress prints the batch's state to stderr: a line when it
// changes (at most every second; every 10 s at most without follow) and,
// with follow, a line per committed trial.
func followProgress(done <-chan struct{}, r *batch.Runner, dir string, follow bool, stderr io.Writer) {
	seen := map[string]string{}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last, lastAt := "", time.Time{}
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		st := status{counts: map[string]int{}}
		for _, t := range r.Trials() {
			st.total++
			path := filepath.Join(dir, t.Dir, "trial.json")
			rec, ok := readRecord(path)
			if !ok {
				st.missing++
				continue
			}
			st.counts[rec.Outcome]++
			key := fmt.Sprint(rec.Outcome, rec.Attempts, rec.Timings.EndedMillis)
			if follow && seen[t.ID] != key {
				seen[t.ID] = key
				fmt.Fprintf(stderr, "trial %s %s (attempts %d, host %s, %.1fs)\n", t.ID, rec.Outcome, rec.Attempts, rec.Host, rec.Timings.DurationSeconds)
			}
		}
		line := st.String()
		every := 10 * time.Second
		if follow {
			every = time.Second
		}
		if line != last && time.Since(lastAt) >= every {
			fmt.Fprintln(stderr, line)
			last, lastAt = line, time.Now()
		}
	}
}

func cancelCmd(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("cancel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	dir := fs.String("dir", "", "batch directory (required)")
	pos, err := parse(fs, args)
	if err != nil || len(pos) > 0 || *dir == "" {
		return exitUsage
	}
	var sub submission
	data, err := os.ReadFile(filepath.Join(*dir, submissionFile))
	if err == nil {
		err = json.Unmarshal(data, &sub)
	}
	if err != nil {
		fmt.Fprintf(stderr, "fabric-temporal: %s: no submitted batch: %v\n", *dir, err)
		return exitFailure
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["address"] && sub.Address != "" {
		c.address = sub.Address
	}
	if !set["namespace"] && sub.Namespace != "" {
		c.namespace = sub.Namespace
	}
	cl, err := c.dial(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "fabric-temporal: dial:", err)
		return exitFailure
	}
	defer cl.Close()
	if err := cl.CancelWorkflow(context.Background(), sub.WorkflowID, ""); err != nil {
		fmt.Fprintln(stderr, "fabric-temporal: cancel:", err)
		return exitFailure
	}
	fmt.Fprintf(stderr, "fabric-temporal: cancel requested for %s\n", sub.WorkflowID)
	return exitOK
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
