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
	"github.com/fabric-runtime/fabric/internal/harnesstest"
	"github.com/fabric-runtime/fabric/internal/livetest"
	"github.com/fabric-runtime/fabric/internal/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

// keyEnv names the variable carrying the test's model key.
const keyEnv = "FABRIC_OPENCODE_TEST_KEY"

// testKey is the key the stub expects.
const testKey = "sk-fabric-opencode-test-51f0"

// testModel is the model name the runtime asks for.
const testModel = "fabric-stub-model"

// harnessPath returns the PATH entries that hold the pinned opencode:
// FABRIC_HARNESS_PATH, then harnesses/opencode/node_modules/.bin. It skips
// the test when opencode is in neither, unless FABRIC_REQUIRE_HARNESSES=1.
func harnessPath(t testing.TB) []string {
	t.Helper()
	return harnessPathFrom(t, filepath.Join("..", "..", "harnesses"))
}

func harnessPathFrom(t testing.TB, harnesses string) []string {
	t.Helper()
	var dirs []string
	if p := os.Getenv("FABRIC_HARNESS_PATH"); p != "" {
		dirs = append(dirs, filepath.SplitList(p)...)
	}
	root, err := filepath.Abs(harnesses)
	if err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, filepath.Join(root, "opencode", "node_modules", ".bin"))
	bin, err := opencode.ResolveBinary(func(string) string { return "" }, strings.Join(dirs, string(os.PathListSeparator)))
	if err == nil {
		t.Logf("opencode: %s", bin)
		return dirs
	}
	livetest.Missing(t, "opencode", "run harnesses/install.sh", err)
	return nil
}

// live is one test's world: the adaptertest rig with the OpenCode
// adapter's descriptor, the stub expecting testKey, and opencode on PATH.
type live struct {
	*adaptertest.Rig
	t    testing.TB
	path []string
}

func newLive(t testing.TB, script *modelstub.Script) *live {
	t.Helper()
	path := harnessPath(t)
	r := harnesstest.NewRig(t, adaptertest.Options{Script: script, KeyEnv: keyEnv, Key: testKey,
		Descriptors: map[string][]byte{"opencode.fabric-adapter.json": opencode.Descriptor}, Path: path,
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

// checkModelRequests checks C1/Q9 on the request log: every request the
// endpoint saw came through FabricConfig's URL (the stub's /v1 base) with
// the key from api_key_env, for the configured model.
func (l *live) checkModelRequests() []modelstub.Request {
	l.t.Helper()
	reqs := l.Stub.Requests()
	if len(reqs) == 0 {
		l.t.Fatal("the model endpoint saw no request")
	}
	for _, r := range reqs {
		if r.Method != "POST" || r.Path != "/v1/chat/completions" || r.AuthHeader != "authorization" || !r.KeyChecked || !r.KeyOK || r.Model != testModel {
			l.t.Errorf("request %d: %s %s auth %q key_checked %v key_ok %v model %q", r.Seq, r.Method, r.Path, r.AuthHeader, r.KeyChecked, r.KeyOK, r.Model)
		}
	}
	return reqs
}

// mainRequests are the model requests that are not side requests
// (OpenCode's title generation).
func mainRequests(reqs []modelstub.Request) []modelstub.Request {
	var out []modelstub.Request
	for _, r := range reqs {
		if !r.Side {
			out = append(out, r)
		}
	}
	return out
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
