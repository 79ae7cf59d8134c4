// Command fabric-agent-ctl drives the agent runtimes of a sandbox: serve
// owns them, the other subcommands are its clients (docs/agent-ctl.md).
// serve replaces this process with fabric-agent-ctl-serve (found beside
// this executable, else on PATH), so the clients link neither the runtime
// nor the bundled adapters: platforms exec `fabric-agent-ctl check` for
// every health probe, and Go runs every linked package's init in every
// process. Ship both programs.
//
// Build both with CGO_ENABLED=0 (bench/cli does): they then link
// statically, so a process maps no ld.so and libc and creates its threads
// without pthreads, which a platform that runs a command through exec for
// every probe pays at every run (bench/cli/run.sh measures each command's
// CPU against /bin/true). The package it links that uses cgo is net, whose
// pure Go resolver Go already prefers on Linux.
package main

import (
	"os"

	"github.com/fabric-runtime/fabric/internal/agentctl/cli"
)

func main() { os.Exit(cli.Main()) }
