package claude_test

import (
	"bufio"
	"context"
	"fmt"
	"github.com/fabric-runtime/fabric/internal/livetest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/adapters/claude"
	"github.com/fabric-runtime/fabric/internal/procfs"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestMain doubles as the adapter host: runtimes re-execute this test
// binary with FABRIC_BUILTIN_ADAPTER set.
func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeModeEnv); mode != "" {
		os.Exit(fakeClaude(mode))
	}
	if os.Getenv("FABRIC_BUILTIN_ADAPTER") == claude.ID {
		os.Exit(serve(claude.New()))
	}
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}

func serve(a adapterkit.Adapter) int {
	if err := adapterkit.Serve(context.Background(), a); err != nil {
		fmt.Fprintln(os.Stderr, "claude host:", err)
		return 1
	}
	return 0
}

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

func descriptorPath(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("packages", "nvidia.fabric.claude", "claude.fabric-adapter.json"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func loadScript(t testing.TB) *modelstub.Script {
	t.Helper()
	s, err := modelstub.LoadScript(filepath.Join("packages", "nvidia.fabric.claude", "conformance.modelstub.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// live is one live-test setup: a model stub, a trap proxy, a workspace,
// a state dir and a client whose hosts run this test binary.
type live struct {
	t        testing.TB
	stub     *modelstub.Server
	proxy    *livetest.Proxy
	key      string
	ws       string
	stateDir string
	client   *fabric.Client
	env      []string
}

func newLive(t testing.TB) *live {
	t.Helper()
	binDir, _ := harnessBin(t)
	l := &live{t: t, key: "sk-fabric-live-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	l.stub = modelstub.New(loadScript(t), modelstub.WithExpectKey(l.key))
	t.Cleanup(l.stub.Close)
	l.proxy = livetest.NewProxy(t)
	l.ws = t.TempDir()
	l.stateDir = t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	l.env = append(append(os.Environ(), l.proxy.Env()...),
		liveKeyEnv+"="+l.key,
		"GORACE=atexit_sleep_ms=0",
	)
	l.client = fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithHostBinary(exe), fabric.WithStateDir(l.stateDir),
		fabric.WithHostEnv(l.env), fabric.WithExtraPath(binDir), fabric.WithEnv(livetest.Lookup(l.env)))
	return l
}

// config is the agent config of a live runtime; settings is YAML flow
// mapping text merged into harness.settings.
func (l *live) config(settings string) string {
	if settings == "" {
		settings = "{}"
	}
	return fmt.Sprintf(`
schema_version: fabric.agent/v1alpha1
metadata: {name: claude-live}
runtime: {}
harness:
  adapter_id: %s
  settings: %s
models:
  default:
    provider: anthropic-compatible
    model: claude-fabric-test
    base_url: %q
    api_key_env: %s
environment:
  provider: local
  workspace: %q
discovery:
  local_paths: [%q]
`, claude.ID, settings, l.stub.AnthropicBaseURL()+"/v1", liveKeyEnv, l.ws, descriptorPath(l.t))
}

func (l *live) start(ctx context.Context, cfg string) *fabric.Runtime {
	l.t.Helper()
	loaded, err := l.client.ParseConfig([]byte(cfg), filepath.Join(l.ws, "agent.yaml"), fabric.LoadOptions{})
	if err != nil {
		l.t.Fatalf("config: %v", err)
	}
	rt, err := l.client.StartRuntime(ctx, loaded)
	if err != nil {
		l.t.Fatalf("start: %v", err)
	}
	l.t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		rt.Stop(sctx)
	})
	return rt
}

// checkNoOutbound fails when the trap proxy saw a request.
func (l *live) checkNoOutbound() {
	l.t.Helper()
	if seen := l.proxy.Requests(); len(seen) > 0 {
		l.t.Errorf("the harness sent requests beyond the model endpoint: %v", seen)
	}
}

// claudeProcess finds the claude process of a runtime through its
// environment: its CLAUDE_CONFIG_DIR is under stateDir. It returns the
// pid, the process group and the TMPDIR it was given.
func claudeProcess(t testing.TB, stateDir string) (pid, pgid int, tmpdir string) {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		var cfgDir, tmp string
		for _, kv := range strings.Split(string(data), "\x00") {
			if v, ok := strings.CutPrefix(kv, "CLAUDE_CONFIG_DIR="); ok {
				cfgDir = v
			}
			if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
				tmp = v
			}
		}
		if cfgDir == "" || !strings.HasPrefix(cfgDir, stateDir+string(filepath.Separator)) {
			continue
		}
		if _, g, ok := procStat(p); ok {
			return p, g, tmp
		}
	}
	t.Fatalf("no claude process with its config under %s", stateDir)
	return 0, 0, ""
}

// procStat reads the state and process group of pid.
func procStat(pid int) (state byte, pgrp int, ok bool) {
	st, err := procfs.Default.Stat(pid)
	return st.State, st.PGID, err == nil
}

// groupMembers lists the live processes of process group pgid.
func groupMembers(pgid int) []int {
	pids, _ := procfs.Default.GroupPids(pgid)
	return pids
}

// rssSampler samples the summed RSS of a host process and a process
// group every 25 ms and keeps the peak.
type rssSampler struct {
	stop chan struct{}
	done chan struct{}
	peak int64 // KiB
}

func sampleRSS(hostPid, pgid int) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for {
			var sum int64
			pids := groupMembers(pgid)
			if !slices.Contains(pids, hostPid) {
				pids = append(pids, hostPid)
			}
			for _, p := range pids {
				sum += rssKiB(p)
			}
			s.peak = max(s.peak, sum)
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// Peak stops sampling and returns the peak in MiB.
func (s *rssSampler) Peak() float64 {
	close(s.stop)
	<-s.done
	return float64(s.peak) / 1024
}

func rssKiB(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
