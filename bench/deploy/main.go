//go:build linux

// Command deploy measures `fabric deploy` (DESIGN.md section 5, issue 11
// acceptance 8) side by side with `fabric-agent-ctl serve` driving the same
// scripted runtimes, every command its own process as a user runs it:
//
//  1. an unchanged `fabric deploy apply` of 10 agents, paired with the same
//     "is everything as it should be" pass by hand: one `fabric-agent-ctl
//     status` and one `fabric-agent-ctl check --agent NAME --ready` per agent
//     (apply's own pass: a status, a noop per agent, a ready check each);
//  2. `apply` of 100 agents from empty, paired with starting `fabric-agent-ctl
//     serve` and 100 `fabric-agent-ctl start` calls (-parallel at a time, the
//     supervisor's own start concurrency by default);
//  3. the idle CPU of the supervisor (and of that serve) over -idle once the
//     100 runtimes run: utime+stime clock ticks from /proc/PID/stat, the
//     on-CPU time of all its threads from /proc/PID/task/*/schedstat and
//     their context switches (each one a wakeup); then the same over
//     -steady right after it (what remains once the start-up tail, e.g.
//     the Go runtime's scavenger returning the start-up heap, is over);
//  4. the RSS of the supervisor (and of that serve) with the 100 idle
//     runtimes, and the hosts' total RSS and PSS, separately.
//
// Whole-process wall and CPU (user+system of the finished children) per
// run; medians over -runs; ratios are taken pair by pair (A, B, A, B...),
// then their median. Whatever a run started is destroyed or stopped, and a
// failed run's leftovers are killed.
//
//	go build -o bin/ ./cmd/fabric ./cmd/fabric-core ./cmd/fabric-serve ./cmd/fabric-host ./cmd/fabric-agent-ctl ./cmd/fabric-agent-ctl-serve && go run ./bench/deploy -bin bin
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/procfs"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

// agentConfig is every agent's FabricConfig: the bundled scripted adapter.
const agentConfig = `schema_version: fabric.agent/v1alpha1
metadata: {name: %s}
runtime: {}
harness: {adapter_id: fabric.scripted, settings: {response: ok}}
`

var (
	bin      string
	work     string
	runs     int
	warmup   int
	parallel int
	idle     time.Duration
	steady   time.Duration
	// owners are the supervisors and serves this program started (or that
	// apply started for it); cleanup kills them and their hosts.
	owners = map[int]bool{}
)

func main() {
	flag.StringVar(&bin, "bin", "bin", "directory with fabric, fabric-core, fabric-serve, fabric-host, fabric-agent-ctl and fabric-agent-ctl-serve")
	flag.IntVar(&runs, "runs", 5, "measured runs of each figure")
	flag.IntVar(&warmup, "warmup", 1, "unmeasured runs before figure 1's pairs")
	flag.IntVar(&parallel, "parallel", 8, "fabric-agent-ctl start calls at once (the supervisor starts 8 at once)")
	flag.DurationVar(&idle, "idle", 10*time.Second, "idle window of figure 3, from the moment apply (the last start) returned")
	flag.DurationVar(&steady, "steady", 5*time.Second, "a second idle window of figure 3, right after the first (the steady state)")
	small := flag.Int("small", 10, "agents of figure 1")
	large := flag.Int("large", 100, "agents of figures 2 to 4")
	flag.Parse()
	var err error
	if bin, err = filepath.Abs(bin); err != nil {
		fail(err)
	}
	if work, err = os.MkdirTemp("", "fabric-deploy-bench-"); err != nil {
		fail(err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		cleanup()
		os.Exit(130)
	}()
	err = run(*small, *large)
	cleanup()
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench/deploy:", err)
	os.Exit(1)
}

func run(small, large int) error {
	fmt.Printf("runs: %d (medians; ratios pair by pair), %d-agent and %d-agent deployments of fabric.scripted, %d cores\n", runs, small, large, runtime.NumCPU())
	if err := unchanged(small); err != nil {
		return fmt.Errorf("figure 1: %w", err)
	}
	return fromEmpty(large)
}

// unchanged is figure 1.
func unchanged(n int) error {
	doc, err := writeDeployment("unchanged", n)
	if err != nil {
		return err
	}
	if _, err := apply(doc, n, "create"); err != nil {
		return err
	}
	defer destroy(doc)
	serve, socket, err := startServe("unchanged-serve")
	if err != nil {
		return err
	}
	defer serve.stop()
	if _, err := startAll(socket, n); err != nil {
		return err
	}
	var a, b []sample
	for i := range warmup + runs {
		sa, err := timed(func() (sample, error) { return apply(doc, n, "noop") })
		if err != nil {
			return err
		}
		sb, err := timed(func() (sample, error) { return checkAll(socket, n) })
		if err != nil {
			return err
		}
		if i >= warmup {
			a, b = append(a, sa), append(b, sb)
		}
	}
	fmt.Printf("\n== 1. unchanged apply of %d agents (budget <= 200 ms) vs fabric-agent-ctl status + %d check --ready\n", n, n)
	report("fabric deploy apply (unchanged)", a, b, fmt.Sprintf("fabric-agent-ctl status + %d check --ready", n))
	return nil
}

// fromEmpty is figures 2 to 4.
func fromEmpty(n int) error {
	doc, err := writeDeployment("empty", n)
	if err != nil {
		return err
	}
	var a, b []sample
	var aIdle, bIdle []idleUse
	var aMem, bMem []memUse
	for range runs {
		var sup int
		sa, err := timed(func() (sample, error) {
			s, err := apply(doc, n, "create")
			sup = s.pid
			return s, err
		})
		if err != nil {
			return err
		}
		use, mem, err := settle(sup, n)
		if err != nil {
			return fmt.Errorf("supervisor: %w", err)
		}
		if err := destroy(doc); err != nil {
			return err
		}
		a, aIdle, aMem = append(a, sa), append(aIdle, use), append(aMem, mem)

		var serve *served
		sb, err := timed(func() (sample, error) {
			var s sample
			var socket string
			var err error
			if serve, socket, err = startServe("empty-serve"); err != nil {
				return s, err
			}
			return startAll(socket, n)
		})
		if err != nil {
			if serve != nil {
				serve.stop()
			}
			return err
		}
		use, mem, err = settle(serve.pid, n)
		serve.stop()
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		b, bIdle, bMem = append(b, sb), append(bIdle, use), append(bMem, mem)
	}
	ctlStarts := fmt.Sprintf("fabric-agent-ctl serve + %d start (%d at once)", n, parallel)
	fmt.Printf("\n== 2. apply of %d agents from empty (budget <= 10 s) vs %s\n", n, ctlStarts)
	report("fabric deploy apply (from empty)", a, b, ctlStarts)
	fmt.Printf("\n== 3. idle CPU over %v with %d idle agents, after the apply (the starts) returned (target 0 ticks)\n", idle, n)
	reportIdle("supervisor (fabric serve)", aIdle)
	reportIdle("fabric-agent-ctl serve", bIdle)
	fmt.Printf("   the next %v (steady state):\n", steady)
	reportIdle("supervisor (fabric serve)", steadyOf(aIdle))
	reportIdle("fabric-agent-ctl serve", steadyOf(bIdle))
	fmt.Printf("\n== 4. RSS with %d idle agents (budget: supervisor <= 30 MiB, plus the hosts)\n", n)
	reportMem("supervisor (fabric serve)", aMem)
	reportMem("fabric-agent-ctl serve", bMem)
	fmt.Printf("   ratio supervisor/serve RSS: median %.2fx\n", medianOf(pairRatio(aMem, bMem, func(m memUse) float64 { return float64(m.ownerKiB) })))
	return nil
}

// sample is one whole-process measurement: wall time and the CPU of the
// processes it waited for; pid is the supervisor an apply reported.
type sample struct {
	wall, cpu time.Duration
	pid       int
}

func timed(f func() (sample, error)) (sample, error) {
	begin := time.Now()
	s, err := f()
	s.wall = time.Since(begin)
	return s, err
}

// command runs one of the binaries to completion in the work directory and
// returns its stdout, adding its user+system time to s.
func command(s *sample, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if cmd.ProcessState != nil {
		s.cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return out.Bytes(), fmt.Errorf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.Bytes(), errb.Bytes())
	}
	return out.Bytes(), nil
}

// writeDeployment writes a document of n inline scripted agents and one
// FabricConfig file per agent (for fabric-agent-ctl start).
func writeDeployment(name string, n int) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version: fabric.deployment/v1alpha1\nmetadata: {name: %s, uid: 6d1f0c2e-8b4a-4c3d-9e5f-%012d}\n", name, n)
	b.WriteString("spec:\n  supervisor: {kind: process}\n  sandboxes:\n    - name: main\n      agents:\n")
	for i := range n {
		agent := fmt.Sprintf("a%d", i+1)
		fmt.Fprintf(&b, "        - name: %s\n          fabric:\n", agent)
		for _, line := range strings.Split(strings.TrimSpace(fmt.Sprintf(agentConfig, agent)), "\n") {
			b.WriteString("            " + line + "\n")
		}
		if err := os.WriteFile(filepath.Join(work, agent+".yaml"), fmt.Appendf(nil, agentConfig, agent), 0o644); err != nil {
			return "", err
		}
	}
	doc := filepath.Join(work, name+".yaml")
	return doc, os.WriteFile(doc, []byte(b.String()), 0o644)
}

// apply runs `fabric deploy apply` and checks it succeeded with n changes,
// each of action want.
func apply(doc string, n int, want string) (sample, error) {
	var s sample
	out, err := command(&s, "fabric", "deploy", "apply", doc)
	if err != nil {
		return s, err
	}
	var r struct {
		Outcome    string
		Changes    []struct{ Resource, Action string }
		Supervisor struct{ Pid int }
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return s, fmt.Errorf("apply: %v\n%s", err, out)
	}
	s.pid = r.Supervisor.Pid
	owners[s.pid] = true
	if r.Outcome != "succeeded" || len(r.Changes) != n {
		return s, fmt.Errorf("apply: outcome %s with %d changes, want succeeded with %d", r.Outcome, len(r.Changes), n)
	}
	for _, c := range r.Changes {
		if c.Action != want {
			return s, fmt.Errorf("apply: %s %s, want %s", c.Resource, c.Action, want)
		}
	}
	return s, nil
}

// destroy runs `fabric deploy destroy` and waits until the supervisor and
// its hosts are gone.
func destroy(doc string) error {
	var s sample
	out, err := command(&s, "fabric", "deploy", "destroy", doc)
	if err != nil {
		return err
	}
	var r struct{ Outcome string }
	if err := json.Unmarshal(out, &r); err != nil || r.Outcome != "destroyed" {
		return fmt.Errorf("destroy: %v %s", err, out)
	}
	for pid := range owners {
		if _, _, _, ok := testproc.Stat(pid); !ok {
			delete(owners, pid)
		} else if left := children(pid); len(left) > 0 {
			return fmt.Errorf("destroy left the supervisor %d with %d hosts", pid, len(left))
		}
	}
	return nil
}

// served is a fabric-agent-ctl serve this program started.
type served struct {
	pid  int
	cmd  *exec.Cmd
	done chan struct{}
}

// startServe starts `fabric-agent-ctl serve` in its own session (as apply
// starts the supervisor) and waits until it answers.
func startServe(name string) (*served, string, error) {
	dir := filepath.Join(work, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", err
	}
	socket := filepath.Join(dir, "agent-ctl.sock")
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, "", err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(bin, "fabric-agent-ctl"), "serve", "--socket", socket)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	s := &served{pid: cmd.Process.Pid, cmd: cmd, done: make(chan struct{})}
	owners[s.pid] = true
	go func() { _ = cmd.Wait(); close(s.done) }()
	c := &agentctl.Client{Socket: socket}
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := c.Do(ctx, &agentctl.Request{Operation: agentctl.OpCheck})
		cancel()
		if err == nil && resp != nil {
			return s, socket, nil
		}
		select {
		case <-s.done:
			return nil, "", fmt.Errorf("fabric-agent-ctl serve exited before serving; see %s", logf.Name())
		case <-time.After(pause):
		}
	}
}

// stop sends SIGTERM and waits until serve and its hosts are gone.
func (s *served) stop() {
	hosts := children(s.pid)
	_ = syscall.Kill(s.pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(s.pid, syscall.SIGKILL)
		<-s.done
	}
	delete(owners, s.pid)
	killAll(hosts)
}

// startAll starts agents a1..an through serve, parallel at a time.
func startAll(socket string, n int) (sample, error) {
	return fanOut(n, parallel, func(s *sample, agent string) error {
		out, err := command(s, "fabric-agent-ctl", "--socket", socket, "start", "--agent", agent, "--config", agent+".yaml")
		if err == nil && !bytes.Contains(out, []byte(`"runtime_id"`)) {
			err = fmt.Errorf("start %s: %s", agent, out)
		}
		return err
	})
}

// checkAll is the hand-driven "is everything as it should be" pass: one
// status (every runtime listed), then a ready check of each agent.
func checkAll(socket string, n int) (sample, error) {
	var s sample
	out, err := command(&s, "fabric-agent-ctl", "--socket", socket, "status")
	if err != nil {
		return s, err
	}
	var st struct{ Runtimes []json.RawMessage }
	if err := json.Unmarshal(out, &st); err != nil || len(st.Runtimes) != n {
		return s, fmt.Errorf("status: %d runtimes, want %d (%v)", len(st.Runtimes), n, err)
	}
	c, err := fanOut(n, 1, func(s *sample, agent string) error {
		out, err := command(s, "fabric-agent-ctl", "--socket", socket, "check", "--agent", agent, "--ready")
		if err == nil && !bytes.Contains(out, []byte(`"outcome": "passed"`)) {
			err = fmt.Errorf("check %s: %s", agent, out)
		}
		return err
	})
	s.cpu += c.cpu
	return s, err
}

// fanOut runs f for agents a1..an, width at a time, summing their CPU.
func fanOut(n, width int, f func(*sample, string) error) (sample, error) {
	type result struct {
		cpu time.Duration
		err error
	}
	results := make(chan result, n)
	sem := make(chan struct{}, width)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			var s sample
			err := f(&s, fmt.Sprintf("a%d", i+1))
			results <- result{s.cpu, err}
		}()
	}
	var total sample
	var errs []error
	for range n {
		r := <-results
		total.cpu += r.cpu
		errs = append(errs, r.err)
	}
	return total, errors.Join(errs...)
}

// idleUse is an owner's CPU over the idle window (and steady, over the
// -steady window right after it).
type idleUse struct {
	ticks    int64
	onCPU    time.Duration
	switches int64
	steady   *idleUse
}

// memUse is an owner's RSS and its hosts' RSS and PSS, in KiB.
type memUse struct {
	ownerKiB, hostsRSS, hostsPSS int64
	hosts                        int
}

// settle measures figures 3 and 4 of an owner running n runtimes.
func settle(pid, n int) (idleUse, memUse, error) {
	hosts := children(pid)
	if len(hosts) != n {
		return idleUse{}, memUse{}, fmt.Errorf("pid %d has %d hosts, want %d", pid, len(hosts), n)
	}
	t0, c0, s0 := cpuOf(pid)
	t1, c1, s1 := cpuOf(pid)
	m := memUse{ownerKiB: testproc.RSSKiB(pid), hostsRSS: testproc.RSSKiB(hosts...), hosts: len(hosts)}
	for _, h := range hosts {
		m.hostsPSS += smapsField(h, "Pss:")
	}
	use := idleUse{ticks: t1 - t0, onCPU: c1 - c0, switches: s1 - s0}
	time.Sleep(steady)
	t2, c2, s2 := cpuOf(pid)
	use.steady = &idleUse{ticks: t2 - t1, onCPU: c2 - c1, switches: s2 - s1}
	return use, m, nil
}

// cpuOf reads utime+stime ticks of pid, and the on-CPU time and context
// switches summed over its threads.
func cpuOf(pid int) (ticks int64, onCPU time.Duration, switches int64) {
	if st, err := procfs.Default.Stat(pid); err == nil {
		ticks = int64(st.UTime + st.STime)
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, t := range tasks {
		if b, err := os.ReadFile(t + "/schedstat"); err == nil {
			if f := strings.Fields(string(b)); len(f) > 0 {
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				onCPU += time.Duration(ns)
			}
		}
		switches += statusValue(t+"/status", "voluntary_ctxt_switches:") + statusValue(t+"/status", "nonvoluntary_ctxt_switches:")
	}
	return ticks, onCPU, switches
}

func statusValue(path, key string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			v, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return v
		}
	}
	return 0
}

func smapsField(pid int, key string) int64 {
	return statusValue(fmt.Sprintf("/proc/%d/smaps_rollup", pid), key)
}

// children lists the live child processes of pid (the hosts of a serve).
func children(pid int) []int {
	var out []int
	for _, p := range testproc.Pids() {
		if ppid, _, _, ok := testproc.Stat(p); ok && ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

func killAll(pids []int) {
	for _, p := range pids {
		if _, _, comm, ok := testproc.Stat(p); ok && strings.HasPrefix(comm, "fabric") {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// cleanup destroys what a failed run left: each supervisor or serve this
// program owned, then their hosts, then the work directory.
func cleanup() {
	for pid := range owners {
		hosts := children(pid)
		killAll([]int{pid})
		killAll(hosts)
	}
	_ = os.RemoveAll(work)
}

func report(nameA string, a, b []sample, nameB string) {
	wall := func(s sample) float64 { return float64(s.wall) }
	cpu := func(s sample) float64 { return float64(s.cpu) }
	fmt.Printf("   %-44s wall median %9s  cpu median %9s\n", nameA, dur(medianBy(a, wall)), dur(medianBy(a, cpu)))
	fmt.Printf("   %-44s wall median %9s  cpu median %9s\n", nameB, dur(medianBy(b, wall)), dur(medianBy(b, cpu)))
	fmt.Printf("   ratio apply/fabric-agent-ctl, pair by pair: wall median %.2fx  cpu median %.2fx\n",
		medianOf(pairRatio(a, b, wall)), medianOf(pairRatio(a, b, cpu)))
}

func reportIdle(name string, u []idleUse) {
	fmt.Printf("   %-28s ticks median %d (%v)  on-CPU median %v  wakeups median %.0f\n", name,
		int64(medianBy(u, func(x idleUse) float64 { return float64(x.ticks) })),
		ticksOf(u), time.Duration(medianBy(u, func(x idleUse) float64 { return float64(x.onCPU) })).Round(time.Microsecond),
		medianBy(u, func(x idleUse) float64 { return float64(x.switches) }))
}

func steadyOf(u []idleUse) []idleUse {
	out := make([]idleUse, len(u))
	for i, x := range u {
		out[i] = *x.steady
	}
	return out
}

func ticksOf(u []idleUse) []int64 {
	out := make([]int64, len(u))
	for i, x := range u {
		out[i] = x.ticks
	}
	return out
}

func reportMem(name string, m []memUse) {
	by := func(f func(memUse) int64) float64 {
		return medianBy(m, func(x memUse) float64 { return float64(f(x)) })
	}
	fmt.Printf("   %-28s own RSS median %6.1f MiB; its %d hosts: RSS %6.1f MiB, PSS %6.1f MiB\n", name,
		by(func(x memUse) int64 { return x.ownerKiB })/1024, m[0].hosts,
		by(func(x memUse) int64 { return x.hostsRSS })/1024, by(func(x memUse) int64 { return x.hostsPSS })/1024)
}

func medianBy[T any](v []T, f func(T) float64) float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = f(x)
	}
	return medianOf(out)
}

func pairRatio[T any](a, b []T, f func(T) float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = f(a[i]) / f(b[i])
	}
	return out
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func dur(ns float64) string {
	return time.Duration(ns).Round(100 * time.Microsecond).String()
}
