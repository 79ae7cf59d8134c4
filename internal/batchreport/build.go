package batchreport

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/batchstats"
)

// PlannedTrial is one trial the batch's expansion planned.
type PlannedTrial struct {
	ID     string
	Task   string
	Config string
	Repeat int
}

// Input is what a report is built from.
type Input struct {
	Spec          contract.BatchSpec
	SpecDigest    string
	FabricVersion string
	// Planned lists every planned trial, so that trials without a record
	// count as pending. When empty, the records are the plan.
	Planned []PlannedTrial
	// Trials are the trial records (trial.json), in any order.
	Trials []contract.BatchTrial
}

// Defaults of the report options.
const (
	DefaultCompletionGate = 0.9
	DefaultCILevel        = 0.95
	DefaultResamples      = 2000
	DefaultSeed           = 1
)

// CI methods.
const (
	MethodAuto      = "auto"
	MethodWilson    = "wilson"
	MethodBootstrap = "bootstrap"
)

// Paired tests.
const (
	TestMcNemar = "mcnemar"
	TestSign    = "sign"
)

// cellKey is one task and config.
type cellKey struct{ task, config string }

// cell gathers one task and config's trials.
type cell struct {
	planned []PlannedTrial
	records []*contract.BatchTrial
}

// model is the indexed input Build and the page share.
type model struct {
	in      Input
	configs []string
	tasks   []string
	cells   map[cellKey]*cell
	byID    map[string]*contract.BatchTrial
	ci      contract.BatchCISummary
	boot    batchstats.BootstrapOptions
	ks      []int
	gate    float64
}

func newModel(in Input) (*model, error) {
	m := &model{in: in, cells: map[cellKey]*cell{}, byID: map[string]*contract.BatchTrial{}}
	planned := in.Planned
	if len(planned) == 0 {
		for _, t := range in.Trials {
			planned = append(planned, PlannedTrial{ID: t.TrialID, Task: t.Task, Config: t.Config, Repeat: t.Repeat})
		}
	}
	seenPlan := map[string]bool{}
	addPlan := func(p PlannedTrial) {
		seenPlan[p.ID] = true
		k := cellKey{p.Task, p.Config}
		c := m.cells[k]
		if c == nil {
			c = &cell{}
			m.cells[k] = c
		}
		c.planned = append(c.planned, p)
	}
	for _, p := range planned {
		if seenPlan[p.ID] {
			return nil, fmt.Errorf("batchreport: trial %q is planned twice", p.ID)
		}
		addPlan(p)
	}
	for i := range in.Trials {
		t := &in.Trials[i]
		if t.TrialID == "" {
			return nil, fmt.Errorf("batchreport: a trial record of task %q, config %q has no trial_id", t.Task, t.Config)
		}
		if m.byID[t.TrialID] != nil {
			return nil, fmt.Errorf("batchreport: two records of trial %q", t.TrialID)
		}
		m.byID[t.TrialID] = t
		if !seenPlan[t.TrialID] {
			// A record outside the plan still counts: it was run.
			addPlan(PlannedTrial{ID: t.TrialID, Task: t.Task, Config: t.Config, Repeat: t.Repeat})
		}
		m.cells[cellKey{t.Task, t.Config}].records = append(m.cells[cellKey{t.Task, t.Config}].records, t)
	}
	for _, c := range m.cells {
		slices.SortFunc(c.records, func(a, b *contract.BatchTrial) int { return cmp.Compare(a.TrialID, b.TrialID) })
		slices.SortFunc(c.planned, func(a, b PlannedTrial) int { return cmp.Compare(a.ID, b.ID) })
	}

	// Configs in the spec's order, then any others sorted.
	inSpec := map[string]bool{}
	for _, c := range in.Spec.Configs {
		if !inSpec[c.ID] {
			m.configs = append(m.configs, c.ID)
			inSpec[c.ID] = true
		}
	}
	var extraConfigs []string
	taskSet := map[string]bool{}
	for k := range m.cells {
		taskSet[k.task] = true
		if !inSpec[k.config] && !slices.Contains(extraConfigs, k.config) {
			extraConfigs = append(extraConfigs, k.config)
		}
	}
	slices.Sort(extraConfigs)
	m.configs = append(m.configs, extraConfigs...)
	for t := range taskSet {
		m.tasks = append(m.tasks, t)
	}
	slices.Sort(m.tasks)
	return m, m.options()
}

func (m *model) options() error {
	spec := m.in.Spec
	repeats := max(spec.Repeats, 1)
	ro := spec.Report
	if ro == nil {
		ro = &contract.ReportOptions{}
	}
	m.ks = slices.Clone(ro.K)
	if len(m.ks) == 0 {
		m.ks = []int{1}
		if repeats > 1 {
			m.ks = append(m.ks, repeats)
		}
	}
	slices.Sort(m.ks)
	m.ks = slices.Compact(m.ks)
	for _, k := range m.ks {
		if k < 1 {
			return fmt.Errorf("batchreport: report.k %d is below 1", k)
		}
	}
	m.gate = DefaultCompletionGate
	if ro.CompletionGate != nil {
		m.gate = *ro.CompletionGate
	}
	ci := contract.CIOptions{}
	if ro.CI != nil {
		ci = *ro.CI
	}
	method := ci.Method
	switch method {
	case "", MethodAuto:
		method = MethodWilson
		if m.maxTrialsPerCell() > 1 {
			method = MethodBootstrap
		}
	case MethodWilson, MethodBootstrap:
	default:
		return fmt.Errorf("batchreport: unknown report.ci.method %q (auto, wilson, bootstrap)", ci.Method)
	}
	level := ci.Level
	if level == 0 {
		level = DefaultCILevel
	}
	if !(level > 0 && level < 1) {
		return fmt.Errorf("batchreport: report.ci.level %v is not in (0, 1)", level)
	}
	m.ci = contract.BatchCISummary{Method: method, Level: level}
	if method == MethodBootstrap {
		m.ci.Resamples, m.ci.Seed = ci.Resamples, ci.Seed
		if m.ci.Resamples == 0 {
			m.ci.Resamples = DefaultResamples
		}
		if m.ci.Seed == 0 {
			m.ci.Seed = DefaultSeed
		}
	}
	// Paired comparisons always use the bootstrap for their interval.
	m.boot = batchstats.BootstrapOptions{Resamples: DefaultResamples, Seed: DefaultSeed, Level: level}
	if ci.Resamples > 0 {
		m.boot.Resamples = ci.Resamples
	}
	if ci.Seed != 0 {
		m.boot.Seed = uint64(ci.Seed)
	}
	return nil
}

// maxTrialsPerCell is the most planned trials of any task and config:
// one means every config has one repeat.
func (m *model) maxTrialsPerCell() int {
	n := max(m.in.Spec.Repeats, 0)
	for _, c := range m.cells {
		n = max(n, len(c.planned))
	}
	return n
}

// counts are one cell's (or config's) trial counts.
func countOf(c *cell) contract.BatchCounts {
	var n contract.BatchCounts
	if c == nil {
		return n
	}
	n.Planned = len(c.planned)
	for _, r := range c.records {
		switch r.Outcome {
		case contract.TrialPassed:
			n.Passed++
		case contract.TrialFailed:
			n.Failed++
		case contract.TrialErrored:
			n.Errored++
		case contract.TrialCancelled:
			n.Cancelled++
		case contract.TrialSkipped:
			n.Skipped++
		}
		if r.TimedOut && scored(r) {
			n.TimedOut++
		}
	}
	n.Scored = n.Passed + n.Failed
	n.Pending = max(n.Planned-len(c.records), 0)
	return n
}

func scored(r *contract.BatchTrial) bool {
	return r.Outcome == contract.TrialPassed || r.Outcome == contract.TrialFailed
}

func addCounts(a *contract.BatchCounts, b contract.BatchCounts) {
	a.Planned += b.Planned
	a.Scored += b.Scored
	a.Passed += b.Passed
	a.Failed += b.Failed
	a.TimedOut += b.TimedOut
	a.Errored += b.Errored
	a.Cancelled += b.Cancelled
	a.Skipped += b.Skipped
	a.Pending += b.Pending
}

// Build computes the batch's summary. It fails on an inconsistent input
// (a trial planned or recorded twice, a bad report option).
func Build(in Input) (*contract.BatchSummary, error) {
	m, err := newModel(in)
	if err != nil {
		return nil, err
	}
	return m.summary()
}

func (m *model) summary() (*contract.BatchSummary, error) {
	s := &contract.BatchSummary{
		SchemaVersion: contract.BatchSummarySchemaVersion,
		Batch:         m.in.Spec.Metadata.Name,
		SpecDigest:    m.in.SpecDigest,
		FabricVersion: m.in.FabricVersion,
		Repeats:       max(m.in.Spec.Repeats, 1),
		CI:            m.ci,
		Configs:       []contract.BatchConfigSummary{},
		Pairs:         []contract.BatchPairSummary{},
		Tasks:         []contract.BatchTaskSummary{},
	}
	if s.CI.Level != 0 {
		s.CI.Level = round6(s.CI.Level)
	}
	if r := m.in.Spec.Report; r != nil {
		s.Baseline = r.Baseline
	}
	var harnesses, adapters, models []string
	for i := range m.in.Trials {
		t := &m.in.Trials[i]
		if t.Timings.StartedMillis > 0 && (s.StartedMillis == 0 || t.Timings.StartedMillis < s.StartedMillis) {
			s.StartedMillis = t.Timings.StartedMillis
		}
		s.EndedMillis = max(s.EndedMillis, t.Timings.EndedMillis)
		harnesses = addSorted(harnesses, t.Harness)
		adapters = addSorted(adapters, t.AdapterID)
		models = addSorted(models, t.Model)
	}
	s.Harnesses, s.Adapters, s.Models = harnesses, adapters, models
	if s.StartedMillis > 0 && s.EndedMillis >= s.StartedMillis {
		s.WallSeconds = round6(float64(s.EndedMillis-s.StartedMillis) / 1000)
	}
	for _, cfg := range m.configs {
		cs, err := m.configSummary(cfg)
		if err != nil {
			return nil, err
		}
		s.Configs = append(s.Configs, cs)
		addCounts(&s.Totals, cs.BatchCounts)
	}
	for _, k := range m.ks {
		if k <= s.Repeats {
			s.K = append(s.K, k)
		}
	}
	for _, task := range m.tasks {
		ts := contract.BatchTaskSummary{Task: task, PerConfig: map[string]contract.BatchTaskCell{}}
		for _, cfg := range m.configs {
			c := m.cells[cellKey{task, cfg}]
			if c == nil {
				continue
			}
			n := countOf(c)
			ts.PerConfig[cfg] = contract.BatchTaskCell{Passes: n.Passed, Trials: n.Scored, Errors: n.Errored, Planned: n.Planned, Pending: n.Pending}
		}
		s.Tasks = append(s.Tasks, ts)
	}
	pairs, err := m.pairs(s.Baseline)
	if err != nil {
		return nil, err
	}
	s.Pairs = pairs
	s.Completion.Gate = round6(m.gate)
	if s.Totals.Planned > 0 {
		f := float64(s.Totals.Scored) / float64(s.Totals.Planned)
		s.Completion.Fraction = round6(f)
		s.Completion.Met = f >= m.gate
	}
	return s, nil
}

func addSorted(list []string, v string) []string {
	if v == "" {
		return list
	}
	i, found := slices.BinarySearch(list, v)
	if found {
		return list
	}
	return slices.Insert(list, i, v)
}

// taskRates are a config's per-task pass fractions: strict (over planned)
// for every task with a planned trial, scored for every task with a scored
// trial, and the per-task counts for pass@k.
type taskRates struct {
	strict, scored []float64
	counts         []batchstats.TaskCount
}

func (m *model) rates(cfg string) taskRates {
	var r taskRates
	for _, task := range m.tasks {
		c := m.cells[cellKey{task, cfg}]
		if c == nil || len(c.planned) == 0 {
			continue
		}
		n := countOf(c)
		r.strict = append(r.strict, float64(n.Passed)/float64(n.Planned))
		if n.Scored > 0 {
			r.scored = append(r.scored, float64(n.Passed)/float64(n.Scored))
			r.counts = append(r.counts, batchstats.TaskCount{N: n.Scored, C: n.Passed})
		}
	}
	return r
}

func (m *model) configSummary(cfg string) (contract.BatchConfigSummary, error) {
	cs := contract.BatchConfigSummary{
		Config:  cfg,
		Errors:  map[string]int{},
		PassAt1: contract.BatchPassAt1{Method: m.ci.Method},
		CostUSD: contract.BatchCost{SourceCounts: map[string]int{}},
	}
	var durations []float64
	var tokens contract.BatchTokens
	var cost float64
	var costed int
	for _, task := range m.tasks {
		c := m.cells[cellKey{task, cfg}]
		if c == nil {
			continue
		}
		cs.Tasks++
		addCounts(&cs.BatchCounts, countOf(c))
		for _, r := range c.records {
			if r.Outcome == contract.TrialErrored {
				class := "unclassified"
				if r.Error != nil && r.Error.Class != "" {
					class = r.Error.Class
				}
				cs.Errors[class]++
			}
			cs.Retries += max(r.Attempts-1, 0)
			cs.Harnesses = addSorted(cs.Harnesses, r.Harness)
			cs.Models = addSorted(cs.Models, r.Model)
			if r.Outcome != contract.TrialSkipped {
				durations = append(durations, r.Timings.DurationSeconds)
			}
			if u := r.Usage; u != nil {
				tokens.N++
				tokens.Input += float64(u.InputTokens)
				tokens.Cached += float64(u.CachedInputTokens)
				tokens.Output += float64(u.OutputTokens)
			}
			if r.CostSource != "" {
				cs.CostUSD.SourceCounts[r.CostSource]++
			}
			if r.CostUSD != nil {
				cost += *r.CostUSD
				costed++
			}
		}
	}
	if len(durations) > 0 {
		q := &contract.BatchQuantiles{N: len(durations)}
		for _, p := range []struct {
			at  float64
			dst *float64
		}{{0.5, &q.P50}, {0.9, &q.P90}, {0.99, &q.P99}} {
			v, err := batchstats.Quantile(durations, p.at)
			if err != nil {
				return cs, err
			}
			*p.dst = round6(v)
		}
		cs.DurationS = q
	}
	if tokens.N > 0 {
		n := float64(tokens.N)
		tokens.Input, tokens.Cached, tokens.Output = round6(tokens.Input/n), round6(tokens.Cached/n), round6(tokens.Output/n)
		cs.Tokens = &tokens
	}
	if costed > 0 {
		cs.CostUSD.Total = ptr(round6(cost))
		cs.CostUSD.PerTrial = ptr(round6(cost / float64(costed)))
		if cs.Passed > 0 {
			cs.CostUSD.PerPass = ptr(round6(cost / float64(cs.Passed)))
		}
	}
	if err := m.passAt1(&cs); err != nil {
		return cs, fmt.Errorf("batchreport: config %q: %w", cfg, err)
	}
	r := m.rates(cfg)
	for _, k := range m.ks {
		at, errAt := batchstats.MeanPassAtK(r.counts, k)
		hat, errHat := batchstats.MeanPassHatK(r.counts, k)
		if errAt != nil || errHat != nil {
			continue // k above some task's scored trials: undefined
		}
		if cs.PassAtK == nil {
			cs.PassAtK, cs.PassHatK = map[string]float64{}, map[string]float64{}
		}
		cs.PassAtK[strconv.Itoa(k)] = round6(at)
		cs.PassHatK[strconv.Itoa(k)] = round6(hat)
	}
	return cs, nil
}

func (m *model) passAt1(cs *contract.BatchConfigSummary) error {
	r := m.rates(cs.Config)
	p := &cs.PassAt1
	interval := func(values []float64, passes, n int) (lo, hi float64, err error) {
		if m.ci.Method == MethodWilson {
			return batchstats.Wilson(passes, n, m.ci.Level)
		}
		return batchstats.BootstrapMean(values, batchstats.BootstrapOptions{Resamples: m.ci.Resamples, Seed: uint64(m.ci.Seed), Level: m.ci.Level})
	}
	if len(r.strict) > 0 {
		mean, se, err := batchstats.MeanSE(r.strict)
		if err != nil {
			return err
		}
		lo, hi, err := interval(r.strict, cs.Passed, cs.Planned)
		if err != nil {
			return err
		}
		p.Strict, p.SE, p.CILow, p.CIHigh = ptr(round6(mean)), ptr(round6(se)), ptr(round6(lo)), ptr(round6(hi))
	}
	if len(r.scored) > 0 {
		mean, _, err := batchstats.MeanSE(r.scored)
		if err != nil {
			return err
		}
		lo, hi, err := interval(r.scored, cs.Passed, cs.Scored)
		if err != nil {
			return err
		}
		p.Scored, p.ScoredCILow, p.ScoredCIHigh = ptr(round6(mean)), ptr(round6(lo)), ptr(round6(hi))
	}
	return nil
}

// pairs compares every two configs on the tasks both scored; with a
// baseline, the baseline is always b.
func (m *model) pairs(baseline string) ([]contract.BatchPairSummary, error) {
	out := []contract.BatchPairSummary{}
	for i, a := range m.configs {
		for _, b := range m.configs[i+1:] {
			if a == baseline {
				a, b = b, a
			}
			p, ok, err := m.pair(a, b)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, p)
			}
		}
	}
	ps := make([]float64, len(out))
	for i, p := range out {
		ps[i] = p.PValue
	}
	for i, adj := range batchstats.Holm(ps) {
		out[i].PHolm = round6(adj)
	}
	return out, nil
}

func (m *model) pair(a, b string) (contract.BatchPairSummary, bool, error) {
	var va, vb []float64
	single := true
	for _, task := range m.tasks {
		na, nb := countOf(m.cells[cellKey{task, a}]), countOf(m.cells[cellKey{task, b}])
		if na.Scored == 0 || nb.Scored == 0 {
			continue
		}
		single = single && na.Scored == 1 && nb.Scored == 1
		va = append(va, float64(na.Passed)/float64(na.Scored))
		vb = append(vb, float64(nb.Passed)/float64(nb.Scored))
	}
	if len(va) == 0 {
		return contract.BatchPairSummary{}, false, nil
	}
	d, err := batchstats.ComparePaired(va, vb, m.boot)
	if err != nil {
		return contract.BatchPairSummary{}, false, fmt.Errorf("batchreport: compare %q and %q: %w", a, b, err)
	}
	test := TestSign
	if single {
		test = TestMcNemar
	}
	return contract.BatchPairSummary{
		A: a, B: b, Tasks: len(va), ABetter: d.ABetter, BBetter: d.BBetter, Ties: d.Ties,
		MeanDiff: round6(d.MeanDiff), CILow: round6(d.Low), CIHigh: round6(d.High),
		PValue: round6(d.P), Test: test,
	}, true, nil
}

func ptr[T any](v T) *T { return &v }

// round6 rounds v to 6 significant digits, so that the summary's bytes
// do not depend on the last bits of a float sum.
func round6(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	if err != nil {
		return v
	}
	return r
}
