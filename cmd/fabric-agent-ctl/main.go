// Command fabric-agent-ctl drives the agent runtimes of a sandbox: serve
// owns them, the other subcommands are its clients (docs/agent-ctl.md).
//
// Build it with CGO_ENABLED=0 (bench/cli does): it then links statically,
// so a process maps no ld.so and libc and creates its threads without
// pthreads, which a platform that runs a command through exec for every
// probe pays at every run (bench/cli/run.sh measures each command's CPU
// against /bin/true). The packages it links that use cgo are net, whose
// pure Go resolver Go already prefers on Linux, and os/user, which then
// reads /etc/passwd and /etc/group itself.
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
