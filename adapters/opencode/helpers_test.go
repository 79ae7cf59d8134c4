//go:build linux

package opencode_test

import (
	"context"
	"encoding/json"
	"github.com/fabric-runtime/fabric/internal/livetest"
	"github.com/fabric-runtime/fabric/internal/testproc"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/adapters/opencode"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testaudit"
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

// live is one test's world: a scripted model endpoint, a sentinel proxy
// that records any attempt to reach another host, and a Fabric client that
// runs the OpenCode adapter from this test binary.
type live struct {
	t         testing.TB
	stub      *modelstub.Server
	client    *fabric.Client
	path      []string
	stateDir  string
	workspace string
	artifacts string
	descDir   string
	proxy     *livetest.Proxy
}

func newLive(t testing.TB, script *modelstub.Script) *live {
	t.Helper()
	path := harnessPath(t)
	l := &live{t: t, path: path, stateDir: t.TempDir(), workspace: t.TempDir(), artifacts: t.TempDir(), descDir: t.TempDir()}
	if err := os.WriteFile(filepath.Join(l.descDir, "opencode.fabric-adapter.json"), opencode.Descriptor, 0o644); err != nil {
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

// config builds an agent config for the OpenCode adapter against the stub.
func (l *live) config(settings map[string]any) map[string]any {
	if settings == nil {
		settings = map[string]any{}
	}
	if _, ok := settings["startup_timeout_seconds"]; !ok {
		settings["startup_timeout_seconds"] = 75 // a loaded 2-core CI machine
	}
	return map[string]any{
		"schema_version": "fabric.agent/v1alpha1",
		"metadata":       map[string]any{"name": "opencode-live"},
		"runtime":        map[string]any{},
		"harness":        map[string]any{"adapter_id": opencode.ID, "settings": settings},
		"models": map[string]any{"default": map[string]any{
			"provider": "fabric-stub", "model": testModel,
			"api_key_env": keyEnv, "base_url": l.stub.OpenAIBaseURL(),
		}},
		"instructions": map[string]any{"system": map[string]any{"content": "FABRIC_SYSTEM_NOTE_3141: answer briefly.", "mode": "append"}},
		"discovery":    map[string]any{"local_paths": []any{l.descDir}},
		"environment":  map[string]any{"provider": "local", "workspace": l.workspace, "artifacts": l.artifacts},
	}
}

func (l *live) start(cfg map[string]any) *fabric.Runtime {
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
		l.t.Fatalf("start: %v", err)
	}
	l.t.Cleanup(func() { rt.Stop(context.Background()) })
	testaudit.Log(l.t, "handle", rt.Handle())
	return rt
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

// checkOffline fails the test when OpenCode tried to reach another host.
func (l *live) checkOffline() {
	l.t.Helper()
	if n := l.proxy.Hits(); n > 0 {
		l.t.Errorf("OpenCode opened %d connections to the sentinel proxy: it tried to reach a host other than the model endpoint: %q", n, l.proxy.Requests())
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

func events(res *contract.RunResult, kind string) []contract.FabricEvent {
	var out []contract.FabricEvent
	for _, e := range res.Events {
		if e.Kind == kind {
			out = append(out, e)
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
