package claude_test

import (
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
)

// The conformance suite passes every applicable item against the real
// claude binary and the modelstub the profile names, which the suite
// serves itself; malformed_output does not apply (see the profile).
func TestConformance(t *testing.T) {
	binDir, _ := harnessBin(t)
	harnesstest.Suite{Path: []string{binDir}, MaySkip: []string{"malformed-output"}, ItemTimeout: 90 * time.Second}.
		Run(t, "packages/nvidia.fabric.claude/conformance.profile.yaml")
}
