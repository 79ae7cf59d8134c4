//go:build linux

package pi_test

import (
	"testing"

	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

// TestConformance runs the conformance suite with conformance.profile.yaml
// against the real pi and the modelstub the profile names, which the suite
// serves itself; every item must pass, except the ones the profile
// documents as not applicable, which may be skipped.
func TestConformance(t *testing.T) {
	livetest.Short(t, "the real Pi coding agent from harnesses/pi")
	path := harnessPath(t)
	harnesstest.Conformance(t, "packages/nvidia.fabric.pi-rpc/conformance.profile.yaml", path, "malformed-output")
}
