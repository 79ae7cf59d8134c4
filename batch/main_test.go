package batch_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/fabric-runtime/fabric/adapters/bundled"
)

// TestMain lets this test binary host the bundled adapters whose runtimes
// the batch tests start.
func TestMain(m *testing.M) {
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}
