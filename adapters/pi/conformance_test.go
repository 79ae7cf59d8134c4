//go:build linux

package pi_test

import (
	"context"
	"github.com/fabric-runtime/fabric/internal/livetest"
	"os"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestConformance runs the conformance suite with conformance.profile.yaml
// against the real pi and a modelstub serving conformance.modelstub.yaml;
// every item must pass, except the ones the profile documents as not
// applicable, which may be skipped.
func TestConformance(t *testing.T) {
	livetest.Short(t, "the real Pi coding agent from harnesses/pi")
	path := harnessPath(t)
	profile, err := conformance.LoadProfile("conformance.profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	script, err := modelstub.LoadScript("conformance.modelstub.yaml")
	if err != nil {
		t.Fatal(err)
	}
	stub := modelstub.New(script)
	defer stub.Close()
	profile.Base["models"].(map[string]any)["default"].(map[string]any)["base_url"] = stub.OpenAIBaseURL()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rep := conformance.Run(context.Background(), nil, profile, conformance.Options{
		ClientOptions: []fabric.Option{fabric.WithHostBinary(exe), fabric.WithExtraPath(path...)},
		ItemTimeout:   2 * time.Minute,
		TempDir:       t.TempDir(),
	})
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
	if len(stub.Requests()) == 0 {
		t.Error("the model endpoint saw no request")
	}
}
