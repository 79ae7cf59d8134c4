package batch_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	fabric "github.com/fabric-runtime/fabric"
)

// TestMain lets this test binary host the bundled adapters whose runtimes
// the batch tests start.
func TestMain(m *testing.M) {
	if served, code := fabric.ServeBuiltinHost(); served {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}
