// Command acp benchmarks Fabric's generic ACP adapter against sandbox-agent
// (npm @sandbox-agent/cli) driving the same codex-acp binary against the
// same scripted model endpoint (modelstub), side by side in one run: cold
// start, per-turn latency (and the overhead over driving codex-acp directly
// over stdio), idle RSS and CPU of each process tree, and the processes
// left after N start/stop cycles. It prints medians and ratios.
//
//	bench/acp/run.sh            (builds bin/fabric, finds the harnesses)
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/procfs"
	"github.com/fabric-runtime/fabric/modelstub"
)

const (
	keyEnv = "FABRIC_BENCH_KEY"
	key    = "sk-bench"
	model  = "gpt-5.1-codex"
)

var (
	fabricBin  = flag.String("fabric", "bin/fabric", "the fabric binary (adapter host)")
	codexACP   = flag.String("codex-acp", "", "native codex-acp binary")
	codexBin   = flag.String("codex", "", "native codex binary (pre-placed for sandbox-agent)")
	sandboxBin = flag.String("sandbox-agent", "", "sandbox-agent binary")
	turns      = flag.Int("turns", 20, "turns per side")
	starts     = flag.Int("starts", 10, "cold starts per side")
	cycles     = flag.Int("cycles", 100, "start/stop cycles per side for the leak count")
	idleFor    = flag.Duration("idle", 5*time.Second, "idle window for RSS and CPU")
)

func main() {
	flag.Parse()
	for _, p := range []*string{codexACP, codexBin, sandboxBin, fabricBin} {
		abs, err := filepath.Abs(*p)
		if err != nil || *p == "" {
			fail(fmt.Errorf("missing binary flag: %q", *p))
		}
		*p = abs
	}
	os.Setenv(keyEnv, key)
	stub := modelstub.New(&modelstub.Script{Default: &modelstub.Reply{Text: "4"}}, modelstub.WithExpectKey(key))
	defer stub.Close()
	work, err := os.MkdirTemp("", "fabric-bench-acp-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(work)

	f := &fabricSide{stub: stub, work: work}
	s := &sandboxSide{stub: stub, work: work}
	d := &directSide{stub: stub, work: work}

	res := map[string]map[string]float64{"fabric": {}, "sandbox-agent": {}, "direct": {}}
	// Cold start: spawn to a session ready for a prompt.
	for name, fn := range map[string]func() (time.Duration, func(), error){"fabric": f.start, "sandbox-agent": s.start, "direct": d.start} {
		var ds []time.Duration
		for range *starts {
			t, stop, err := fn()
			if err != nil {
				fail(fmt.Errorf("%s start: %w", name, err))
			}
			stop()
			ds = append(ds, t)
		}
		res[name]["cold_start_ms"] = ms(median(ds))
	}
	// Turns, then idle RSS/CPU on the same runtime.
	for name, fn := range map[string]func() ([]time.Duration, idleStat, error){"fabric": f.turnsAndIdle, "sandbox-agent": s.turnsAndIdle, "direct": d.turnsAndIdle} {
		ds, idle, err := fn()
		if err != nil {
			fail(fmt.Errorf("%s turns: %w", name, err))
		}
		res[name]["turn_ms"] = ms(median(ds))
		res[name]["idle_rss_mib"] = idle.rssMiB
		res[name]["idle_cpu_pct"] = idle.cpuPct
		res[name]["idle_procs"] = float64(idle.procs)
	}
	// Leak count after N start/stop cycles (only the two systems).
	for name, fn := range map[string]func() (time.Duration, func(), error){"fabric": f.start, "sandbox-agent": s.start} {
		before := codexACPPids()
		for range *cycles {
			_, stop, err := fn()
			if err != nil {
				fail(fmt.Errorf("%s cycle: %w", name, err))
			}
			stop()
		}
		time.Sleep(2 * time.Second)
		left := without(codexACPPids(), before)
		res[name]["procs_left_after_cycles"] = float64(len(left))
		for _, p := range left { // leave the machine clean
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}

	fmt.Printf("ACP benchmark: codex-acp %s against modelstub; %d cold starts, %d turns, %s idle, %d start/stop cycles per side\n",
		filepath.Base(*codexACP), *starts, *turns, *idleFor, *cycles)
	fmt.Printf("%-26s %12s %14s %10s %12s %10s\n", "metric (median)", "fabric", "sandbox-agent", "ratio", "direct stdio", "fabric/direct")
	for _, m := range []string{"cold_start_ms", "turn_ms", "idle_rss_mib", "idle_cpu_pct", "idle_procs", "procs_left_after_cycles"} {
		fv, sv, dv := res["fabric"][m], res["sandbox-agent"][m], res["direct"][m]
		ratio, dratio := "-", "-"
		if sv != 0 {
			ratio = fmt.Sprintf("%.2fx", fv/sv)
		}
		if dv != 0 && m != "procs_left_after_cycles" {
			dratio = fmt.Sprintf("%.2fx", fv/dv)
		}
		ds := fmt.Sprintf("%.2f", dv)
		if m == "procs_left_after_cycles" {
			ds = "-"
		}
		fmt.Printf("%-26s %12.2f %14.2f %10s %12s %10s\n", m, fv, sv, ratio, ds, dratio)
	}
	fmt.Printf("per-turn overhead over direct stdio: fabric %+.2f ms, sandbox-agent %+.2f ms\n",
		res["fabric"]["turn_ms"]-res["direct"]["turn_ms"], res["sandbox-agent"]["turn_ms"]-res["direct"]["turn_ms"])
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench/acp:", err)
	os.Exit(1)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// codexArgs are the -c overrides that point codex-acp at the stub.
func codexArgs(stub *modelstub.Server) []string {
	return []string{"-c", "model_provider=fabric", "-c", "model_providers.fabric.name=fabric",
		"-c", "model_providers.fabric.base_url=" + stub.OpenAIBaseURL(), "-c", "model_providers.fabric.env_key=" + keyEnv,
		"-c", "model_providers.fabric.wire_api=responses", "-c", "model=" + model,
		"-c", "analytics.enabled=false", "-c", "features.plugins=false", "-c", "sandbox_mode=danger-full-access",
		"-c", "approval_policy=never"}
}

// ---- Fabric ----

type fabricSide struct {
	stub   *modelstub.Server
	work   string
	client *fabric.Client
}

func (f *fabricSide) loaded() (*fabric.Loaded, error) {
	if f.client == nil {
		f.client = fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithHostBinary(*fabricBin), fabric.WithStateDir(filepath.Join(f.work, "fabric-state")))
	}
	ws := filepath.Join(f.work, "ws")
	_ = os.MkdirAll(ws, 0o755)
	cfg := map[string]any{
		"schema_version": "fabric.agent/v1alpha1", "metadata": map[string]any{"name": "bench"}, "runtime": map[string]any{},
		"harness": map[string]any{"adapter_id": "nvidia.fabric.acp.codex-acp", "settings": map[string]any{
			"command": *codexACP, "permission_policy": "allow", "extra_args": []string{"-c", "approval_policy=never"}}},
		"models":      map[string]any{"default": map[string]any{"provider": "fabric-stub", "model": model, "api_key_env": keyEnv, "base_url": f.stub.OpenAIBaseURL()}},
		"environment": map[string]any{"provider": "local", "workspace": ws},
	}
	b, _ := json.Marshal(cfg)
	return f.client.ParseConfig(b, "bench.yaml", fabric.LoadOptions{})
}

func (f *fabricSide) startRT() (*fabric.Runtime, time.Duration, error) {
	l, err := f.loaded()
	if err != nil {
		return nil, 0, err
	}
	t0 := time.Now()
	rt, err := f.client.StartRuntime(context.Background(), l)
	return rt, time.Since(t0), err
}

func (f *fabricSide) start() (time.Duration, func(), error) {
	rt, d, err := f.startRT()
	if err != nil {
		return 0, nil, err
	}
	return d, func() { _, _ = rt.Stop(context.Background()) }, nil
}

func (f *fabricSide) turnsAndIdle() ([]time.Duration, idleStat, error) {
	rt, _, err := f.startRT()
	if err != nil {
		return nil, idleStat{}, err
	}
	defer rt.Stop(context.Background())
	var ds []time.Duration
	for i := range *turns + 1 {
		t0 := time.Now()
		res, err := rt.Invoke(context.Background(), "What is 2+2?")
		if err != nil {
			return nil, idleStat{}, err
		}
		if res.Status != contract.StatusSucceeded {
			return nil, idleStat{}, fmt.Errorf("turn %s: %+v", res.Status, res.Error)
		}
		if i > 0 { // the first turn warms up
			ds = append(ds, time.Since(t0))
		}
	}
	return ds, measureIdle(rt.HostPid()), nil
}

// ---- direct stdio (baseline) ----

type directSide struct {
	stub *modelstub.Server
	work string
}

type stdioPeer struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	id   int
	sess string
}

func (p *stdioPeer) call(method string, params any) (json.RawMessage, error) {
	p.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.id, "method": method, "params": params})
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := p.out.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil || m.Method != "" || *m.ID != p.id {
			continue
		}
		if len(m.Error) > 0 {
			return nil, fmt.Errorf("%s: %s", method, m.Error)
		}
		return m.Result, nil
	}
}

func (d *directSide) spawn() (*stdioPeer, time.Duration, error) {
	home := filepath.Join(d.work, "direct-home")
	_ = os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	ws := filepath.Join(d.work, "ws")
	_ = os.MkdirAll(ws, 0o755)
	t0 := time.Now()
	cmd := exec.Command(*codexACP, codexArgs(d.stub)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"))
	cmd.Dir = ws
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	p := &stdioPeer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if _, err := p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		return nil, 0, err
	}
	r, err := p.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
	if err != nil {
		return nil, 0, err
	}
	var sr struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(r, &sr)
	p.sess = sr.SessionID
	return p, time.Since(t0), nil
}

func (p *stdioPeer) stop() {
	p.in.Close()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Wait()
}

func (d *directSide) start() (time.Duration, func(), error) {
	p, t, err := d.spawn()
	if err != nil {
		return 0, nil, err
	}
	return t, p.stop, nil
}

func (d *directSide) turnsAndIdle() ([]time.Duration, idleStat, error) {
	p, _, err := d.spawn()
	if err != nil {
		return nil, idleStat{}, err
	}
	defer p.stop()
	var ds []time.Duration
	for i := range *turns + 1 {
		t0 := time.Now()
		if _, err := p.call("session/prompt", map[string]any{"sessionId": p.sess, "prompt": []any{map[string]any{"type": "text", "text": "What is 2+2?"}}}); err != nil {
			return nil, idleStat{}, err
		}
		if i > 0 {
			ds = append(ds, time.Since(t0))
		}
	}
	return ds, measureIdle(p.cmd.Process.Pid), nil
}

// ---- sandbox-agent ----

type sandboxSide struct {
	stub *modelstub.Server
	work string
	n    atomic.Int64
	home string
}

// prepare pre-places the codex binary and a codex-acp launcher where
// sandbox-agent looks for installed agents (it cannot download them
// offline).
func (s *sandboxSide) prepare() error {
	if s.home != "" {
		return nil
	}
	s.home = filepath.Join(s.work, "sandbox-home")
	bin := filepath.Join(s.home, ".local", "share", "sandbox-agent", "bin")
	if err := os.MkdirAll(filepath.Join(bin, "agent_processes"), 0o755); err != nil {
		return err
	}
	// A regular file (sandbox-agent does not take a symlink): a hard link
	// when possible, else a copy.
	if err := os.Link(*codexBin, filepath.Join(bin, "codex")); err != nil {
		data, err := os.ReadFile(*codexBin)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(bin, "codex"), data, 0o755); err != nil {
			return err
		}
	}
	launcher := "#!/bin/sh\nexec " + strconv.Quote(*codexACP) + " " + quoteAll(codexArgs(s.stub)) + " \"$@\"\n"
	return os.WriteFile(filepath.Join(bin, "agent_processes", "codex-acp"), []byte(launcher), 0o755)
}

func quoteAll(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

type sandboxServer struct {
	cmd    *exec.Cmd
	base   string
	client *http.Client
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (s *sandboxSide) spawn() (*sandboxServer, string, time.Duration, error) {
	if err := s.prepare(); err != nil {
		return nil, "", 0, err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", 0, err
	}
	ws := filepath.Join(s.work, "ws")
	_ = os.MkdirAll(ws, 0o755)
	t0 := time.Now()
	_ = os.MkdirAll(filepath.Join(s.home, ".codex"), 0o700)
	cmd := exec.Command(*sandboxBin, "server", "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--no-token", "--no-telemetry")
	cmd.Env = append(os.Environ(), "HOME="+s.home, "SANDBOX_AGENT_BIN="+*sandboxBin, "CODEX_HOME="+filepath.Join(s.home, ".codex"))
	cmd.Dir = ws
	if err := cmd.Start(); err != nil {
		return nil, "", 0, err
	}
	srv := &sandboxServer{cmd: cmd, base: fmt.Sprintf("http://127.0.0.1:%d", port), client: &http.Client{Timeout: 60 * time.Second}}
	for {
		r, err := srv.client.Get(srv.base + "/v1/health")
		if err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				break
			}
		}
		if time.Since(t0) > 30*time.Second {
			srv.kill()
			return nil, "", 0, errors.New("sandbox-agent did not become healthy")
		}
		time.Sleep(5 * time.Millisecond)
	}
	sid := fmt.Sprintf("b%d", s.n.Add(1))
	if _, err := srv.rpc(sid, "codex", 1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		srv.kill()
		return nil, "", 0, err
	}
	r, err := srv.rpc(sid, "", 2, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
	if err != nil {
		srv.kill()
		return nil, "", 0, err
	}
	var sr struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(r, &sr)
	return srv, sid + "|" + sr.SessionID, time.Since(t0), nil
}

func (srv *sandboxServer) rpc(serverID, agent string, id int, method string, params any) (json.RawMessage, error) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	u := srv.base + "/v1/acp/" + serverID
	if agent != "" {
		u += "?agent=" + agent
	}
	resp, err := srv.client.Post(u, "application/json", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, body)
	}
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", method, err, body)
	}
	if len(m.Error) > 0 && string(m.Error) != "null" {
		return nil, fmt.Errorf("%s: %s", method, m.Error)
	}
	return m.Result, nil
}

// stop ends the server as a user would (SIGTERM) and waits for it; what it
// leaves behind is counted by the cycles.
func (srv *sandboxServer) stop() {
	_ = srv.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = srv.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = srv.cmd.Process.Kill()
		<-done
	}
}

func (srv *sandboxServer) kill() { _ = srv.cmd.Process.Kill(); _ = srv.cmd.Wait() }

func (s *sandboxSide) start() (time.Duration, func(), error) {
	srv, _, t, err := s.spawn()
	if err != nil {
		return 0, nil, err
	}
	return t, srv.stop, nil
}

func (s *sandboxSide) turnsAndIdle() ([]time.Duration, idleStat, error) {
	srv, ids, _, err := s.spawn()
	if err != nil {
		return nil, idleStat{}, err
	}
	before := codexACPPids()
	defer func() {
		srv.stop()
		time.Sleep(time.Second)
		for _, p := range codexACPPids() { // orphans of this server
			if slices.Contains(before, p) {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
	}()
	serverID, sess, _ := strings.Cut(ids, "|")
	var ds []time.Duration
	for i := range *turns + 1 {
		t0 := time.Now()
		if _, err := srv.rpc(serverID, "", 10+i, "session/prompt", map[string]any{"sessionId": sess, "prompt": []any{map[string]any{"type": "text", "text": "What is 2+2?"}}}); err != nil {
			return nil, idleStat{}, err
		}
		if i > 0 {
			ds = append(ds, time.Since(t0))
		}
	}
	st := measureIdle(srv.cmd.Process.Pid)
	// The agent is the server's child; include orphan-prone children.
	return ds, st, nil
}

// ---- /proc helpers ----

type idleStat struct {
	rssMiB float64
	cpuPct float64
	procs  int
}

// tree returns root and its live descendants.
func tree(root int) []int {
	children := map[int][]int{}
	all, _ := procfs.Default.Stats()
	for _, st := range all {
		if st.State != 'Z' {
			children[st.PPID] = append(children[st.PPID], st.Pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

func measureIdle(root int) idleStat {
	time.Sleep(time.Second) // settle after the last turn
	sum := func() (uint64, int64, int) {
		var t uint64
		var r int64
		pids := tree(root)
		for _, p := range pids {
			if st, err := procfs.Default.Stat(p); err == nil {
				t += st.UTime + st.STime
				r += st.RSS
			}
		}
		return t, r, len(pids)
	}
	t0, _, _ := sum()
	time.Sleep(*idleFor)
	t1, rss, n := sum()
	page := int64(os.Getpagesize())
	return idleStat{rssMiB: float64(rss*page) / (1 << 20), cpuPct: float64(t1-t0) / 100 / idleFor.Seconds() * 100, procs: n}
}

// codexACPPids are live processes running the codex-acp binary.
func codexACPPids() []int {
	var out []int
	all, _ := procfs.Default.Stats()
	for _, st := range all {
		p := st.Pid
		if st.State == 'Z' {
			continue
		}
		if exe, err := os.Readlink("/proc/" + strconv.Itoa(p) + "/exe"); err == nil && filepath.Base(exe) == "codex-acp" {
			out = append(out, p)
		}
	}
	return out
}

func without(a, b []int) []int {
	var out []int
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
