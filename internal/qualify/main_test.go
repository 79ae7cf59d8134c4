package qualify

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	fabric "github.com/fabric-runtime/fabric"
)

// TestMain doubles as the adapter host of the bundled adapters: the
// suite's runtimes re-execute the test binary.
func TestMain(m *testing.M) {
	if served, code := fabric.ServeBuiltinHost(); served {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}
