// Command fabric plans, diagnoses and runs AI agent harnesses.
//
// This program is fabric's command line (internal/clifront): it answers
// help, shell completion and the usage errors found while parsing flags
// itself, and replaces itself with fabric-core (cmd/fabric-core, found
// beside this executable, else on PATH) for every command that runs, or
// with fabric-serve for fabric serve. Ship fabric, fabric-core and
// fabric-serve side by side.
//
// Build it with CGO_ENABLED=0 (bench/cli does), as cmd/fabric-agent-ctl
// says why: a static binary starts each command with less CPU.
package main

import (
	"os"

	"github.com/fabric-runtime/fabric/internal/clifront"
)

func main() {
	os.Exit(clifront.Main())
}
