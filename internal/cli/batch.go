package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/batch"
	"github.com/fabric-runtime/fabric/contract"
)

// ExitInterrupted ends a batch run that was interrupted and can resume.
const ExitInterrupted = 3

func (a *app) batchCommand() *cobra.Command {
	return a.group(&cobra.Command{
		Use:   "batch",
		Short: "Run tasks x configs x repeats and report pass rates (fabric.batch/v1alpha1)",
	}, func(cmd *cobra.Command) {
		cmd.AddCommand(a.batchRunCommand(), a.batchStatusCommand(), a.batchReportCommand(), a.batchRegradeCommand(),
			a.batchTemporalCommand("worker", "Serve trials as a Temporal worker (fabric-temporal worker; docs/batch-temporal.md)"),
			a.batchTemporalCommand("cancel", "Cancel a batch running on Temporal (fabric-temporal cancel --dir DIR)"))
	})
}

// batchTemporalCommand passes its arguments to fabric-temporal's
// subcommand of the same name (flags included: fabric-temporal parses
// them).
func (a *app) batchTemporalCommand(name, short string) *cobra.Command {
	return &cobra.Command{
		Use:                name + " [fabric-temporal " + name + " flags]",
		Short:              short,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTemporal(cmd.Context(), append([]string{name}, args...), a.stdio.Out, a.stdio.Err)
		},
	}
}

type batchRunFlags struct {
	dir          string
	retryErrors  string
	rerunChanged bool
	backend      string
	address      string
	namespace    string
	interval     time.Duration
}

func (a *app) batchRunCommand() *cobra.Command {
	var f batchRunFlags
	cmd := &cobra.Command{
		Use:   "run SPEC",
		Short: "Run (or resume) a batch; rerunning the same command runs only the unfinished trials",
		Long: `Runs every trial of the batch spec that has no record in the batch directory
(default runs/<metadata.name> beside the spec). Trials already passed or failed are
never run again; errored trials are reopened with --retry-errors[=class,...].
Progress goes to stderr (one redrawn line on a terminal, a line every 10 s
otherwise); the leaderboard (text) or the summary (json), or one event per
trial (jsonl) goes to stdout. Ctrl-C cancels the running trials through Fabric
and exits 3; run the same command again to resume.

Exit codes: 0 complete and the completion gate met, 1 the gate not met or
errors, 2 usage or spec errors (including batch_spec_changed), 3 interrupted.`,
		Args:        cobra.ExactArgs(1),
		Annotations: map[string]string{terminalOutput: "text"},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.batchRun(cmd.Context(), args[0], f)
		},
	}
	cmd.Flags().StringVar(&f.dir, "dir", "", "batch directory (default: runs/<metadata.name> beside the spec)")
	cmd.Flags().StringVar(&f.retryErrors, "retry-errors", "", "reopen errored trials: all, or a comma-separated list of classes (model, harness, setup, grader, fabric)")
	cmd.Flags().Lookup("retry-errors").NoOptDefVal = "all"
	cmd.Flags().BoolVar(&f.rerunChanged, "rerun-changed", false, "rerun done trials whose definition changed instead of refusing the directory")
	cmd.Flags().StringVar(&f.backend, "backend", "local", "executor: local (this process) or temporal (fabric-temporal run: trials run on Temporal workers)")
	cmd.Flags().StringVar(&f.address, "address", "", "with --backend temporal: the Temporal frontend host:port (default $TEMPORAL_ADDRESS, else localhost:7233)")
	cmd.Flags().StringVar(&f.namespace, "namespace", "", "with --backend temporal: the Temporal namespace (default $TEMPORAL_NAMESPACE, else default)")
	cmd.Flags().DurationVar(&f.interval, "progress-interval", 10*time.Second, "how often a progress line is printed when stderr is not a terminal")
	_ = cmd.Flags().MarkHidden("progress-interval")
	return cmd
}

// batchDir is --dir, else runs/<name> beside the spec.
func batchDir(dir string, s *batch.Spec) string {
	if dir != "" {
		return dir
	}
	return filepath.Join(s.BaseDir, "runs", s.Spec.Metadata.Name)
}

func (a *app) batchSpecFailure(err error) error {
	var es batch.Errors
	if errors.As(err, &es) {
		if a.output == "text" {
			for _, e := range es {
				fmt.Fprintf(a.stdio.Err, "error: %s [%s]\n", e.Error(), e.Code)
			}
		} else {
			_ = a.writeJSON(map[string]any{"status": "failed", "errors": es})
		}
		return silentExit(ExitUsage)
	}
	var re *batch.RunError
	if errors.As(err, &re) {
		if a.output == "text" {
			fmt.Fprintf(a.stdio.Err, "error: %s [%s]\n", re.Message, re.Code)
		} else {
			_ = a.writeJSON(map[string]any{"status": "failed", "error": map[string]any{"code": re.Code, "message": re.Message, "trials": re.Trials}})
		}
		if re.Code == batch.CodeSpecChanged || re.Code == batch.CodeNotABatch {
			return silentExit(ExitUsage)
		}
		return silentExit(ExitFailure)
	}
	return a.failure(err)
}

func (a *app) batchRun(ctx context.Context, specPath string, f batchRunFlags) error {
	if f.backend != "local" && f.backend != "temporal" {
		return &exitError{code: ExitUsage, err: fmt.Errorf("--backend is local or temporal, not %q", f.backend)}
	}
	s, err := batch.Load(specPath)
	if err != nil {
		return a.batchSpecFailure(err)
	}
	if f.backend == "temporal" {
		return a.batchRunTemporal(ctx, specPath, batchDir(f.dir, s), f)
	}
	opts := batch.Options{Client: a.client()}
	if f.retryErrors != "" {
		opts.RetryErrors = strings.Split(f.retryErrors, ",")
	}
	opts.RerunChanged = f.rerunChanged
	// A second interrupt ends the process at once; the adapter hosts die
	// with it (they are killed when their parent goes) and the batch
	// resumes from its records.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		n := 0
		for range sigs {
			if n++; n >= 2 {
				fmt.Fprintln(a.stdio.Err, "fabric batch: interrupted twice; exiting now (the batch resumes when run again)")
				os.Exit(ExitInterrupted)
			}
		}
	}()
	r, err := batch.Open(ctx, s, batchDir(f.dir, s), opts)
	if err != nil {
		return a.batchSpecFailure(err)
	}
	defer r.Close()
	prog := newBatchProgress(a.stdio.Err, r, f.interval, isTerminal(a.stdio.Err))
	jsonl := a.output == "jsonl"
	var outMu sync.Mutex
	onEvent := func(e batch.Event) {
		prog.event(e)
		if jsonl {
			outMu.Lock()
			defer outMu.Unlock()
			ev := map[string]any{"event": e.Kind, "trial_id": e.Trial.ID}
			if e.Record != nil {
				ev["outcome"], ev["timed_out"], ev["attempts"] = e.Record.Outcome, e.Record.TimedOut, e.Record.Attempts
				if e.Record.Error != nil {
					ev["error"] = e.Record.Error
				}
			}
			_ = a.writeJSON(ev)
		}
	}
	prog.start()
	_, runErr := r.Run(ctx, batch.RunOptions{OnEvent: onEvent})
	prog.stop()
	interrupted := ctx.Err() != nil
	if runErr != nil && !interrupted {
		return a.failure(runErr)
	}
	sum, err := r.Report(context.WithoutCancel(ctx))
	if err != nil {
		return a.failure(err)
	}
	a.printBatchSummary(r, sum)
	switch {
	case interrupted:
		fmt.Fprintf(a.stdio.Err, "interrupted: run the same command to resume (%s)\n", r.Dir())
		return silentExit(ExitInterrupted)
	case !sum.Completion.Met || hasErrors(sum):
		return silentExit(ExitFailure)
	}
	return nil
}

// batchRunTemporal hands the batch to fabric-temporal run, which opens
// the same directory, submits the batch to Temporal, follows it and writes
// the same report.
func (a *app) batchRunTemporal(ctx context.Context, spec, dir string, f batchRunFlags) error {
	args := []string{"run", spec, "--dir", dir, "--follow"}
	if f.address != "" {
		args = append(args, "--address", f.address)
	}
	if f.namespace != "" {
		args = append(args, "--namespace", f.namespace)
	}
	if f.retryErrors != "" {
		args = append(args, "--retry-errors", f.retryErrors)
	}
	if f.rerunChanged {
		args = append(args, "--rerun-changed")
	}
	return runTemporal(ctx, args, a.stdio.Out, a.stdio.Err)
}

func hasErrors(s *contract.BatchSummary) bool {
	for _, c := range s.Configs {
		for _, n := range c.Errors {
			if n > 0 {
				return true
			}
		}
	}
	return false
}

// printBatchSummary writes the leaderboard (text), the summary (json) or
// the summary as the last line (jsonl).
func (a *app) printBatchSummary(r *batch.Runner, s *contract.BatchSummary) {
	if a.output != "text" {
		if a.output == "jsonl" {
			_ = a.writeJSON(map[string]any{"event": "summary", "summary": s})
			return
		}
		_ = a.writeJSON(s)
		return
	}
	w := a.stdio.Out
	fmt.Fprintf(w, "batch %s: %s\n", s.Batch, filepath.Join(r.Dir(), "report", "index.html"))
	fmt.Fprintf(w, "%-20s %7s %7s %7s %6s %6s %7s %9s\n", "config", "trials", "passed", "failed", "error", "t/o", "pass@1", "cost")
	for _, c := range s.Configs {
		errs := 0
		for _, n := range c.Errors {
			errs += n
		}
		cost := "-"
		if c.CostUSD.Total != nil {
			cost = fmt.Sprintf("$%.2f", *c.CostUSD.Total)
		}
		pass := "-"
		if c.PassAt1.Strict != nil {
			pass = fmt.Sprintf("%.3f", *c.PassAt1.Strict)
		}
		fmt.Fprintf(w, "%-20s %7d %7d %7d %6d %6d %7s %9s\n", c.Config, c.Planned, c.Passed, c.Failed, errs, c.TimedOut, pass, cost)
	}
	gate := "met"
	if !s.Completion.Met {
		gate = "NOT met"
	}
	fmt.Fprintf(w, "completion %.0f%% (gate %.0f%%: %s)\n", 100*s.Completion.Fraction, 100*s.Completion.Gate, gate)
}

func (a *app) batchStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status DIR",
		Short: "Count a batch directory's trials by outcome (works while it runs)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := batch.ReadStatus(args[0])
			if err != nil {
				return a.batchSpecFailure(err)
			}
			if a.output != "text" {
				return a.writeJSON(st)
			}
			fmt.Fprintf(a.stdio.Out, "batch %s: %d planned, %d done, %d pending\n", st.Batch, st.Planned, st.Done, st.Pending)
			keys := make([]string, 0, len(st.Outcomes))
			for k := range st.Outcomes {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(a.stdio.Out, "  %-10s %d\n", k, st.Outcomes[k])
			}
			return nil
		},
	}
}

func (a *app) batchReportCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Write the batch's report (report/index.html, summary.json, trials.csv, tasks.csv) from its records; works mid-run",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sum, err := batch.WriteReport(args[0])
			if err != nil {
				return a.batchSpecFailure(err)
			}
			if a.output != "text" {
				return a.writeJSON(sum)
			}
			fmt.Fprintln(a.stdio.Out, filepath.Join(args[0], "report", "index.html"))
			return nil
		},
	}
}

func (a *app) batchRegradeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "regrade SPEC DIR",
		Short: "Run the graders again on the kept workspaces and rewrite the records and the report",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := batch.Load(args[0])
			if err != nil {
				return a.batchSpecFailure(err)
			}
			r, err := batch.Open(cmd.Context(), s, args[1], batch.Options{Client: a.client(), Regrade: true})
			if err != nil {
				return a.batchSpecFailure(err)
			}
			defer r.Close()
			n, err := r.Regrade(cmd.Context())
			if err != nil {
				return a.failure(err)
			}
			sum, err := r.Report(cmd.Context())
			if err != nil {
				return a.failure(err)
			}
			fmt.Fprintf(a.stdio.Err, "regraded %d trial(s)\n", n)
			a.printBatchSummary(r, sum)
			return nil
		},
	}
}

// batchProgress draws the run's progress on stderr: one redrawn line on a
// terminal, a plain line every interval otherwise.
type batchProgress struct {
	w        io.Writer
	tty      bool
	interval time.Duration
	total    int
	started  time.Time
	mu       sync.Mutex
	counts   map[string]int
	running  map[string]string
	cost     float64
	done     chan struct{}
	wg       sync.WaitGroup
	drawMu   sync.Mutex
}

func newBatchProgress(w io.Writer, r *batch.Runner, interval time.Duration, tty bool) *batchProgress {
	p := &batchProgress{w: w, tty: tty, interval: interval, counts: map[string]int{}, running: map[string]string{}, done: make(chan struct{})}
	recs, _ := r.Records()
	p.total = len(r.Trials())
	for _, rec := range recs {
		p.counts[rec.Outcome]++
		if rec.CostUSD != nil {
			p.cost += *rec.CostUSD
		}
	}
	return p
}

func (p *batchProgress) start() {
	p.started = time.Now()
	every := p.interval
	if p.tty {
		every = time.Second
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.draw()
			case <-p.done:
				return
			}
		}
	}()
}

func (p *batchProgress) stop() {
	close(p.done)
	p.wg.Wait()
	p.draw()
	if p.tty {
		fmt.Fprintln(p.w)
	}
}

func (p *batchProgress) event(e batch.Event) {
	p.mu.Lock()
	switch e.Kind {
	case "trial_start":
		p.running[e.Trial.ID] = e.Phase
	case "trial_end":
		delete(p.running, e.Trial.ID)
		p.counts[e.Record.Outcome]++
		if e.Record.CostUSD != nil {
			p.cost += *e.Record.CostUSD
		}
	}
	p.mu.Unlock()
	if p.tty {
		p.draw()
	}
}

func (p *batchProgress) line() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.counts
	done := c[contract.TrialPassed] + c[contract.TrialFailed] + c[contract.TrialErrored] + c[contract.TrialCancelled] + c[contract.TrialSkipped]
	scored := c[contract.TrialPassed] + c[contract.TrialFailed]
	pass := "-"
	if scored > 0 {
		pass = fmt.Sprintf("%.2f", float64(c[contract.TrialPassed])/float64(scored))
	}
	s := fmt.Sprintf("%d/%d  passed %d  failed %d  error %d  running %d  pass@1 %s",
		done, p.total, c[contract.TrialPassed], c[contract.TrialFailed], c[contract.TrialErrored], len(p.running), pass)
	if p.cost > 0 {
		s += fmt.Sprintf("  $%.2f", p.cost)
	}
	s += "  " + time.Since(p.started).Round(time.Second).String()
	return s
}

func (p *batchProgress) draw() {
	l := p.line()
	p.drawMu.Lock()
	defer p.drawMu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", l)
		return
	}
	fmt.Fprintln(p.w, l)
}
