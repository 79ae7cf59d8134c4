// Command acp benchmarks Fabric's generic ACP adapter against sandbox-agent
// (npm @sandbox-agent/cli) driving the same codex-acp binary against the
// same scripted model endpoint (modelstub), side by side in one run: cold
// start, per-turn latency (and the overhead over driving codex-acp directly
// over stdio), idle RSS and CPU of each process tree, and the processes
// left after N start/stop cycles. It prints medians and ratios.
//
// The sides alternate (rotating order) within every round of starts and
// of turns, so that a loaded machine's drift falls on all of them alike;
// the per-turn overhead is the median of each round's difference to the
// direct turn. Cold start is compared with codex-acp started directly
// both in one reused home and in a fresh one each time: Fabric gives every
// runtime a private, new home, so codex-acp does its first-run work
// (databases, bundled skills, shell snapshot) at every Fabric start. By
// default the ACP adapter's home seeds spare it the databases: the first
// start of the binary on the machine is unseeded, the second is too and
// builds the seed once its runtime is ready, later ones copy the seed. The
// bench gives each run a new seeds directory (as a machine that never ran
// the binary has), and prints Fabric's first and second starts apart from
// the median of the rest; -seeds=off (SEEDS=off) measures without seeds.
//
//	bench/acp/run.sh            (builds bin/fabric-host, finds the harnesses)
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
	hostBin    = flag.String("host", "bin/fabric-host", "the adapter host binary (fabric-host, which Fabric uses when it sits beside the program)")
	codexACP   = flag.String("codex-acp", "", "native codex-acp binary")
	codexBin   = flag.String("codex", "", "native codex binary (pre-placed for sandbox-agent)")
	sandboxBin = flag.String("sandbox-agent", "", "sandbox-agent binary (empty: measure Fabric against direct only)")
	turns      = flag.Int("turns", 20, "turns per side")
	startsN    = flag.Int("starts", 10, "cold starts per side")
	cycles     = flag.Int("cycles", 100, "start/stop cycles per side for the leak count")
	idleFor    = flag.Duration("idle", 5*time.Second, "idle window for RSS and CPU")
	seeds      = flag.String("seeds", "default", "the ACP adapter's home seeds: default (on, in a new directory per run) or off")
)

func main() {
	flag.Parse()
	for _, p := range []*string{codexACP, codexBin, hostBin} {
		abs, err := filepath.Abs(*p)
		if err != nil || *p == "" {
			fail(fmt.Errorf("missing binary flag: %q", *p))
		}
		*p = abs
	}
	withSandbox := *sandboxBin != ""
	if withSandbox {
		abs, err := filepath.Abs(*sandboxBin)
		if err != nil {
			fail(err)
		}
		*sandboxBin = abs
	}
	os.Setenv(keyEnv, key)
	stub := modelstub.New(&modelstub.Script{Default: &modelstub.Reply{Text: "4"}}, modelstub.WithExpectKey(key))
	defer stub.Close()
	work, err := os.MkdirTemp("", "fabric-bench-acp-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(work)
	// The ACP adapter's home seeds go to a new directory for each run (not
	// the user's cache), so that Fabric's first start is a first.
	switch *seeds {
	case "default":
		os.Setenv("FABRIC_ACP_SEEDS", filepath.Join(work, "seeds"))
	case "off":
		os.Setenv("FABRIC_ACP_SEEDS", "off")
	default:
		fail(fmt.Errorf("-seeds %q: want default or off", *seeds))
	}

	sides := []side{
		{name: "fabric", sys: &fabricSide{stub: stub, work: work}},
		{name: "direct", sys: &directSide{stub: stub, work: work}},
		{name: "direct-fresh", sys: &directSide{stub: stub, work: work, fresh: true}},
	}
	if withSandbox {
		sides = append(sides, side{name: "sandbox-agent", sys: &sandboxSide{stub: stub, work: work}})
	}
	res := map[string]map[string]float64{}
	for _, sd := range sides {
		res[sd.name] = map[string]float64{}
	}
	// Cold start: spawn to a session ready for a prompt. The sides take
	// turns within each round (the order rotating), so that the machine's
	// load drifts over all of them alike.
	// What a side leaves running after its stop (sandbox-agent leaves its
	// codex-acp) is killed before the next start is timed, so that one
	// side's leftovers do not load the machine while another is measured;
	// leftovers are counted by the cycles below.
	starts := map[string][]time.Duration{}
	for i := range *startsN {
		for _, sd := range rotate(sides, i) {
			before := codexACPPids()
			t, stop, err := sd.sys.start()
			if err != nil {
				fail(fmt.Errorf("%s start: %w", sd.name, err))
			}
			stop()
			killAll(without(codexACPPids(), before))
			starts[sd.name] = append(starts[sd.name], t)
		}
	}
	for name, ds := range starts {
		res[name]["cold_start_ms"] = ms(median(ds))
	}
	// Fabric's first and second starts apart: with seeds, neither is
	// seeded (the second builds the seed once its runtime is ready).
	fs := append(slices.Clone(starts["fabric"]), 0, 0)
	fabricFirst, fabricSecond, fabricRest := fs[0], fs[1], time.Duration(0)
	if len(starts["fabric"]) > 2 {
		fabricRest = median(starts["fabric"][2:])
	}
	// Turns, paired: one session per side, all alive, the sides taking
	// turns (the order rotating); the overhead is the median of each
	// round's difference to the direct turn. Then idle RSS/CPU of each.
	var open []side
	sess := map[string]session{}
	for _, sd := range sides {
		if sd.name == "direct-fresh" { // the same turns as direct
			continue
		}
		s, err := sd.sys.open()
		if err != nil {
			fail(fmt.Errorf("%s session: %w", sd.name, err))
		}
		defer s.close()
		open = append(open, sd)
		sess[sd.name] = s
	}
	turnTimes := map[string][]time.Duration{}
	for i := range *turns + 1 {
		for _, sd := range rotate(open, i) {
			t0 := time.Now()
			if err := sess[sd.name].turn(); err != nil {
				fail(fmt.Errorf("%s turn: %w", sd.name, err))
			}
			if i > 0 { // the first turn warms up
				turnTimes[sd.name] = append(turnTimes[sd.name], time.Since(t0))
			}
		}
	}
	overhead := map[string]float64{}
	for _, sd := range open {
		res[sd.name]["turn_ms"] = ms(median(turnTimes[sd.name]))
		diffs := make([]time.Duration, len(turnTimes[sd.name]))
		for i, d := range turnTimes[sd.name] {
			diffs[i] = d - turnTimes["direct"][i]
		}
		overhead[sd.name] = ms(median(diffs))
		idle := measureIdle(sess[sd.name].pid())
		res[sd.name]["idle_rss_mib"] = idle.rssMiB
		res[sd.name]["idle_cpu_pct"] = idle.cpuPct
		res[sd.name]["idle_procs"] = float64(idle.procs)
	}
	// Leak count after N start/stop cycles (only the two systems).
	for _, sd := range sides {
		if sd.name != "fabric" && sd.name != "sandbox-agent" {
			continue
		}
		before := codexACPPids()
		for range *cycles {
			_, stop, err := sd.sys.start()
			if err != nil {
				fail(fmt.Errorf("%s cycle: %w", sd.name, err))
			}
			stop()
		}
		time.Sleep(2 * time.Second)
		left := without(codexACPPids(), before)
		res[sd.name]["procs_left_after_cycles"] = float64(len(left))
		for _, p := range left { // leave the machine clean
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}

	fmt.Printf("ACP benchmark: codex-acp %s against modelstub, Fabric hosted by %s; %d cold starts, %d turns, %s idle, %d start/stop cycles per side (sides alternating)\n",
		filepath.Base(*codexACP), filepath.Base(*hostBin), *startsN, *turns, *idleFor, *cycles)
	if !withSandbox {
		fmt.Println("sandbox-agent: not measured (no -sandbox-agent binary)")
	}
	fmt.Printf("%-26s %12s %14s %10s %12s %10s %14s %10s\n", "metric (median)", "fabric", "sandbox-agent", "ratio", "direct stdio", "fabric/direct", "direct, fresh", "fabric/fresh")
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fx", a/b)
	}
	for _, m := range []string{"cold_start_ms", "turn_ms", "idle_rss_mib", "idle_cpu_pct", "idle_procs", "procs_left_after_cycles"} {
		fv, sv, dv, fr := res["fabric"][m], res["sandbox-agent"][m], res["direct"][m], res["direct-fresh"][m]
		ds, dratio, frs, fratio := fmt.Sprintf("%.2f", dv), ratio(fv, dv), "-", "-"
		if m == "procs_left_after_cycles" {
			ds, dratio = "-", "-"
		}
		if m == "cold_start_ms" {
			frs, fratio = fmt.Sprintf("%.2f", fr), ratio(fv, fr)
		}
		fmt.Printf("%-26s %12.2f %14.2f %10s %12s %10s %14s %10s\n", m, fv, sv, ratio(fv, sv), ds, dratio, frs, fratio)
	}
	fmt.Printf("per-turn overhead over direct stdio (median of paired differences): fabric %+.2f ms", overhead["fabric"])
	if withSandbox {
		fmt.Printf(", sandbox-agent %+.2f ms", overhead["sandbox-agent"])
	}
	fmt.Println()
	fmt.Println("direct, fresh: codex-acp started with a new, empty CODEX_HOME each time, the first-run work Fabric's private per-runtime home makes it do")
	fmt.Printf("fabric cold start: first %.2f ms, second %.2f ms, the rest median %.2f ms (home seeds %s", ms(fabricFirst), ms(fabricSecond), ms(fabricRest), *seeds)
	if *seeds == "default" {
		fmt.Print(": the first two unseeded, the second building the seed in the background once ready")
	}
	fmt.Println(")")
	if len(starts["fabric"]) > 2 {
		for _, name := range []string{"direct", "direct-fresh"} {
			fmt.Printf("fabric cold start, the rest / %s median: %s\n", name, ratio(ms(fabricRest), ms(median(starts[name]))))
		}
	}
}

// side is one way of driving codex-acp.
type side struct {
	name string
	sys  system
}

type system interface {
	// start spawns and returns the time to a session ready for a prompt,
	// and a stop.
	start() (time.Duration, func(), error)
	// open starts a session for turns.
	open() (session, error)
}

type session interface {
	turn() error
	pid() int // the root of the process tree
	close()
}

// rotate returns s rotated left by i.
func rotate(s []side, i int) []side {
	i %= len(s)
	return append(slices.Clone(s[i:]), s[:i]...)
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

// codexArgs are the -c overrides that point codex-acp at the stub: the
// ones Fabric's codex-acp profile passes (adapters/acp profile.go), so
// that every side drives the same agent configuration (without the
// retry and update settings, codex-acp's turns measured ~2-3 ms apart).
func codexArgs(stub *modelstub.Server) []string {
	return []string{"-c", "model_provider=fabric", "-c", "model_providers.fabric.name=fabric",
		"-c", "model_providers.fabric.base_url=" + stub.OpenAIBaseURL(), "-c", "model_providers.fabric.env_key=" + keyEnv,
		"-c", "model_providers.fabric.wire_api=responses",
		"-c", "model_providers.fabric.request_max_retries=0", "-c", "model_providers.fabric.stream_max_retries=0",
		"-c", "model=" + model,
		"-c", "analytics.enabled=false", "-c", "features.plugins=false", "-c", "check_for_update_on_startup=false",
		"-c", "sandbox_mode=danger-full-access", "-c", "approval_policy=never"}
}

// ---- Fabric ----

type fabricSide struct {
	stub   *modelstub.Server
	work   string
	client *fabric.Client
}

func (f *fabricSide) loaded() (*fabric.Loaded, error) {
	if f.client == nil {
		f.client = fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithHostBinary(*hostBin), fabric.WithStateDir(filepath.Join(f.work, "fabric-state")))
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

func (f *fabricSide) open() (session, error) {
	rt, _, err := f.startRT()
	if err != nil {
		return nil, err
	}
	return fabricSession{rt}, nil
}

type fabricSession struct{ rt *fabric.Runtime }

func (s fabricSession) turn() error {
	res, err := s.rt.Invoke(context.Background(), "What is 2+2?")
	if err != nil {
		return err
	}
	if res.Status != contract.StatusSucceeded {
		return fmt.Errorf("turn %s: %+v", res.Status, res.Error)
	}
	return nil
}

func (s fabricSession) pid() int { return s.rt.HostPid() }
func (s fabricSession) close()   { _, _ = s.rt.Stop(context.Background()) }

// ---- direct stdio (baseline) ----

type directSide struct {
	stub *modelstub.Server
	work string
	// fresh gives every start a new, empty home (CODEX_HOME included),
	// as Fabric's private per-runtime home does; else one home is reused.
	fresh bool
	n     int
}

type stdioPeer struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	id   int
	sess string
	home string // removed on stop (a fresh home)
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
	if d.fresh {
		d.n++
		home = filepath.Join(d.work, "direct-fresh-home", strconv.Itoa(d.n))
	}
	_ = os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	ws := filepath.Join(d.work, "ws")
	_ = os.MkdirAll(ws, 0o755)
	t0 := time.Now()
	cmd := exec.Command(*codexACP, codexArgs(d.stub)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"), "TMPDIR="+privateTmp(d.work, "direct-tmp"))
	cmd.Dir = ws
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	p := &stdioPeer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if d.fresh {
		p.home = home
	}
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

// privateTmp is a TMPDIR beside (not above) the homes, as Fabric gives
// each runtime one: codex-acp refuses to make its helper links (apply_patch
// and others, under CODEX_HOME/tmp/arg0) in a CODEX_HOME under TMPDIR, and
// the bench's homes are under the system's temporary directory, so with
// the default TMPDIR the direct sides would skip work Fabric's runtime does
// at every start, and run without those helpers.
func privateTmp(work, name string) string {
	dir := filepath.Join(work, name)
	_ = os.MkdirAll(dir, 0o700)
	return dir
}

func (p *stdioPeer) stop() {
	p.in.Close()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Wait()
	if p.home != "" {
		_ = os.RemoveAll(p.home)
	}
}

func (d *directSide) start() (time.Duration, func(), error) {
	p, t, err := d.spawn()
	if err != nil {
		return 0, nil, err
	}
	return t, p.stop, nil
}

func (d *directSide) open() (session, error) {
	p, _, err := d.spawn()
	if err != nil {
		return nil, err
	}
	return directSession{p}, nil
}

type directSession struct{ p *stdioPeer }

func (s directSession) turn() error {
	_, err := s.p.call("session/prompt", map[string]any{"sessionId": s.p.sess, "prompt": []any{map[string]any{"type": "text", "text": "What is 2+2?"}}})
	return err
}

func (s directSession) pid() int { return s.p.cmd.Process.Pid }
func (s directSession) close()   { s.p.stop() }

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
	cmd.Env = append(os.Environ(), "HOME="+s.home, "SANDBOX_AGENT_BIN="+*sandboxBin, "CODEX_HOME="+filepath.Join(s.home, ".codex"),
		"TMPDIR="+privateTmp(s.work, "sandbox-tmp"))
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

func (s *sandboxSide) open() (session, error) {
	srv, ids, _, err := s.spawn()
	if err != nil {
		return nil, err
	}
	serverID, sess, _ := strings.Cut(ids, "|")
	return &sandboxSession{srv: srv, serverID: serverID, sess: sess, before: codexACPPids()}, nil
}

type sandboxSession struct {
	srv            *sandboxServer
	serverID, sess string
	n              int
	before         []int
}

func (s *sandboxSession) turn() error {
	s.n++
	_, err := s.srv.rpc(s.serverID, "", 10+s.n, "session/prompt", map[string]any{"sessionId": s.sess, "prompt": []any{map[string]any{"type": "text", "text": "What is 2+2?"}}})
	return err
}

// pid is the server's; the agent is its child.
func (s *sandboxSession) pid() int { return s.srv.cmd.Process.Pid }

func (s *sandboxSession) close() {
	s.srv.stop()
	time.Sleep(time.Second)
	for _, p := range codexACPPids() { // orphans of this server
		if slices.Contains(s.before, p) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
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

// killAll kills pids and waits (up to 2 s) until none is left, so that
// their teardown is not timed as part of the next start.
func killAll(pids []int) {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if live := without(pids, without(pids, codexACPPids())); len(live) == 0 {
			return
		}
	}
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
