//go:build linux

package acp_test

import (
	"context"
	"github.com/fabric-runtime/fabric/internal/livetest"
	"os"
	"path/filepath"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestConformance runs the conformance suite for every bundled profile
// against its real agent and a modelstub serving conformance.modelstub.yaml.
func TestConformance(t *testing.T) {
	livetest.Short(t, "the real ACP agents from harnesses/acp and Node 24")
	for _, pc := range cases {
		t.Run(pc.bin, func(t *testing.T) {
			path := harnessBin(t, pc.bin)
			profile, err := conformance.LoadProfile(filepath.Join("packages", pc.id, "conformance.profile.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			script, err := modelstub.LoadScript("conformance.modelstub.yaml")
			if err != nil {
				t.Fatal(err)
			}
			stub := modelstub.New(script)
			defer stub.Close()
			profile.Base["models"].(map[string]any)["default"].(map[string]any)["base_url"] = pc.baseURL(stub)
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			rep := conformance.Run(context.Background(), nil, profile, conformance.Options{
				ClientOptions: []fabric.Option{fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithHostBinary(exe), fabric.WithExtraPath(filepath.SplitList(path)...)},
				ItemTimeout:   120 * time.Second,
				TempDir:       t.TempDir(),
			})
			mayskip := map[string]bool{"malformed-output": true}
			failed := 0
			for _, it := range rep.Items {
				t.Logf("%-3s %-18s %-5s %s (%s)", it.ID, it.Name, it.Verdict, it.Detail, it.Elapsed.Round(time.Millisecond))
				switch {
				case it.Verdict == conformance.Fail:
					failed++
					t.Errorf("item %s %s failed: %s", it.ID, it.Name, it.Detail)
				case it.Verdict == conformance.Skip && !mayskip[it.Name]:
					t.Errorf("item %s %s skipped: %s", it.ID, it.Name, it.Detail)
				}
			}
			if !rep.Passed && failed == 0 {
				t.Error("the report did not pass")
			}
		})
	}
}
