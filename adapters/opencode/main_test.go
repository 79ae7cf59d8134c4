//go:build linux

package opencode_test

import (
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/bundled"
)

// TestMain lets this test binary be the adapter host of any bundled
// adapter (the runtimes the tests start re-execute it).
func TestMain(m *testing.M) { adaptertest.Main(m, bundled.ServeHost) }
