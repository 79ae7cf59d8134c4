// Command fabric plans, diagnoses and runs AI agent harnesses.
//
// fabric serve replaces this process with fabric-serve (found beside this
// executable, else on PATH), which runs a deployment's supervisor, so that
// fabric's other commands link neither the supervisor nor its console and
// access gateways: Go runs every linked package's init in every process.
// Ship both programs.
//
// Build it with CGO_ENABLED=0 (bench/cli does), as cmd/fabric-agent-ctl
// says why: a static binary starts each command with less CPU.
package main

import (
	"os"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/cli"
	"github.com/fabric-runtime/fabric/internal/pkgop"
)

func main() {
	// Fabric re-executes itself as the Landlock sandbox of a package's
	// helper operation.
	if served, code := pkgop.MaybeServeSandbox(); served {
		os.Exit(code)
	}
	// Fabric re-executes itself as the host of its bundled adapters.
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	os.Exit(cli.Main())
}
