package batchstats

import (
	"fmt"
	"math"
	"slices"
)

// ExactBinomialTwoSided is the exact two-sided p-value of b successes
// against c failures under Binomial(b+c, 1/2): twice the smaller tail,
// capped at 1 (1 when b+c = 0). On the discordant pairs of paired binary
// outcomes it is McNemar's exact test; on tasks won and lost it is the
// sign test.
func ExactBinomialTwoSided(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	m := min(b, c)
	// Sum the tail in log space: C(n, i) 2^-n overflows nothing.
	tail := 0.0
	lgN, _ := math.Lgamma(float64(n + 1))
	for i := 0; i <= m; i++ {
		lgI, _ := math.Lgamma(float64(i + 1))
		lgR, _ := math.Lgamma(float64(n - i + 1))
		tail += math.Exp(lgN - lgI - lgR - float64(n)*math.Ln2)
	}
	return min(1, 2*tail)
}

// McNemar is McNemar's exact two-sided test of paired binary outcomes: a
// and b hold the two configs' results on the same items. It returns the
// discordant counts (a passed where b failed, b passed where a failed) and
// the p-value.
func McNemar(a, b []bool) (aOnly, bOnly int, p float64, err error) {
	if len(a) != len(b) {
		return 0, 0, 0, fmt.Errorf("%w: mcnemar of %d and %d outcomes", ErrUndefined, len(a), len(b))
	}
	for i := range a {
		switch {
		case a[i] && !b[i]:
			aOnly++
		case b[i] && !a[i]:
			bOnly++
		}
	}
	return aOnly, bOnly, ExactBinomialTwoSided(aOnly, bOnly), nil
}

// Paired compares two configs task by task.
type Paired struct {
	// ABetter, BBetter and Ties count tasks by the sign of a_t - b_t.
	ABetter, BBetter, Ties int
	// MeanDiff is the mean over tasks of a_t - b_t.
	MeanDiff float64
	// SE is the paired standard error of MeanDiff.
	SE float64
	// Low and High are the bootstrap percentile interval of MeanDiff,
	// resampling tasks.
	Low, High float64
	// P is the sign test's exact two-sided p-value on ABetter vs BBetter
	// (with one binary outcome per task this is McNemar's exact test).
	P float64
}

// ComparePaired compares per-task values a[t] and b[t] of two configs on
// the same tasks.
func ComparePaired(a, b []float64, o BootstrapOptions) (Paired, error) {
	if len(a) != len(b) || len(a) == 0 {
		return Paired{}, fmt.Errorf("%w: paired comparison of %d and %d tasks", ErrUndefined, len(a), len(b))
	}
	var out Paired
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
		switch {
		case d[i] > 0:
			out.ABetter++
		case d[i] < 0:
			out.BBetter++
		default:
			out.Ties++
		}
	}
	var err error
	if out.MeanDiff, out.SE, err = MeanSE(d); err != nil {
		return Paired{}, err
	}
	if out.Low, out.High, err = BootstrapMean(d, o); err != nil {
		return Paired{}, err
	}
	out.P = ExactBinomialTwoSided(out.ABetter, out.BBetter)
	return out, nil
}

// Holm adjusts p-values for multiple comparisons (Holm 1979): with the m
// p-values sorted ascending, the i-th (from 0) becomes
// max over j <= i of min(1, (m-j) p_j). The result is in the input's order.
func Holm(ps []float64) []float64 {
	m := len(ps)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		switch {
		case ps[x] < ps[y]:
			return -1
		case ps[x] > ps[y]:
			return 1
		}
		return 0
	})
	out := make([]float64, m)
	running := 0.0
	for rank, idx := range order {
		adj := min(1, float64(m-rank)*ps[idx])
		running = max(running, adj)
		out[idx] = running
	}
	return out
}
