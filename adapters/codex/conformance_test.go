//go:build linux

package codex_test

import (
	"testing"

	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

// TestConformance runs the conformance suite with conformance.profile.yaml
// against the real codex and the modelstub the profile names, which the
// suite serves itself; every item must pass, except the ones the profile
// documents as not applicable, which may be skipped.
func TestConformance(t *testing.T) {
	livetest.Short(t, "the real Codex CLI from harnesses/")
	var path []string
	if bin := harnessBinDir(t); bin != "" {
		path = append(path, bin)
	}
	harnesstest.Conformance(t, "packages/nvidia.fabric.codex/conformance.profile.yaml", path, "malformed-output")
}
