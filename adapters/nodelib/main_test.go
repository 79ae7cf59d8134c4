//go:build linux

package nodelib_test

import (
	"os"
	"testing"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"go.uber.org/goleak"
)

// TestMain lets this test binary be the adapter host of any bundled Go
// adapter (the Node hosts of this package need none of it).
func TestMain(m *testing.M) {
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}
