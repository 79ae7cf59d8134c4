package batch

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/fabric-runtime/fabric/contract"
)

// Retry says whether an errored attempt runs again under the spec's retry
// policy, and after what delay: only infrastructure errors of the listed
// classes (default: model, harness, setup), only retryable ones, and at
// most max_attempts in all. A graded, cancelled or skipped trial never
// runs again.
func (r *Runner) Retry(rec contract.BatchTrial) (bool, time.Duration) {
	if rec.Outcome != contract.TrialErrored || rec.Error == nil || !rec.Error.Retryable {
		return false, 0
	}
	p := r.spec.Spec.Retry
	if p == nil || rec.Attempts >= max(p.MaxAttempts, 1) {
		return false, 0
	}
	classes := p.Classes
	if len(classes) == 0 {
		classes = []string{contract.ErrorClassModel, contract.ErrorClassHarness, contract.ErrorClassSetup}
	}
	if !slices.Contains(classes, rec.Error.Class) {
		return false, 0
	}
	delay := time.Second
	if b := p.Backoff; b != nil {
		initial, factor, most := b.InitialSeconds, b.Factor, b.MaxSeconds
		if factor < 1 {
			factor = 2
		}
		d := initial * math.Pow(factor, float64(rec.Attempts-1))
		if most > 0 {
			d = min(d, most)
		}
		delay = time.Duration(d * float64(time.Second))
	}
	if ra := time.Duration(rec.Error.RetryAfterSeconds * float64(time.Second)); ra > delay {
		delay = ra
	}
	return true, delay
}

// Event is what Run tells its observer: a trial started, or ended with its
// record.
type Event struct {
	Kind   string // trial_start, trial_end
	Trial  Trial
	Record *contract.BatchTrial // trial_end
	Phase  string
}

// RunOptions observe a local run.
type RunOptions struct {
	// OnEvent is called for every trial start and end, from the trial's
	// goroutine.
	OnEvent func(Event)
}

// Stats count what one Run did.
type Stats struct {
	Pending, Started, Committed, Retries int
	Outcomes                             map[string]int
	Interrupted                          bool
}

// key is the admission state of one quota key.
type key struct {
	inFlight chan struct{} // nil: no cap
	runs     *rate.Limiter // nil: no cap
	tokens   *rate.Limiter // nil: no cap
	mu       sync.Mutex
	paused   time.Time // no start before this (a rate limit's retry_after)
	open     bool      // circuit open: a non-retryable model error
}

func (k *key) pause(until time.Time) {
	k.mu.Lock()
	if until.After(k.paused) {
		k.paused = until
	}
	k.mu.Unlock()
}

// blocked says why a trial admitted earlier must not start now: the
// budget is spent or the key's circuit opened.
func (k *key) blocked(overBudget bool) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case overBudget:
		return "budget"
	case k.open:
		return "circuit_open"
	}
	return ""
}

// admit waits until the key may start one more trial; false when ctx ends
// or the circuit is open.
func (k *key) admit(ctx context.Context) bool {
	for {
		k.mu.Lock()
		wait, open := time.Until(k.paused), k.open
		k.mu.Unlock()
		if open {
			return false
		}
		if wait <= 0 {
			break
		}
		if !sleep(ctx, wait) {
			return false
		}
	}
	if k.tokens != nil {
		if t := k.tokens.Tokens(); t < 0 {
			if !sleep(ctx, time.Duration(-t/float64(k.tokens.Limit())*float64(time.Second))) {
				return false
			}
		}
	}
	if k.runs != nil && k.runs.Wait(ctx) != nil {
		return false
	}
	return ctx.Err() == nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func acquire(ctx context.Context, sem chan struct{}) bool {
	if sem == nil {
		return true
	}
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func release(sem chan struct{}) {
	if sem != nil {
		<-sem
	}
}

// Run is the local executor: it runs every pending trial, at most
// limits.concurrency at once and within the per-config and per-quota-key
// limits, retries infrastructure errors by policy, commits each final
// record, and stops starting trials when ctx ends (running ones are
// cancelled through Fabric and recorded cancelled) or the budget is spent
// (the rest are recorded skipped). It returns ctx's error when
// interrupted.
func (r *Runner) Run(ctx context.Context, opts RunOptions) (Stats, error) {
	if opts.OnEvent == nil {
		opts.OnEvent = func(Event) {}
	}
	pending, err := r.Pending()
	if err != nil {
		return Stats{}, err
	}
	st := Stats{Pending: len(pending), Outcomes: map[string]int{}}
	limits := r.spec.Spec.Limits
	if limits == nil {
		limits = &contract.BatchLimits{}
	}
	global := make(chan struct{}, max(limits.Concurrency, 1))
	if limits.Concurrency == 0 {
		global = make(chan struct{}, 4)
	}
	perConfig := map[string]chan struct{}{}
	for id, n := range limits.PerConfig {
		perConfig[id] = make(chan struct{}, n)
	}
	keys := map[string]*key{}
	keyOf := func(name string) *key {
		if k, ok := keys[name]; ok {
			return k
		}
		k := &key{}
		for _, q := range limits.Quotas {
			if q.Key != name {
				continue
			}
			if q.MaxInFlight > 0 {
				k.inFlight = make(chan struct{}, q.MaxInFlight)
			}
			if q.RunsPerMinute > 0 {
				k.runs = rate.NewLimiter(rate.Limit(q.RunsPerMinute/60), 1)
			}
			if q.TokensPerMinute > 0 {
				k.tokens = rate.NewLimiter(rate.Limit(q.TokensPerMinute/60), int(q.TokensPerMinute))
			}
		}
		keys[name] = k
		return k
	}
	byConfig := map[string][]Trial{}
	var order []string
	for _, t := range pending {
		if _, ok := byConfig[t.Config]; !ok {
			order = append(order, t.Config)
		}
		byConfig[t.Config] = append(byConfig[t.Config], t)
		keyOf(t.QuotaKey)
	}

	var (
		mu     sync.Mutex
		spent  float64
		wg     sync.WaitGroup
		runErr error
	)
	budget := limits.BudgetUSD
	overBudget := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return budget > 0 && spent >= budget
	}
	commit := func(rec contract.BatchTrial) {
		if err := r.Commit(rec); err != nil {
			mu.Lock()
			runErr = errors.Join(runErr, err)
			mu.Unlock()
		}
		mu.Lock()
		st.Committed++
		st.Outcomes[rec.Outcome]++
		if rec.CostUSD != nil {
			spent += *rec.CostUSD
		}
		mu.Unlock()
		opts.OnEvent(Event{Kind: "trial_end", Trial: mustTrial(r, rec.TrialID), Record: &rec})
	}
	skip := func(t Trial, reason string) {
		now := r.opts.Now().UnixMilli()
		commit(contract.BatchTrial{
			SchemaVersion: contract.BatchTrialSchemaVersion, Batch: r.spec.Spec.Metadata.Name,
			TrialID: t.ID, Task: t.Task, Config: t.Config, Repeat: t.Repeat, Digest: t.Digest,
			Outcome: contract.TrialSkipped, Reason: reason, QuotaKey: t.QuotaKey, CostSource: contract.CostUnknown,
			Timings: contract.TrialTimings{QueuedMillis: now, EndedMillis: now}, Paths: contract.TrialPaths{Dir: t.Dir},
		})
	}
	// One dispatcher a config, in run order within it; they compete for
	// the global slots, so configs interleave.
	for _, id := range order {
		trials := byConfig[id]
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfgSem := perConfig[id]
			for _, t := range trials {
				k := keyOf(t.QuotaKey)
				if ctx.Err() != nil {
					return
				}
				if overBudget() {
					skip(t, "budget")
					continue
				}
				if !acquire(ctx, cfgSem) {
					return
				}
				if !acquire(ctx, k.inFlight) {
					release(cfgSem)
					return
				}
				if !k.admit(ctx) {
					release(k.inFlight)
					release(cfgSem)
					if ctx.Err() != nil {
						return
					}
					skip(t, "circuit_open")
					continue
				}
				if !acquire(ctx, global) {
					release(k.inFlight)
					release(cfgSem)
					return
				}
				// Both may have changed while this trial waited for a slot.
				if reason := k.blocked(overBudget()); reason != "" {
					release(global)
					release(k.inFlight)
					release(cfgSem)
					skip(t, reason)
					continue
				}
				mu.Lock()
				st.Started++
				mu.Unlock()
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer release(cfgSem)
					defer release(k.inFlight)
					defer release(global)
					rec := r.runTrial(ctx, t, k, opts, &mu, &st)
					commit(rec)
				}()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		st.Interrupted = true
		return st, errors.Join(ctx.Err(), runErr)
	}
	return st, runErr
}

// runTrial runs a trial's attempts until one is final, pausing its key on
// a rate limit and opening its circuit on an error no retry can fix.
func (r *Runner) runTrial(ctx context.Context, t Trial, k *key, opts RunOptions, mu *sync.Mutex, st *Stats) contract.BatchTrial {
	queued := r.opts.Now().UnixMilli()
	var history []contract.AttemptNote
	for attempt := 1; ; attempt++ {
		opts.OnEvent(Event{Kind: "trial_start", Trial: t, Phase: PhaseSetup})
		rec := r.Attempt(ctx, t, attempt, func(p Progress) {})
		rec.Timings.QueuedMillis = queued
		rec.History = history
		if rec.Usage != nil && k.tokens != nil {
			n := int(min(rec.Usage.InputTokens+rec.Usage.OutputTokens, int64(k.tokens.Burst())))
			k.tokens.ReserveN(time.Now(), n)
		}
		if e := rec.Error; e != nil && e.RetryAfterSeconds > 0 {
			k.pause(time.Now().Add(time.Duration(e.RetryAfterSeconds * float64(time.Second))))
		}
		if isCircuit(rec.Error) {
			k.mu.Lock()
			k.open = true
			k.mu.Unlock()
		}
		again, delay := r.Retry(rec)
		if !again || ctx.Err() != nil {
			return rec
		}
		history = append(history, contract.AttemptNote{Attempt: attempt, Outcome: rec.Outcome, Error: rec.Error})
		mu.Lock()
		st.Retries++
		mu.Unlock()
		if !sleep(ctx, delay) || !k.admit(ctx) {
			if ctx.Err() != nil {
				rec.Outcome, rec.Reason, rec.Error = contract.TrialCancelled, "interrupted", nil
			}
			return rec
		}
	}
}

func mustTrial(r *Runner, id string) Trial {
	t, _ := r.Trial(id)
	return t
}
