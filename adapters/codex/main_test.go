//go:build linux

package codex_test

import (
	"os"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/bundled"
)

// TestMain lets this test binary be two things besides the tests: a
// scripted codex app-server for the session tests (fake_test.go), or the
// adapter host of any bundled adapter (the Codex adapter's included).
func TestMain(m *testing.M) { adaptertest.Main(m, fakeAppServer, bundled.ServeHost) }

// fakeAppServer is this binary as a scripted codex app-server, when a test
// started it as one.
func fakeAppServer() (bool, int) {
	if mode := os.Getenv(envFake); mode != "" && len(os.Args) > 1 && os.Args[1] == "app-server" {
		return true, fakeCodex(mode)
	}
	return false, 0
}
