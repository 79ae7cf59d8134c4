//go:build linux

package acp_test

import (
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/bundled"
)

// TestMain lets this test binary be the adapter host of any bundled
// adapter.
func TestMain(m *testing.M) { adaptertest.Main(m, bundled.ServeHost) }
