package qualify

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/pkgop"
)

// TestMain doubles as the adapter host of the bundled adapters (the
// suite's runtimes re-execute the test binary) and as the sandbox of
// helper operations.
func TestMain(m *testing.M) {
	if served, code := pkgop.MaybeServeSandbox(); served {
		os.Exit(code)
	}
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}
