//go:build linux

package conformancetest_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/adapters/openclaw"
	"go.uber.org/goleak"
)

// TestMain lets this test binary be the adapter host of the OpenClaw
// adapter (the suite gives its descriptor to discovery) or of any bundled
// adapter, besides running the tests.
func TestMain(m *testing.M) {
	if os.Getenv("FABRIC_BUILTIN_ADAPTER") == openclaw.ID {
		if err := adapterkit.Serve(context.Background(), openclaw.New()); err != nil {
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
