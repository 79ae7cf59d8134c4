//go:build linux

package nodelib_test

import (
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/bundled"
)

// TestMain lets this test binary be the adapter host of any bundled Go
// adapter (the Node hosts of this package need none of it).
func TestMain(m *testing.M) { adaptertest.Main(m, bundled.ServeHost) }
