//go:build linux

package acp_test

import (
	"os"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/bundled"
)

// seedsOffInTests is what TestMain sets FABRIC_ACP_SEEDS to when the
// environment names no seeds directory: no test writes home seeds to the
// user's cache (newLive points them at the test's own directory).
const seedsOffInTests = "off"

// TestMain lets this test binary be the adapter host of any bundled
// adapter.
func TestMain(m *testing.M) {
	if os.Getenv("FABRIC_ACP_SEEDS") == "" {
		os.Setenv("FABRIC_ACP_SEEDS", seedsOffInTests)
	}
	adaptertest.Main(m, bundled.ServeHost)
}
