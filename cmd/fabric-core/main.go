// Command fabric-core runs fabric's commands: fabric (cmd/fabric) answers
// help, completion and usage errors itself and replaces itself with
// fabric-core, found beside it, else on PATH, for every command that runs,
// with the command line unchanged. It takes the same command lines as
// fabric and may be run as fabric is.
//
// fabric-core serve replaces this process with fabric-serve in turn, which
// runs a deployment's supervisor, so that the other commands link neither
// the supervisor nor its console and access gateways: Go runs every linked
// package's init in every process. Ship the three programs side by side.
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
