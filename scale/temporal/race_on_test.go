//go:build race

package temporal_test

const raceEnabled = true
