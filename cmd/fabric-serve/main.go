// Command fabric-serve is a deployment's supervisor (docs/deploy.md): it
// owns the deployed agents' runtimes and integration services, serves the
// console and the access gateways, and answers fabric deploy and
// fabric-agent-ctl requests on a Unix socket. Users run `fabric serve`
// (fabric deploy apply starts it), which checks its flags and replaces
// itself (same pid, arguments, environment and open files) with this
// program, found beside fabric, else on PATH; it accepts the same
// arguments, the word serve included. It is a program of its own so that
// fabric's short-lived commands link neither the supervisor nor SQLite and
// html/template: Go runs every linked package's init in every process.
//
// Build it like fabric, with CGO_ENABLED=0, and ship both.
package main

import (
	"os"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/supervisor/servecmd"
)

func main() {
	// The supervisor re-executes this binary as the host of bundled
	// adapters.
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	os.Exit(servecmd.Main())
}
