// Package cli is fabric's command tree (fabric-agent-ctl's is
// internal/agentctl/cli): flag parsing, JSON and text output, and exit
// codes mapped from error kinds. Results go to stdout, diagnostics to stderr.
// fabric-core runs it (and fabric-serve its serve command); fabric, the
// command line, is written from its definitions (Tree, internal/clifront).
//
// It must never print a credential value and never call os.Exit: Run
// returns the exit code to main.
package cli
