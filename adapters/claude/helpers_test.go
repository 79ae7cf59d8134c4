package claude_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/claude"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// liveKeyEnv names the variable that carries the model key in live tests.
const liveKeyEnv = "FABRIC_CLAUDE_LIVE_KEY"

// testTimeout bounds one live test.
const testTimeout = 120 * time.Second

// repoRoot is the module root (two levels up from this package).
func repoRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(filepath.Dir(wd))
}

// harnessBin returns the directory holding the pinned claude (for PATH)
// and the native binary, or skips the test when it is not installed
// (fails instead with FABRIC_REQUIRE_HARNESSES=1).
func harnessBin(t testing.TB) (binDir, native string) {
	t.Helper()
	nm := filepath.Join(repoRoot(t), "harnesses", "node_modules")
	binDir = filepath.Join(nm, ".bin")
	arch := runtime.GOARCH
	if arch == "amd64" {
		arch = "x64"
	}
	native = filepath.Join(nm, "@anthropic-ai", "claude-code-"+runtime.GOOS+"-"+arch, "claude")
	if st, err := os.Stat(native); err != nil || st.Mode()&0o111 == 0 {
		livetest.Missing(t, "claude (at "+native+")", "run harnesses/install.sh", nil)
	}
	return binDir, native
}

func loadScript(t testing.TB) *modelstub.Script {
	t.Helper()
	s, err := modelstub.LoadScript(filepath.Join("packages", "nvidia.fabric.claude", "conformance.modelstub.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// live is one live-test setup: the adaptertest rig with the Claude
// adapter's descriptor, a fresh key, and the pinned claude on PATH.
type live struct {
	*adaptertest.Rig
	t testing.TB
}

// newLive builds the setup; env is added last to the hosts' environment.
func newLive(t testing.TB, env ...string) *live {
	t.Helper()
	binDir, _ := harnessBin(t)
	r := harnesstest.NewRig(t, adaptertest.Options{Script: loadScript(t), KeyEnv: liveKeyEnv,
		Descriptors: map[string][]byte{"claude.fabric-adapter.json": claude.Descriptor()}, Path: []string{binDir},
		Env: append([]string{"GORACE=atexit_sleep_ms=0"}, env...), Deadline: testTimeout})
	return &live{r, t}
}

// config is the agent config of a live runtime with settings and extra
// top-level keys.
func (l *live) config(settings, extra map[string]any) map[string]any {
	return l.Config(adaptertest.Doc{Name: "claude-live", AdapterID: claude.ID, Settings: settings, Extra: extra,
		Provider: "anthropic-compatible", Model: "claude-fabric-test", BaseURL: l.Stub.AnthropicBaseURL() + "/v1"})
}
