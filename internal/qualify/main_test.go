package qualify

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/fabric-runtime/fabric/adapters/bundled"
)

// TestMain doubles as the adapter host of the bundled adapters: the
// suite's runtimes re-execute the test binary.
func TestMain(m *testing.M) {
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}
