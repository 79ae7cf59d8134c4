// Command fabric plans, diagnoses and runs AI agent harnesses.
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
