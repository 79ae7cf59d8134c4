package adaptertest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// Host runs this process as something the core or an adapter re-executed
// the test binary for (an adapter host, a supervisor, a scripted stand-in
// for a harness), if it was started as one, and reports whether it did
// and the exit code. bundled.ServeHost is one; Serve makes one.
type Host func() (served bool, exitCode int)

// Main is the TestMain of tests that start runtimes of Go adapters: the
// core re-executes the test binary as the host of each runtime. The first
// of hosts that serves ends the process with its exit code; when none
// does, Main runs the tests and exits, failing when goroutines are left
// running after them.
func Main(m *testing.M, hosts ...Host) {
	for _, h := range hosts {
		if served, code := h(); served {
			os.Exit(code)
		}
	}
	goleak.VerifyTestMain(m)
}

// Serve is the Host of adapter a, whose descriptor's runner.builtin is
// id: it serves a when the core re-executed this binary for id.
func Serve(id string, a adapterkit.Adapter) Host {
	return func() (bool, int) {
		if os.Getenv(hostproto.EnvBundledAdapter) != id {
			return false, 0
		}
		if err := adapterkit.Serve(context.Background(), a); err != nil {
			fmt.Fprintf(os.Stderr, "adapter host %s: %v\n", id, err)
			return true, 1
		}
		return true, 0
	}
}
