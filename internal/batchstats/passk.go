package batchstats

import (
	"errors"
	"fmt"
)

// ErrUndefined is wrapped by the errors of estimators asked for a value
// they do not define (k above the number of attempts, an empty sample).
var ErrUndefined = errors.New("batchstats: undefined")

// PassAtK is the unbiased estimator of pass@k of Chen et al. (2021) for
// one task with n attempts of which c passed: the chance that at least one
// of k attempts drawn without replacement passes,
//
//	1 - C(n-c, k) / C(n, k) = 1 - prod_{i=n-c+1..n} (1 - k/i)
//
// computed in the product form, which never forms a large binomial
// coefficient. It is 1 when n-c < k. It is defined only for 1 <= k <= n
// and 0 <= c <= n.
func PassAtK(n, c, k int) (float64, error) {
	if err := checkNCK(n, c, k); err != nil {
		return 0, err
	}
	if n-c < k {
		return 1, nil
	}
	q := 1.0
	for i := n - c + 1; i <= n; i++ {
		q *= 1 - float64(k)/float64(i)
	}
	return 1 - q, nil
}

// PassHatK is pass^k (Yao et al. 2024): the chance that k attempts drawn
// without replacement from n, c of which passed, all pass,
//
//	C(c, k) / C(n, k) = prod_{i=0..k-1} (c-i) / (n-i)
//
// It is 0 when c < k and defined only for 1 <= k <= n and 0 <= c <= n.
func PassHatK(n, c, k int) (float64, error) {
	if err := checkNCK(n, c, k); err != nil {
		return 0, err
	}
	if c < k {
		return 0, nil
	}
	p := 1.0
	for i := range k {
		p *= float64(c-i) / float64(n-i)
	}
	return p, nil
}

func checkNCK(n, c, k int) error {
	switch {
	case k < 1:
		return fmt.Errorf("%w: k=%d is below 1", ErrUndefined, k)
	case n < k:
		return fmt.Errorf("%w: k=%d is above the n=%d attempts", ErrUndefined, k, n)
	case c < 0 || c > n:
		return fmt.Errorf("%w: c=%d passes out of n=%d attempts", ErrUndefined, c, n)
	}
	return nil
}

// TaskCount is one task's attempts (N) and passes (C).
type TaskCount struct {
	N, C int
}

// MeanPassAtK is the mean of PassAtK over tasks. Tasks with fewer than k
// attempts make it undefined (report only k up to the fewest attempts of
// any task).
func MeanPassAtK(tasks []TaskCount, k int) (float64, error) {
	return meanOver(tasks, k, PassAtK)
}

// MeanPassHatK is the mean of PassHatK over tasks, with the rule of
// MeanPassAtK.
func MeanPassHatK(tasks []TaskCount, k int) (float64, error) {
	return meanOver(tasks, k, PassHatK)
}

func meanOver(tasks []TaskCount, k int, f func(n, c, k int) (float64, error)) (float64, error) {
	if len(tasks) == 0 {
		return 0, fmt.Errorf("%w: no tasks", ErrUndefined)
	}
	sum := 0.0
	for i, t := range tasks {
		v, err := f(t.N, t.C, k)
		if err != nil {
			return 0, fmt.Errorf("task %d: %w", i, err)
		}
		sum += v
	}
	return sum / float64(len(tasks)), nil
}
