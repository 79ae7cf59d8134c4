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
	"github.com/fabric-runtime/fabric/adapters/opencode"
	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestConformance runs the conformance suite with conformance.profile.yaml
// against the real OpenCode and a modelstub serving
// conformance.modelstub.yaml; every item must pass or be skipped, and only
// the items the profile documents as not applicable may be skipped. Items
// run one after the other: servers starting at the same time on two cores
// would each take much longer.
func TestConformance(t *testing.T) {
	livetest.Short(t, "the real opencode server from harnesses/opencode")
	path := harnessPath(t)
	// FABRIC_CONFORMANCE_ONLY=8,9 runs only those items.
	var only []string
	if v := os.Getenv("FABRIC_CONFORMANCE_ONLY"); v != "" {
		only = strings.Split(v, ",")
	}
	profile, err := conformance.LoadProfile(filepath.Join("..", "packages", "nvidia.fabric.opencode", "conformance.profile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := modelstub.LoadScript(filepath.Join("..", "packages", "nvidia.fabric.opencode", "conformance.modelstub.yaml"))
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
		ItemTimeout:   3 * time.Minute,
		TempDir:       t.TempDir(),
		Only:          only,
		Progress: func(it conformance.Item) {
			t.Logf("%-3s %-18s %-5s %s (%s)", it.ID, it.Name, it.Verdict, it.Detail, it.Elapsed.Round(time.Millisecond))
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
