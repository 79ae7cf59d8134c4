//go:build linux

package opencode_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/opencode"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

// webUser is the web UI's Basic auth user.
const webUser = "opencode"

// testModel is the model name the runtime asks for.
const testModel = "fabric-stub-model"

// harnessPath returns the PATH entries that hold the pinned opencode:
// FABRIC_HARNESS_PATH, then harnesses/opencode/node_modules/.bin. It skips
// the test when opencode is in neither, unless FABRIC_REQUIRE_HARNESSES=1.
func harnessPath(t testing.TB) []string {
	t.Helper()
	dirs := append(filepath.SplitList(os.Getenv("FABRIC_HARNESS_PATH")), "opencode/node_modules/.bin")
	return harnesstest.HarnessDirs(t, "opencode", adaptertest.Installed("opencode"), dirs...)
}

// live is one test's world: the adaptertest rig with the OpenCode
// adapter's descriptor, a fresh key, and opencode on PATH.
type live struct {
	*adaptertest.Rig
	t    testing.TB
	path []string
}

func newLive(t testing.TB, script *modelstub.Script) *live {
	t.Helper()
	path := harnessPath(t)
	r := harnesstest.NewRig(t, adaptertest.Options{Script: script,
		Descriptors: map[string][]byte{"opencode.fabric-adapter.json": opencode.Descriptor()}, Path: path,
		Deadline: 2 * time.Minute, Audit: true})
	return &live{r, t, path}
}

// config builds an agent config for the OpenCode adapter against the stub.
func (l *live) config(settings map[string]any) map[string]any {
	if settings == nil {
		settings = map[string]any{}
	}
	if _, ok := settings["startup_timeout_seconds"]; !ok {
		settings["startup_timeout_seconds"] = 75 // a loaded 2-core CI machine
	}
	return l.Config(adaptertest.Doc{Name: "opencode-live", AdapterID: opencode.ID, Settings: settings, Model: testModel, Artifacts: true,
		Extra: map[string]any{"instructions": map[string]any{"system": map[string]any{"content": "FABRIC_SYSTEM_NOTE_3141: answer briefly.", "mode": "append"}}}})
}

// serverPid finds the opencode server the host started.
func serverPid(t testing.TB, hostPid int) int {
	t.Helper()
	for _, pid := range testproc.Pids() {
		if ppid, _, comm, ok := testproc.Stat(pid); ok && ppid == hostPid && strings.HasPrefix(comm, "opencode") {
			return pid
		}
	}
	t.Fatalf("no opencode child of host %d", hostPid)
	return 0
}

// freePort returns a free loopback port.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
