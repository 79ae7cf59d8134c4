// Package testlog serves the test suite's own log: it renders the JSON
// stream of `go test -json` the way plain `go test` prints it (package
// lines, and the output of failing tests only) while keeping the complete
// verbose stream in a file, and it scans such files for the interface
// tokens recorded in the suite's token ledger (adapterkit/harnessui
// EnvTokenLedger), proving that no token value reached a plan, handle,
// result, event, log line or test output that a test printed (T1).
package testlog
