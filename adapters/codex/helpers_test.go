//go:build linux

package codex_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/fabric-runtime/fabric/internal/livetest"
	"github.com/fabric-runtime/fabric/internal/testproc"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/adapters/codex"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/modelstub"
)

// keyEnv names the variable carrying the test's model key.
const keyEnv = "FABRIC_CODEX_TEST_KEY"

// testKey is the key the stub expects.
const testKey = "sk-fabric-codex-test-4f1c"

// testModel is the model name the runtime asks for.
const testModel = "gpt-5.1-codex"

// harnessBinDir returns a directory holding the pinned codex: the npm
// launcher's (harnesses/node_modules/.bin), else the vendored native
// binary's. It skips the test when the harnesses are not installed, unless
// FABRIC_REQUIRE_HARNESSES=1; with FABRIC_CODEX_BIN set it returns "".
func harnessBinDir(t testing.TB) string {
	t.Helper()
	nm, err := filepath.Abs(filepath.Join("..", "..", "harnesses", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Join(nm, ".bin"),
		filepath.Join(nm, "@openai", "codex-linux-x64", "vendor", "x86_64-unknown-linux-musl", "bin"),
		filepath.Join(nm, "@openai", "codex-linux-arm64", "vendor", "aarch64-unknown-linux-musl", "bin")}
	for _, dir := range dirs {
		if _, err := codex.ResolveBinary(func(string) string { return "" }, dir); err == nil {
			return dir
		}
	}
	if os.Getenv(codex.EnvBinary) != "" {
		return ""
	}
	livetest.Missing(t, "the Codex CLI (in "+nm+")", "run harnesses/install.sh", nil)
	return ""
}

// live is one test's world: a scripted model endpoint, a sentinel proxy
// that records any attempt to reach another host, and a Fabric client that
// runs the Codex adapter from this test binary.
type live struct {
	t         testing.TB
	stub      *modelstub.Server
	client    *fabric.Client
	stateDir  string
	workspace string
	descDir   string
	env       []string
	proxy     *livetest.Proxy
}

func newLive(t testing.TB, script *modelstub.Script, opts ...modelstub.Option) *live {
	t.Helper()
	bin := harnessBinDir(t)
	l := &live{t: t, stateDir: t.TempDir(), workspace: t.TempDir(), descDir: t.TempDir()}
	if err := os.WriteFile(filepath.Join(l.descDir, "codex.fabric-adapter.json"), codex.Descriptor, 0o644); err != nil {
		t.Fatal(err)
	}
	l.stub = modelstub.New(script, append([]modelstub.Option{modelstub.WithExpectKey(testKey)}, opts...)...)
	t.Cleanup(l.stub.Close)
	l.proxy = livetest.NewProxy(t)

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	l.env = append(os.Environ(), keyEnv+"="+testKey)
	l.env = append(l.env, l.proxy.Env()...)
	copts := []fabric.Option{fabric.WithBundledAdapters(bundled.Adapters()),
		fabric.WithHostBinary(exe), fabric.WithStateDir(l.stateDir), fabric.WithHostEnv(l.env),
		fabric.WithEnv(livetest.Lookup(l.env)),
	}
	if bin != "" {
		copts = append(copts, fabric.WithExtraPath(bin))
	}
	l.client = fabric.New(copts...)
	return l
}

// config builds an agent config for the Codex adapter against the stub.
func (l *live) config(settings map[string]any, extra map[string]any) map[string]any {
	if settings == nil {
		settings = map[string]any{}
	}
	cfg := map[string]any{
		"schema_version": "fabric.agent/v1alpha1",
		"metadata":       map[string]any{"name": "codex-live"},
		"runtime":        map[string]any{},
		"harness":        map[string]any{"adapter_id": codex.ID, "settings": settings},
		"models": map[string]any{"default": map[string]any{
			"provider": "fabric-stub", "model": testModel,
			"api_key_env": keyEnv, "base_url": l.stub.OpenAIBaseURL(),
		}},
		"discovery":   map[string]any{"local_paths": []any{l.descDir}},
		"environment": map[string]any{"provider": "local", "workspace": l.workspace},
	}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

// noRetries makes codex give up on the first model error.
func noRetries() map[string]any {
	return map[string]any{"config_overrides": map[string]any{
		"model_providers.fabric.request_max_retries": 0,
		"model_providers.fabric.stream_max_retries":  0,
	}}
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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rt, err := l.client.StartRuntime(ctx, loaded)
	if err != nil {
		l.t.Fatalf("start: %v", err)
	}
	l.t.Cleanup(func() { rt.Stop(context.Background()) })
	return rt
}

func invoke(t testing.TB, rt *fabric.Runtime, input string) *contract.RunResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := rt.Invoke(ctx, input)
	if err != nil {
		t.Fatalf("invoke %q: %v", input, err)
	}
	return res
}

// checkOffline fails the test when codex tried to reach another host.
func (l *live) checkOffline() {
	l.t.Helper()
	if n := l.proxy.Hits(); n > 0 {
		l.t.Errorf("codex opened %d connections to the sentinel proxy: it tried to reach a host other than the model endpoint", n)
	}
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

// codexPid finds the codex process the host started.
func codexPid(t testing.TB, hostPid int) int {
	t.Helper()
	for _, pid := range testproc.Pids() {
		if ppid, _, comm, ok := testproc.Stat(pid); ok && ppid == hostPid && strings.HasPrefix(comm, "codex") {
			return pid
		}
	}
	t.Fatalf("no codex child of host %d", hostPid)
	return 0
}

// remoteAddrs returns the remote addresses of the TCP sockets pid holds.
func remoteAddrs(pid int) ([]netip.AddrPort, error) {
	inodes := map[string]bool{}
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(fdDir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(fdDir, e.Name()))
		if err == nil && strings.HasPrefix(target, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	var out []netip.AddrPort
	for _, file := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, file))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || !inodes[fields[9]] {
				continue
			}
			if ap, ok := parseProcAddr(fields[2]); ok {
				out = append(out, ap)
			}
		}
		f.Close()
	}
	return out, nil
}

// parseProcAddr parses a /proc/net/tcp address (hex, host byte order per
// 32-bit word).
func parseProcAddr(s string) (netip.AddrPort, bool) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	var b []byte
	for i := 0; i+8 <= len(host); i += 8 {
		w, err := strconv.ParseUint(host[i:i+8], 16, 32)
		if err != nil {
			return netip.AddrPort{}, false
		}
		b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	a, ok := netip.AddrFromSlice(b)
	if !ok {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(p)), true
}
