//go:build linux

package acp_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

// TestConformance runs the conformance suite for every bundled profile
// against its real agent and the modelstub the profile names, which the
// suite serves itself; only malformed_output (the agents never write to
// Fabric's protocol channel) may be skipped.
func TestConformance(t *testing.T) {
	livetest.Short(t, "the real ACP agents from harnesses/acp and Node 24")
	for _, pc := range cases {
		t.Run(pc.bin, func(t *testing.T) {
			path := harnessBin(t, pc.bin)
			harnesstest.Suite{Path: filepath.SplitList(path), MaySkip: []string{"malformed-output"}, ItemTimeout: 120 * time.Second}.
				Run(t, filepath.Join("packages", pc.id, "conformance.profile.yaml"))
		})
	}
}
