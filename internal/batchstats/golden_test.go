package batchstats

// The seeded bootstrap's golden interval (TestBootstrapGolden).
const (
	goldenBootLo = 0.25
	goldenBootHi = 0.83333333333333326
)
