//go:build linux

package acp_test

import (
	"os"
	"testing"

	"github.com/fabric-runtime/fabric/adapters/bundled"
)

// TestMain lets this test binary be the adapter host of any bundled
// adapter (the runtimes the tests start re-execute it).
func TestMain(m *testing.M) {
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
