// Package cli is the command tree of the fabric binary (fabric-agent-ctl's
// is internal/agentctl/cli): flag parsing, JSON and text output, and exit
// codes mapped from error kinds. Results go to stdout, diagnostics to stderr.
//
// It must never print a credential value and never call os.Exit: Run
// returns the exit code to main.
package cli
