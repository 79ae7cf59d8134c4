package runtime

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/catalog"
	"github.com/fabric-runtime/fabric/internal/plan"
	"github.com/fabric-runtime/fabric/internal/procfs"
)

const (
	scriptedV2 = "fabric.scripted"
	scriptedV1 = "fabric.scripted.v1"
)

// testPlan plans a config for adapter with the given settings.
func testPlan(t testing.TB, adapter string, settings map[string]any, mutate ...func(*contract.FabricConfig)) *contract.RunPlan {
	t.Helper()
	cfg := contract.FabricConfig{
		SchemaVersion: contract.ConfigSchemaVersion,
		Metadata:      contract.MetadataConfig{Name: "test-agent"},
		Runtime:       contract.RuntimeConfig{InputSchema: "text", OutputSchema: "text"},
		Harness:       &contract.HarnessConfig{AdapterID: adapter, Settings: settings},
	}
	for _, m := range mutate {
		m(&cfg)
	}
	var descs []catalog.Bundled
	for _, d := range bundled.Descriptors() {
		descs = append(descs, catalog.Bundled{Name: d.Name, Data: d.Data})
	}
	cat, err := catalog.Discover(catalog.Options{Bundled: descs, LocalPaths: localDescriptorPaths(t)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Resolve(cfg, plan.Options{BaseDir: t.TempDir(), Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func localDescriptorPaths(t testing.TB) []string {
	abs, err := filepath.Abs("testdata/hosts")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		return nil
	}
	return []string{abs}
}

// testOptions hosts bundled adapters in the test binary itself, or in
// $FABRIC_TEST_HOST (bench/run.sh points it at bin/fabric-host).
func testOptions(t testing.TB) Options {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if h := os.Getenv("FABRIC_TEST_HOST"); h != "" {
		exe = h
	}
	return Options{HostBinary: exe, StateDir: t.TempDir()}
}

func startRuntime(t testing.TB, p *contract.RunPlan, opts Options) *Runtime {
	t.Helper()
	rt, err := Start(context.Background(), p, opts)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { rt.Stop(context.Background()) })
	return rt
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// groupAlive lists live (non-zombie) processes in process group pgid.
func groupAlive(pgid int) []int {
	pids, _ := procfs.Default.GroupPids(pgid)
	return pids
}

func waitGroupGone(t testing.TB, pgid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if len(groupAlive(pgid)) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process group %d still has %v", pgid, groupAlive(pgid))
}
