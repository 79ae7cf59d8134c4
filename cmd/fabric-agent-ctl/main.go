// Command fabric-agent-ctl drives the agent runtimes of a sandbox: serve
// owns them, the other subcommands are its clients (docs/agent-ctl.md).
package main

import (
	"os"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/agentctl/cli"
)

func main() {
	// serve re-executes this binary as the host of bundled adapters.
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	os.Exit(cli.Main())
}
