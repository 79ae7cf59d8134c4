// Package batchreport turns a batch's trial records into its report:
// summary.json (contract.BatchSummary), trials.csv, tasks.csv and one
// self-contained index.html with inline SVG charts. ReadDir reads the
// records of a batch directory.
//
// Build is a function of its Input only (no clock, no randomness beyond
// the spec's seed), so a rerun writes the same bytes. The package must
// never put an external URL, font or script into the page, nor write
// anywhere but the report directory it is given.
package batchreport
