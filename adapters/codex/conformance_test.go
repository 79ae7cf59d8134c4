//go:build linux

package codex_test

import (
	"context"
	"github.com/fabric-runtime/fabric/internal/livetest"
	"os"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestConformance runs the conformance suite with conformance.profile.yaml
// against the real codex and a modelstub serving
// conformance.modelstub.yaml; every item must pass or be skipped, and only
// the items the profile documents as not applicable may be skipped.
func TestConformance(t *testing.T) {
	livetest.Short(t, "the real Codex CLI from harnesses/")
	bin := harnessBinDir(t)
	profile, err := conformance.LoadProfile("packages/nvidia.fabric.codex/conformance.profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	script, err := modelstub.LoadScript("packages/nvidia.fabric.codex/conformance.modelstub.yaml")
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
	copts := []fabric.Option{fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithHostBinary(exe)}
	if bin != "" {
		copts = append(copts, fabric.WithExtraPath(bin))
	}
	rep := conformance.Run(context.Background(), nil, profile, conformance.Options{
		ClientOptions: copts,
		ItemTimeout:   90 * time.Second,
		TempDir:       t.TempDir(),
	})
	// Not applicable to a real harness (see the profile's comments).
	mayskip := map[string]bool{"malformed-output": true}
	for _, it := range rep.Items {
		t.Logf("%-3s %-18s %-5s %s (%s)", it.ID, it.Name, it.Verdict, it.Detail, it.Elapsed.Round(time.Millisecond))
		switch {
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
