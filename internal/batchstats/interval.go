package batchstats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// NormalQuantile is the standard normal's two-sided critical value for a
// confidence level: z with P(|Z| <= z) = level (1.959964 for 0.95).
func NormalQuantile(level float64) float64 {
	return math.Sqrt2 * math.Erfinv(level)
}

// Wilson is the Wilson score interval of the proportion successes/n at the
// given confidence level (Wilson 1927):
//
//	(p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)
//
// It stays inside [0, 1] and is sensible at 0/n and n/n. n must be at
// least 1.
func Wilson(successes, n int, level float64) (lo, hi float64, err error) {
	if n < 1 || successes < 0 || successes > n {
		return 0, 0, fmt.Errorf("%w: wilson interval of %d/%d", ErrUndefined, successes, n)
	}
	if !(level > 0 && level < 1) {
		return 0, 0, fmt.Errorf("%w: confidence level %v", ErrUndefined, level)
	}
	z := NormalQuantile(level)
	nf := float64(n)
	p := float64(successes) / nf
	z2 := z * z
	centre := p + z2/(2*nf)
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	den := 1 + z2/nf
	lo, hi = (centre-half)/den, (centre+half)/den
	// Exact ends: rounding must not put 0/n above 0 or n/n below 1.
	if successes == 0 {
		lo = 0
	}
	if successes == n {
		hi = 1
	}
	return max(lo, 0), min(hi, 1), nil
}

// MeanSE is the mean of xs and its standard error sd/sqrt(len), with the
// sample standard deviation (divisor len-1). The SE is 0 for one value.
func MeanSE(xs []float64) (mean, se float64, err error) {
	if len(xs) == 0 {
		return 0, 0, fmt.Errorf("%w: mean of no values", ErrUndefined)
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) == 1 {
		return mean, 0, nil
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(len(xs)-1))
	return mean, sd / math.Sqrt(float64(len(xs))), nil
}

// Quantile is the sample quantile at p in [0, 1] with linear interpolation
// between order statistics (Hyndman and Fan's type 7, the default of R and
// NumPy): with the values sorted as x[0..n-1] and h = (n-1)p, it is
// x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]). xs is not
// modified.
func Quantile(xs []float64, p float64) (float64, error) {
	if len(xs) == 0 {
		return 0, fmt.Errorf("%w: quantile of no values", ErrUndefined)
	}
	if !(p >= 0 && p <= 1) {
		return 0, fmt.Errorf("%w: quantile at %v", ErrUndefined, p)
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return sortedQuantile(s, p), nil
}

func sortedQuantile(s []float64, p float64) float64 {
	h := float64(len(s)-1) * p
	i := int(math.Floor(h))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}

// BootstrapOptions configure a percentile bootstrap.
type BootstrapOptions struct {
	// Resamples is the number of resamples B (at least 1).
	Resamples int
	// Seed seeds the PCG generator (math/rand/v2): the same seed gives
	// the same interval.
	Seed uint64
	// Level is the confidence level in (0, 1).
	Level float64
}

// pcgStream is the PCG's second seed word: a fixed odd constant, so that
// the whole stream is a function of BootstrapOptions.Seed.
const pcgStream = 0x9e3779b97f4a7c15

// BootstrapMean is the percentile bootstrap interval of the mean of
// values, each value one cluster (a task's pass rate, or a task's paired
// difference): every resample draws len(values) clusters with replacement
// and takes their mean; the interval is the (1-level)/2 and
// (1+level)/2 quantiles (Quantile's definition) of the B means. Resampling
// whole tasks keeps the repeats of a task together, which is what makes
// the interval honest when repeats are correlated.
func BootstrapMean(values []float64, o BootstrapOptions) (lo, hi float64, err error) {
	if len(values) == 0 {
		return 0, 0, fmt.Errorf("%w: bootstrap of no values", ErrUndefined)
	}
	if o.Resamples < 1 {
		return 0, 0, fmt.Errorf("%w: %d bootstrap resamples", ErrUndefined, o.Resamples)
	}
	if !(o.Level > 0 && o.Level < 1) {
		return 0, 0, fmt.Errorf("%w: confidence level %v", ErrUndefined, o.Level)
	}
	r := rand.New(rand.NewPCG(o.Seed, pcgStream))
	n := len(values)
	means := make([]float64, o.Resamples)
	for b := range means {
		sum := 0.0
		for range n {
			sum += values[r.IntN(n)]
		}
		means[b] = sum / float64(n)
	}
	slices.Sort(means)
	alpha := (1 - o.Level) / 2
	return sortedQuantile(means, alpha), sortedQuantile(means, 1-alpha), nil
}
