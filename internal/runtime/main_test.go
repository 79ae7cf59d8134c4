package runtime

import (
	"context"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/fabric-runtime/fabric/adapters/bundled"
)

// TestMain doubles as the adapter host: runtimes started by these tests
// re-execute the test binary with FABRIC_BUNDLED_ADAPTER set.
func TestMain(m *testing.M) {
	if name := os.Getenv(bundled.EnvAdapter); name != "" {
		os.Exit(bundled.Serve(context.Background(), name))
	}
	goleak.VerifyTestMain(m)
}
