//go:build linux

package conformancetest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapters/opencode"
	"github.com/fabric-runtime/fabric/internal/harnesstest"
	"github.com/fabric-runtime/fabric/internal/livetest"
)

// TestConformance runs the conformance suite with conformance.profile.yaml
// against the real OpenCode and the modelstub the profile names, which the
// suite serves itself; every item must pass, and only the items the profile
// documents as not applicable may be skipped. Items
// run one after the other: servers starting at the same time on two cores
// would each take much longer.
func TestConformance(t *testing.T) {
	livetest.Short(t, "the real opencode server from harnesses/opencode")
	harnesstest.Suite{Path: harnessPath(t), MaySkip: []string{"malformed-output"}, ItemTimeout: 3 * time.Minute}.
		Run(t, filepath.Join("..", "packages", "nvidia.fabric.opencode", "conformance.profile.yaml"))
}

// harnessPath returns the PATH entries that hold the pinned opencode:
// FABRIC_HARNESS_PATH, then harnesses/opencode/node_modules/.bin. It skips
// the test when opencode is in neither, unless FABRIC_REQUIRE_HARNESSES=1.
func harnessPath(t testing.TB) []string {
	t.Helper()
	var dirs []string
	if p := os.Getenv("FABRIC_HARNESS_PATH"); p != "" {
		dirs = append(dirs, filepath.SplitList(p)...)
	}
	root, err := filepath.Abs(filepath.Join("..", "..", "..", "harnesses"))
	if err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, filepath.Join(root, "opencode", "node_modules", ".bin"))
	if _, err := opencode.ResolveBinary(func(string) string { return "" }, strings.Join(dirs, string(os.PathListSeparator))); err != nil {
		livetest.Missing(t, "opencode", "run harnesses/install.sh", err)
	}
	return dirs
}
