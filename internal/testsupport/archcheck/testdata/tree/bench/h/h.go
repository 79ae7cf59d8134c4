// Package h benchmarks one harness: names are free here.
package h

const harness = "claude"
