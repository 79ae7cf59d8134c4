package claude_test

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/modelstub"
)

// notApplicable lists the conformance items the profile leaves out on
// purpose (see conformance.profile.yaml).
var notApplicable = map[string]bool{"11": true}

// The conformance suite passes every applicable item against the real
// claude binary and the scripted model endpoint.
func TestConformance(t *testing.T) {
	binDir, _ := harnessBin(t)
	stub := modelstub.New(loadScript(t))
	defer stub.Close()
	p, err := conformance.LoadProfile("packages/nvidia.fabric.claude/conformance.profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	model := p.Base["models"].(map[string]any)["default"].(map[string]any)
	model["base_url"] = stub.AnthropicBaseURL()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rep := conformance.Run(ctx, nil, p, conformance.Options{
		ItemTimeout:   90 * time.Second,
		TempDir:       t.TempDir(),
		Env:           append(os.Environ(), "GORACE=atexit_sleep_ms=0"),
		ClientOptions: []fabric.Option{fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithHostBinary(exe), fabric.WithExtraPath(binDir)},
	})
	var buf bytes.Buffer
	_ = rep.WriteText(&buf)
	t.Log("\n" + buf.String())
	for _, it := range rep.Items {
		switch {
		case it.Verdict == conformance.Pass:
		case it.Verdict == conformance.Skip && notApplicable[it.ID]:
		default:
			t.Errorf("item %s", it)
		}
	}
}
