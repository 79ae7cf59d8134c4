// Command fabric-agent-ctl-serve is the server of fabric-agent-ctl: it owns
// the agent runtimes of a sandbox and answers the other subcommands on a
// Unix socket (docs/agent-ctl.md). Users run `fabric-agent-ctl serve`,
// which checks its flags and replaces itself (same pid, arguments,
// environment and open files) with this program, found beside
// fabric-agent-ctl, else on PATH; it accepts the same arguments, the word
// serve included. It is a program of its own so that fabric-agent-ctl, which
// platforms exec for every health probe, links neither the runtime nor the
// bundled adapters: Go runs every linked package's init in every process.
//
// Build it like fabric-agent-ctl, with CGO_ENABLED=0, and ship both.
package main

import (
	"os"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/agentctl/servecmd"
)

func main() {
	// serve re-executes this binary as the host of bundled adapters.
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	os.Exit(servecmd.Main())
}
