//go:build linux

package conformancetest_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

// TestConformance runs the conformance suite with conformance.profile.yaml
// against the real OpenCode and the modelstub the profile names, which the
// suite serves itself; every item must pass, and only the items the profile
// documents as not applicable may be skipped. Items
// run one after the other: servers starting at the same time on two cores
// would each take much longer.
func TestConformance(t *testing.T) {
	livetest.Short(t, "the real opencode server from harnesses/opencode")
	dirs := append(filepath.SplitList(os.Getenv("FABRIC_HARNESS_PATH")), "opencode/node_modules/.bin")
	harnesstest.Suite{Path: harnesstest.HarnessDirs(t, "opencode", adaptertest.Installed("opencode"), dirs...), MaySkip: []string{"malformed-output"}, ItemTimeout: 3 * time.Minute}.
		Run(t, filepath.Join("..", "packages", "nvidia.fabric.opencode", "conformance.profile.yaml"))
}
