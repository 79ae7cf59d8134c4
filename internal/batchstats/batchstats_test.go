package batchstats

import (
	"errors"
	"math"
	"math/bits"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestPassAtK(t *testing.T) {
	tests := []struct {
		n, c, k int
		want    float64
	}{
		{5, 2, 1, 0.4},
		{5, 2, 2, 1 - 3.0/10}, // 1 - C(3,2)/C(5,2)
		{5, 3, 3, 1},          // n-c < k
		{4, 0, 2, 0},
		{10, 1, 10, 1},
		{10, 1, 5, 0.5}, // 1 - C(9,5)/C(10,5) = 1 - 126/252
		{1, 1, 1, 1},
	}
	for _, tt := range tests {
		got, err := PassAtK(tt.n, tt.c, tt.k)
		if err != nil || !near(got, tt.want, 1e-12) {
			t.Errorf("PassAtK(%d,%d,%d) = %v, %v; want %v", tt.n, tt.c, tt.k, got, err, tt.want)
		}
	}
}

func TestPassHatK(t *testing.T) {
	tests := []struct {
		n, c, k int
		want    float64
	}{
		{5, 3, 2, 3.0 / 10}, // C(3,2)/C(5,2)
		{5, 1, 2, 0},
		{4, 4, 3, 1},
		{5, 2, 1, 0.4},
		{6, 4, 3, 4.0 / 20}, // C(4,3)/C(6,3)
	}
	for _, tt := range tests {
		got, err := PassHatK(tt.n, tt.c, tt.k)
		if err != nil || !near(got, tt.want, 1e-12) {
			t.Errorf("PassHatK(%d,%d,%d) = %v, %v; want %v", tt.n, tt.c, tt.k, got, err, tt.want)
		}
	}
}

func TestPassKUndefined(t *testing.T) {
	for _, tt := range []struct{ n, c, k int }{{2, 1, 3}, {3, 1, 0}, {3, 4, 1}, {3, -1, 1}} {
		if _, err := PassAtK(tt.n, tt.c, tt.k); !errors.Is(err, ErrUndefined) {
			t.Errorf("PassAtK(%d,%d,%d) err = %v, want ErrUndefined", tt.n, tt.c, tt.k, err)
		}
		if _, err := PassHatK(tt.n, tt.c, tt.k); !errors.Is(err, ErrUndefined) {
			t.Errorf("PassHatK(%d,%d,%d) err = %v, want ErrUndefined", tt.n, tt.c, tt.k, err)
		}
	}
	if _, err := MeanPassAtK([]TaskCount{{N: 3, C: 1}, {N: 1, C: 1}}, 2); !errors.Is(err, ErrUndefined) {
		t.Errorf("MeanPassAtK with a task below k: err = %v", err)
	}
}

// TestPassKBruteForce checks both estimators against the enumeration of
// every k-subset of n attempts, c of which pass, for n <= 10.
func TestPassKBruteForce(t *testing.T) {
	for n := 1; n <= 10; n++ {
		for c := 0; c <= n; c++ {
			passMask := uint(1)<<c - 1 // the first c attempts pass
			for k := 1; k <= n; k++ {
				subsets, any, all := 0, 0, 0
				for s := uint(0); s < 1<<n; s++ {
					if bits.OnesCount(s) != k {
						continue
					}
					subsets++
					hit := bits.OnesCount(s & passMask)
					if hit > 0 {
						any++
					}
					if hit == k {
						all++
					}
				}
				at, err := PassAtK(n, c, k)
				if err != nil || !near(at, float64(any)/float64(subsets), 1e-12) {
					t.Errorf("PassAtK(%d,%d,%d) = %v, %v; enumeration %d/%d", n, c, k, at, err, any, subsets)
				}
				hat, err := PassHatK(n, c, k)
				if err != nil || !near(hat, float64(all)/float64(subsets), 1e-12) {
					t.Errorf("PassHatK(%d,%d,%d) = %v, %v; enumeration %d/%d", n, c, k, hat, err, all, subsets)
				}
			}
		}
	}
}

func TestMeanPassAtK(t *testing.T) {
	tasks := []TaskCount{{N: 3, C: 0}, {N: 3, C: 1}, {N: 3, C: 3}}
	// pass@2: 0, 1 - C(2,2)/C(3,2) = 2/3, 1.
	got, err := MeanPassAtK(tasks, 2)
	if err != nil || !near(got, (0+2.0/3+1)/3, 1e-12) {
		t.Errorf("MeanPassAtK = %v, %v", got, err)
	}
	// pass^2: 0, 0, 1.
	got, err = MeanPassHatK(tasks, 2)
	if err != nil || !near(got, 1.0/3, 1e-12) {
		t.Errorf("MeanPassHatK = %v, %v", got, err)
	}
}

func TestWilson(t *testing.T) {
	tests := []struct {
		s, n   int
		level  float64
		lo, hi float64
	}{
		{0, 10, 0.95, 0, 0.277533},
		{5, 10, 0.95, 0.236593, 0.763407},
		{10, 10, 0.95, 0.722467, 1},
		{1, 1, 0.95, 0.206549, 1},
		{8, 20, 0.90, 0.242387, 0.581444}, // by hand: z = 1.644854,
	}
	for _, tt := range tests {
		lo, hi, err := Wilson(tt.s, tt.n, tt.level)
		if err != nil || !near(lo, tt.lo, 5e-6) || !near(hi, tt.hi, 5e-6) {
			t.Errorf("Wilson(%d,%d,%v) = [%v, %v], %v; want [%v, %v]", tt.s, tt.n, tt.level, lo, hi, err, tt.lo, tt.hi)
		}
	}
	if _, _, err := Wilson(0, 0, 0.95); !errors.Is(err, ErrUndefined) {
		t.Errorf("Wilson of 0/0: err = %v", err)
	}
	if z := NormalQuantile(0.95); !near(z, 1.959964, 1e-6) {
		t.Errorf("NormalQuantile(0.95) = %v", z)
	}
}

func TestMeanSE(t *testing.T) {
	tests := []struct {
		xs       []float64
		mean, se float64
	}{
		{[]float64{1, 0, 1, 0}, 0.5, math.Sqrt(1.0/3) / 2},
		{[]float64{0.25}, 0.25, 0},
		{[]float64{1, 1, 1}, 1, 0},
	}
	for _, tt := range tests {
		m, se, err := MeanSE(tt.xs)
		if err != nil || !near(m, tt.mean, 1e-12) || !near(se, tt.se, 1e-12) {
			t.Errorf("MeanSE(%v) = %v, %v, %v", tt.xs, m, se, err)
		}
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{4, 1, 3, 2} // unsorted on purpose
	tests := []struct{ p, want float64 }{
		{0, 1}, {0.5, 2.5}, {0.9, 3.7}, {0.99, 3.97}, {1, 4}, {0.25, 1.75},
	}
	for _, tt := range tests {
		got, err := Quantile(xs, tt.p)
		if err != nil || !near(got, tt.want, 1e-12) {
			t.Errorf("Quantile(p=%v) = %v, %v; want %v", tt.p, got, err, tt.want)
		}
	}
	if xs[0] != 4 {
		t.Error("Quantile sorted its argument")
	}
	if got, _ := Quantile([]float64{7}, 0.9); got != 7 {
		t.Errorf("Quantile of one value = %v", got)
	}
	if _, err := Quantile(nil, 0.5); !errors.Is(err, ErrUndefined) {
		t.Errorf("Quantile of none: err = %v", err)
	}
}

func TestExactBinomialTwoSided(t *testing.T) {
	tests := []struct {
		b, c int
		want float64
	}{
		{0, 0, 1},
		{0, 5, 2.0 / 32},
		{5, 0, 2.0 / 32},
		{1, 9, 22.0 / 1024}, // 2 (C(10,0) + C(10,1)) / 2^10
		{3, 3, 1},
		{2, 6, 2 * (1 + 8 + 28) / 256.0},
		{0, 1000, 0}, // underflows to 0, never NaN
	}
	for _, tt := range tests {
		got := ExactBinomialTwoSided(tt.b, tt.c)
		if !near(got, tt.want, 1e-12) {
			t.Errorf("ExactBinomialTwoSided(%d,%d) = %v; want %v", tt.b, tt.c, got, tt.want)
		}
	}
}

func TestMcNemar(t *testing.T) {
	a := []bool{true, true, true, true, true, false, true, false}
	b := []bool{false, false, false, false, false, false, true, true}
	ao, bo, p, err := McNemar(a, b)
	if err != nil || ao != 5 || bo != 1 || !near(p, 2*(1+6)/64.0, 1e-12) {
		t.Errorf("McNemar = %d, %d, %v, %v", ao, bo, p, err)
	}
	if _, _, _, err := McNemar(a, b[:3]); err == nil {
		t.Error("McNemar of unequal lengths: no error")
	}
}

func TestHolm(t *testing.T) {
	tests := []struct{ in, want []float64 }{
		{[]float64{0.01, 0.04, 0.03}, []float64{0.03, 0.06, 0.06}},
		{[]float64{0.5}, []float64{0.5}},
		{[]float64{0.6, 0.2}, []float64{0.6, 0.4}},
		{nil, []float64{}},
	}
	for _, tt := range tests {
		got := Holm(tt.in)
		if len(got) != len(tt.want) {
			t.Fatalf("Holm(%v) = %v", tt.in, got)
		}
		for i := range got {
			if !near(got[i], tt.want[i], 1e-12) {
				t.Errorf("Holm(%v) = %v; want %v", tt.in, got, tt.want)
				break
			}
		}
	}
}

// TestBootstrapGolden pins the seeded bootstrap's bytes: the same seed
// must give the same interval on every platform and run.
func TestBootstrapGolden(t *testing.T) {
	values := []float64{0, 1.0 / 3, 2.0 / 3, 1, 1, 0, 1.0 / 3, 1}
	o := BootstrapOptions{Resamples: 2000, Seed: 1, Level: 0.95}
	lo, hi, err := BootstrapMean(values, o)
	if err != nil {
		t.Fatal(err)
	}
	const wantLo, wantHi = goldenBootLo, goldenBootHi
	if lo != wantLo || hi != wantHi {
		t.Errorf("BootstrapMean seed 1 = [%.17g, %.17g]; golden [%.17g, %.17g]", lo, hi, wantLo, wantHi)
	}
	mean, _, _ := MeanSE(values)
	if !(lo < mean && mean < hi) {
		t.Errorf("interval [%v, %v] misses the mean %v", lo, hi, mean)
	}
	lo2, hi2, _ := BootstrapMean(values, o)
	if lo2 != lo || hi2 != hi {
		t.Error("BootstrapMean is not deterministic")
	}
	o.Seed = 2
	lo3, hi3, _ := BootstrapMean(values, o)
	if lo3 == lo && hi3 == hi {
		t.Error("seed 2 gave seed 1's interval")
	}
	clo, chi, _ := BootstrapMean([]float64{0.5, 0.5, 0.5}, o)
	if clo != 0.5 || chi != 0.5 {
		t.Errorf("constant values: [%v, %v]", clo, chi)
	}
	if _, _, err := BootstrapMean(values, BootstrapOptions{Resamples: 0, Level: 0.95}); !errors.Is(err, ErrUndefined) {
		t.Errorf("0 resamples: err = %v", err)
	}
}

func TestComparePaired(t *testing.T) {
	a := []float64{1, 1, 0.5, 0, 1, 1}
	b := []float64{0, 1, 0, 0, 0, 0.5}
	got, err := ComparePaired(a, b, BootstrapOptions{Resamples: 500, Seed: 1, Level: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	if got.ABetter != 4 || got.BBetter != 0 || got.Ties != 2 {
		t.Errorf("wins = %+v", got)
	}
	if !near(got.MeanDiff, 3.0/6, 1e-12) || !near(got.P, 2.0/16, 1e-12) {
		t.Errorf("mean %v p %v", got.MeanDiff, got.P)
	}
	if !(got.Low <= got.MeanDiff && got.MeanDiff <= got.High) || got.Low < 0 {
		t.Errorf("interval [%v, %v]", got.Low, got.High)
	}
}
