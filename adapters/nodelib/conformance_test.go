//go:build linux

package nodelib_test

import (
	"testing"

	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

// TestConformance runs the conformance suite with each harness's profile
// against its real Node host and the modelstub the profile names, which
// the suite serves itself; every item must pass, except the ones the
// profiles document as not provokable, which may be skipped.
func TestConformance(t *testing.T) {
	livetest.Short(t, "the Deep Agents and Strands hosts from harnesses/")
	for _, h := range harnesses {
		t.Run(h.name, func(t *testing.T) {
			path := harnessPath(t, h)
			// malformed_output cannot be provoked (see the profiles).
			harnesstest.Conformance(t, "packages/nvidia.fabric."+h.name+"/conformance.profile.yaml", path, "malformed-output")
		})
	}
}
