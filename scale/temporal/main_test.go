package temporal_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/fabric-runtime/fabric/contract"
)

// workerBin is fabric-temporal and serverBin the test server (module
// ./testserver: temporaltest in a process of its own, because the
// server's OpenTelemetry pins cannot share a build with Fabric's), built
// once, by the first test that needs them, into binDir.
var (
	binDir               string
	buildOnce            sync.Once
	buildErr             error
	workerBin, serverBin string
)

func TestMain(m *testing.M) {
	// Race-built adapter hosts (the local runs' too) would otherwise
	// sleep 1 s at exit.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	dir, err := os.MkdirTemp("", "fabric-temporal-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildBinaries(t *testing.T) {
	t.Helper()
	buildOnce.Do(func() {
		workerBin = filepath.Join(binDir, "fabric-temporal")
		serverBin = filepath.Join(binDir, "testserver")
		race := []string{}
		if raceEnabled {
			race = append(race, "-race")
		}
		builds := [][]string{
			append(append([]string{"build", "-o", workerBin}, race...), "./cmd/fabric-temporal"),
			{"build", "-C", "testserver", "-o", serverBin, "."},
		}
		for _, args := range builds {
			start := time.Now()
			out, err := exec.Command("go", args...).CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
				return
			}
			t.Logf("go %s: %.1fs", strings.Join(args, " "), time.Since(start).Seconds())
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

// env is one Temporal test server and a directory for a batch.
type env struct {
	t         *testing.T
	addr, ns  string
	client    client.Client
	dir       string
	mu        sync.Mutex
	processes []*proc
}

func newEnv(t *testing.T) *env {
	t.Helper()
	buildBinaries(t)
	start := time.Now()
	srv := exec.Command(serverBin)
	stdin, err := srv.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	srvLog := &syncBuffer{}
	srv.Stderr = srvLog
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = srv.Process.Kill()
			<-done
		}
	})
	var ready struct{ Address, Namespace string }
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &ready)
	}
	if err != nil {
		t.Fatalf("test server: %v\n%s", err, srvLog.String())
	}
	c, err := client.Dial(client.Options{HostPort: ready.Address, Namespace: ready.Namespace, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	t.Logf("temporal test server up in %.2fs at %s", time.Since(start).Seconds(), ready.Address)
	e := &env{t: t, addr: ready.Address, ns: ready.Namespace, client: c, dir: t.TempDir()}
	t.Cleanup(e.stopAll)
	return e
}

// quietLogger drops the SDK client's log lines.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

// proc is a fabric-temporal process in its own process group.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan struct{}
	err  error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (e *env) start(name string, args ...string) *proc {
	e.t.Helper()
	cmd := exec.Command(workerBin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &proc{name: name, cmd: cmd, log: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	e.mu.Lock()
	e.processes = append(e.processes, p)
	e.mu.Unlock()
	return p
}

// worker starts a worker and waits until it says it is ready.
func (e *env) worker(name string, args ...string) *proc {
	e.t.Helper()
	p := e.start(name, append([]string{"worker", "--address", e.addr, "--namespace", e.ns, "--host", name}, args...)...)
	waitFor(e.t, 2*time.Minute, name+" ready", func() bool {
		select {
		case <-p.done:
			e.t.Fatalf("%s exited: %v\n%s", name, p.err, p.log.String())
		default:
		}
		return strings.Contains(p.log.String(), "worker ready")
	})
	return p
}

// submit runs `fabric-temporal run` on spec into the env's dir.
func (e *env) submit(spec string, args ...string) *proc {
	return e.start("run", append([]string{"run", spec, "--dir", e.dir, "--address", e.addr, "--namespace", e.ns, "--follow"}, args...)...)
}

// kill SIGKILLs p's process group.
func (p *proc) kill() { _ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }

func (p *proc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		p.kill()
		t.Fatalf("%s did not exit within %s:\n%s", p.name, d, p.log.String())
	}
	if p.cmd.ProcessState == nil {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

func (e *env) stopAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.processes {
		select {
		case <-p.done:
			continue
		default:
		}
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.kill()
			<-p.done
		}
		if e.t.Failed() {
			e.t.Logf("--- %s log:\n%s", p.name, p.log.String())
		}
	}
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// files writes name -> content under dir.
func files(t *testing.T, dir string, fs map[string]string) {
	t.Helper()
	for name, content := range fs {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// scriptedConfig is a fabric.scripted agent config with settings.
func scriptedConfig(settings string) string {
	return `schema_version: fabric.agent/v1alpha1
metadata: {name: scripted-batch}
runtime: {timeout_seconds: 120}
harness:
  adapter_id: fabric.scripted
  settings: ` + settings + "\n"
}

// records reads every trial.json under dir/trials.
func records(t *testing.T, dir string) []contract.BatchTrial {
	t.Helper()
	var out []contract.BatchTrial
	err := filepath.WalkDir(filepath.Join(dir, "trials"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".incomplete" {
			return filepath.SkipDir
		}
		if d.Name() != "trial.json" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var rec contract.BatchTrial
		if err := json.Unmarshal(data, &rec); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, rec)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TrialID < out[j].TrialID })
	return out
}

func countOutcomes(recs []contract.BatchTrial) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		out[r.Config+"/"+r.Outcome]++
	}
	return out
}

// counts flattens the n_* and errors counts of a summary.json, keyed by
// their JSON path.
func counts(t *testing.T, path string) map[string]float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	var walk func(p string, v any, keep bool)
	walk = func(p string, v any, keep bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				walk(p+"."+k, c, keep || strings.HasPrefix(k, "n_") || k == "errors")
			}
		case []any:
			for i, c := range x {
				walk(p+"["+strconv.Itoa(i)+"]", c, keep)
			}
		case float64:
			if keep {
				out[p] = x
			}
		}
	}
	walk("", v, false)
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// children returns the pids whose parent is pid.
func children(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := os.Open(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		line, _ := bufio.NewReader(f).ReadString('\n')
		f.Close()
		// pid (comm) state ppid ...
		if i := strings.LastIndexByte(line, ')'); i > 0 {
			fields := strings.Fields(line[i+1:])
			if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
				out = append(out, n)
			}
		}
	}
	return out
}

func alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')')
	return i > 0 && !bytes.HasPrefix(bytes.TrimSpace(data[i+1:]), []byte("Z"))
}
