//go:build linux

package codex_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/adapters/codex"
	"go.uber.org/goleak"
)

// TestMain lets this test binary be three things besides the tests: a
// scripted codex app-server for the session tests (fake_test.go), the
// adapter host of the Codex adapter (the tests give its descriptor to
// discovery), or the host of any bundled adapter.
func TestMain(m *testing.M) {
	if mode := os.Getenv(envFake); mode != "" && len(os.Args) > 1 && os.Args[1] == "app-server" {
		os.Exit(fakeCodex(mode))
	}
	if os.Getenv("FABRIC_BUILTIN_ADAPTER") == codex.ID {
		if err := adapterkit.Serve(context.Background(), codex.New()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}
