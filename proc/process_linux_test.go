//go:build linux

package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/procfs"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

// Bounds for waiting on real processes. CI is slow: they only catch hangs.
const (
	waitLimit = 30 * time.Second
	stopLimit = 30 * time.Second
)

// start starts spec and registers a cleanup that stops the whole group and
// joins the wait goroutine.
func start(t *testing.T, spec Spec) *Process {
	t.Helper()
	p, err := Start(t.Context(), spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopLimit)
		defer cancel()
		if err := p.Stop(ctx); err != nil {
			t.Errorf("cleanup Stop: %v", err)
		}
		<-p.Done()
	})
	return p
}

func sh(script string) Spec { return Spec{Path: "sh", Args: []string{"-c", script}} }

func waitDone(t *testing.T, p *Process) ExitInfo {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(waitLimit):
		t.Fatalf("pid %d not done after %v", p.Pid(), waitLimit)
	}
	info, ok := p.ExitState()
	if !ok {
		t.Fatal("ExitState not ok after Done")
	}
	return info
}

func groupPids(t *testing.T, p *Process) []int {
	t.Helper()
	pids, err := p.GroupPids()
	if err != nil {
		t.Fatalf("GroupPids: %v", err)
	}
	return pids
}

// pipeStdout returns a Spec stdout writer and a line reader for it. The
// child gets the write end directly; the parent's copy is closed once the
// child has started (call the returned func).
func pipeStdout(t *testing.T) (w *os.File, started func(), lines *bufio.Reader) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return w, func() { w.Close() }, bufio.NewReader(r)
}

func readLine(t *testing.T, lines *bufio.Reader) string {
	t.Helper()
	s, err := lines.ReadString('\n')
	if err != nil {
		t.Fatalf("reading child output: %v (got %q)", err, s)
	}
	return strings.TrimSpace(s)
}

// assertGone checks that none of pids is a live member of pgid.
func assertGone(t *testing.T, pgid int, pids []int) {
	t.Helper()
	for _, pid := range pids {
		st, err := procfs.Default.Stat(pid)
		if err == nil && st.PGID == pgid && st.Live() {
			t.Errorf("pid %d still alive in group %d (state %c)", pid, pgid, st.State)
		}
	}
}

func TestStopEndsWholeGroup(t *testing.T) {
	p := start(t, sh("sleep 30 & sleep 30 & wait"))
	var before []int
	testproc.Eventually(t, waitLimit, "three processes in the group", func() bool {
		before = groupPids(t, p)
		return len(before) == 3
	})
	if before[0] != p.Pid() && !containsInt(before, p.Pid()) {
		t.Errorf("GroupPids %v lacks the leader %d", before, p.Pid())
	}

	if err := p.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, ok := p.ExitState(); !ok {
		t.Error("Stop returned nil before Done was closed")
	}
	if left := groupPids(t, p); len(left) != 0 {
		t.Errorf("GroupPids after Stop = %v, want none", left)
	}
	assertGone(t, p.Pid(), before)
	if err := p.Stop(t.Context()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	const grace = 300 * time.Millisecond
	w, started, lines := pipeStdout(t)
	spec := sh(`trap "" TERM; echo ready; sleep 30`)
	spec.Stdout = w
	spec.Grace = grace
	p := start(t, spec)
	started()
	if got := readLine(t, lines); got != "ready" {
		t.Fatalf("child said %q, want ready", got)
	}

	t0 := time.Now()
	if err := p.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(t0); d < grace {
		t.Errorf("Stop returned after %v, before the %v grace period", d, grace)
	}
	info, _ := p.ExitState()
	if info.Signal != "SIGKILL" || info.Code != -1 {
		t.Errorf("ExitState = %+v, want killed by SIGKILL", info)
	}
	if left := groupPids(t, p); len(left) != 0 {
		t.Errorf("GroupPids after Stop = %v, want none", left)
	}
}

func TestStopCancelledContextKillsAtOnce(t *testing.T) {
	w, started, lines := pipeStdout(t)
	spec := sh(`trap "" TERM; echo ready; sleep 30`)
	spec.Stdout = w
	spec.Grace = time.Hour
	p := start(t, spec)
	started()
	readLine(t, lines)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.Stop(ctx); err != nil {
		t.Fatalf("Stop with a done context: %v (it must still kill and reap)", err)
	}
	if info, _ := p.ExitState(); info.Signal != "SIGKILL" {
		t.Errorf("ExitState = %+v, want SIGKILL", info)
	}
}

func TestDoneAfterNaturalExit(t *testing.T) {
	p := start(t, sh("exit 3"))
	info := waitDone(t, p)
	if info.Code != 3 || info.Signal != "" || info.Err != nil {
		t.Errorf("ExitState = %+v, want code 3", info)
	}
	if got := info.String(); got != "exit status 3" {
		t.Errorf("String() = %q", got)
	}
	if err := p.Stop(t.Context()); err != nil {
		t.Errorf("Stop after exit: %v", err)
	}
}

func TestExitedContextAfterExit(t *testing.T) {
	p := start(t, sh("exit 3"))
	seen := make(chan ExitInfo, 1)
	context.AfterFunc(p.Exited(), func() {
		info, ok := p.ExitState()
		if !ok {
			t.Error("Exited was cancelled before Done was closed")
		}
		seen <- info
	})
	select {
	case info := <-seen:
		if info.Code != 3 {
			t.Errorf("ExitState in the watch = %+v, want code 3", info)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Exited was not cancelled after the child exited")
	}
	if err := p.Stop(t.Context()); err != nil {
		t.Errorf("Stop after exit: %v", err)
	}
}

func TestOutputCopiedBeforeDone(t *testing.T) {
	var out, errOut bytes.Buffer
	spec := sh(`read line; echo "got $line"; echo oops >&2`)
	spec.Stdin = strings.NewReader("hello\n")
	spec.Stdout, spec.Stderr = &out, &errOut
	p := start(t, spec)
	if info := waitDone(t, p); info.Code != 0 || info.Err != nil {
		t.Errorf("ExitState = %+v", info)
	}
	if out.String() != "got hello\n" || errOut.String() != "oops\n" {
		t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
	}
}

func TestSignalAfterExit(t *testing.T) {
	p := start(t, sh("exit 0"))
	waitDone(t, p)
	if err := p.Signal(syscall.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Signal after exit = %v, want os.ErrProcessDone", err)
	}
	// Nothing is left in the group; Kill says so (or, if the pid was reused
	// meanwhile, refuses).
	if err := p.Kill(); !errors.Is(err, os.ErrProcessDone) && !errors.Is(err, ErrPidReused) {
		t.Errorf("Kill after exit = %v, want os.ErrProcessDone", err)
	}
}

func TestSignalReachesGroup(t *testing.T) {
	p := start(t, sh("sleep 30 & sleep 30; wait"))
	var before []int
	testproc.Eventually(t, waitLimit, "three processes in the group", func() bool {
		before = groupPids(t, p)
		return len(before) == 3
	})
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("Signal(SIGTERM): %v", err)
	}
	if info := waitDone(t, p); info.Signal != "SIGTERM" {
		t.Errorf("ExitState = %+v, want ended by SIGTERM", info)
	}
	testproc.Eventually(t, waitLimit, "the group to empty", func() bool { return len(groupPids(t, p)) == 0 })
	assertGone(t, p.Pid(), before)
}

func TestKill(t *testing.T) {
	p := start(t, sh("sleep 30"))
	if err := p.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if info := waitDone(t, p); info.Signal != "SIGKILL" {
		t.Errorf("ExitState = %+v, want SIGKILL", info)
	}
}

func TestConcurrentStop(t *testing.T) {
	p := start(t, sh("sleep 30 & sleep 30 & wait"))
	testproc.Eventually(t, waitLimit, "three processes in the group", func() bool { return len(groupPids(t, p)) == 3 })
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = p.Stop(t.Context()) })
	}
	wg.Go(func() { _ = p.Kill() })
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Stop %d: %v", i, err)
		}
	}
	if left := groupPids(t, p); len(left) != 0 {
		t.Errorf("GroupPids after Stop = %v", left)
	}
}

func TestStopWaitingCallerHonoursContext(t *testing.T) {
	w, started, lines := pipeStdout(t)
	spec := sh(`trap "" TERM; echo ready; sleep 30`)
	spec.Stdout = w
	spec.Grace = 500 * time.Millisecond
	p := start(t, spec)
	started()
	readLine(t, lines)

	first := make(chan error, 1)
	go func() { first <- p.Stop(context.Background()) }()
	testproc.Eventually(t, waitLimit, "the first Stop to take the lock", func() bool { return len(p.stopSem) == 1 })
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := p.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting Stop = %v, want its context's error", err)
	}
	select {
	case err := <-first:
		if err != nil {
			t.Errorf("first Stop: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("first Stop did not return")
	}
}

func TestStopReachesOrphansAfterLeaderExit(t *testing.T) {
	// The leader exits at once; its background child stays in the group and
	// holds the stdout pipe, so Done waits WaitDelay and reports it.
	var out bytes.Buffer
	spec := sh(`sleep 30 & echo $!`)
	spec.Stdout = &out
	spec.WaitDelay = 200 * time.Millisecond
	p := start(t, spec)
	info := waitDone(t, p)
	if info.Code != 0 || !errors.Is(info.Err, exec.ErrWaitDelay) {
		t.Errorf("ExitState = %+v, want code 0 and exec.ErrWaitDelay", info)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("orphan pid %q: %v", out.String(), err)
	}
	if got := groupPids(t, p); len(got) != 1 || got[0] != orphan {
		t.Fatalf("GroupPids = %v, want [%d]", got, orphan)
	}
	if err := p.Signal(syscall.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Signal after leader exit = %v, want os.ErrProcessDone", err)
	}
	if err := p.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if got := groupPids(t, p); len(got) != 0 {
		t.Errorf("GroupPids after Stop = %v", got)
	}
	assertGone(t, p.Pid(), []int{orphan})
}

func TestStartErrors(t *testing.T) {
	if _, err := Start(t.Context(), Spec{Path: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("Start of a missing program succeeded")
	}
	if _, err := Start(t.Context(), Spec{}); err == nil {
		t.Error("Start with an empty Path succeeded")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Start(ctx, sh("exit 0")); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a done context = %v, want context.Canceled", err)
	}
}

func TestStartRecordsStartTime(t *testing.T) {
	p := start(t, sh("sleep 30"))
	st, err := procfs.Default.Stat(p.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if st.StartTime != p.startTime || st.PGID != p.Pid() {
		t.Errorf("stat %+v; recorded start time %d, want pgrp %d", st, p.startTime, p.Pid())
	}
}

// The child must survive the exit of the OS thread of the goroutine that
// called Start: Pdeathsig is bound to the forking thread.
func TestChildSurvivesCallerThreadExit(t *testing.T) {
	got := make(chan *Process, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
		p, err := Start(context.Background(), sh("sleep 30"))
		if err != nil {
			t.Error(err)
		}
		got <- p
	}()
	p := <-got
	if p == nil {
		t.FailNow()
	}
	t.Cleanup(func() { _ = p.Stop(context.Background()) })
	select {
	case <-p.Done():
		t.Fatalf("child ended when the caller's thread exited: %v", p.exit)
	case <-time.After(300 * time.Millisecond):
	}
}

// startSupervisorHelper starts this test binary in a helper role of
// runHelper that supervises a child (see TestMain) and returns it, the
// function that tells it to exit and its stdout lines.
func startSupervisorHelper(t *testing.T, role string, args ...string) (sup *Process, release func(), lines *bufio.Reader) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w, started, lines := pipeStdout(t)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdinW.Close() })
	sup = start(t, Spec{
		Path:   exe,
		Args:   append([]string{"-test.run=^$"}, args...),
		Env:    append(os.Environ(), helperEnv+"="+role),
		Stdin:  stdinR,
		Stdout: w,
		Stderr: os.Stderr,
	})
	started()
	stdinR.Close()
	return sup, func() { stdinW.Close() }, lines
}

// A supervisor that dies without stopping its child takes the child with it.
func TestPdeathsigKillsChildOfDeadSupervisor(t *testing.T) {
	sup, release, lines := startSupervisorHelper(t, "supervisor")
	child, err := strconv.Atoi(readLine(t, lines))
	if err != nil {
		t.Fatal(err)
	}
	st, err := procfs.Default.Stat(child)
	if err != nil {
		t.Fatalf("grandchild %d: %v", child, err)
	}
	release() // the supervisor exits without stopping its child
	waitDone(t, sup)
	testproc.Eventually(t, waitLimit, fmt.Sprintf("pid %d to die with its supervisor", child), func() bool {
		now, err := procfs.Default.Stat(child)
		return err != nil || !now.Live() || now.StartTime != st.StartTime
	})
}

func TestOwnsListener(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w, started, lines := pipeStdout(t)
	p := start(t, Spec{
		Path:   exe,
		Args:   []string{"-test.run=^$"},
		Env:    append(os.Environ(), helperEnv+"=listen"),
		Stdout: w,
		Stderr: os.Stderr,
	})
	started()
	port, err := strconv.ParseUint(readLine(t, lines), 10, 16)
	if err != nil {
		t.Fatal(err)
	}

	if ok, err := p.OwnsListener(uint16(port)); err != nil || !ok {
		t.Errorf("OwnsListener(child's port %d) = %v, %v; want true", port, ok, err)
	}
	if ok, err := PortInUse("", uint16(port)); err != nil || !ok {
		t.Errorf("PortInUse(%d) = %v, %v; want true", port, ok, err)
	}

	own, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	ownPort := uint16(own.Addr().(*net.TCPAddr).Port)
	if ok, err := p.OwnsListener(ownPort); err != nil || ok {
		t.Errorf("OwnsListener(test process's port %d) = %v, %v; want false", ownPort, ok, err)
	}
	ls, err := ListeningTCP("")
	if err != nil {
		t.Fatal(err)
	}
	var inode uint64
	for _, l := range ls {
		if l.Addr.Port() == ownPort {
			inode = l.Inode
		}
	}
	if owners, err := SocketOwners("", inode, []int{os.Getpid(), p.Pid()}); err != nil || len(owners) != 1 || owners[0] != os.Getpid() {
		t.Errorf("SocketOwners(own listener) = %v, %v; want [%d]", owners, err, os.Getpid())
	}

	if err := p.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ok, err := p.OwnsListener(uint16(port)); err != nil || ok {
		t.Errorf("OwnsListener after Stop = %v, %v; want false", ok, err)
	}
}

// After the leader is reaped its pid may be reused; a process holding it
// under another start time must never be signalled. The tree is fake, so no
// real signal is sent: every path below refuses before kill(2).
func TestPidReuseGuard(t *testing.T) {
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	const pid = 4242
	root := t.TempDir()
	writeStat := func(pid, pgrp int, start uint64) {
		dir := filepath.Join(root, strconv.Itoa(pid))
		must(t, os.MkdirAll(dir, 0o755))
		stat := fmt.Sprintf("%d (other) S 1 %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, pgrp, pgrp, start)
		must(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644))
	}
	writeStat(pid, pid, 200)  // pid reused, and a new group 4242 formed
	writeStat(4300, pid, 201) // a member of that foreign group
	done := make(chan struct{})
	close(done)
	p := &Process{pid: pid, startTime: 100, grace: time.Millisecond, root: procfs.FS(root), done: done, stopSem: make(chan struct{}, 1), exited: true}

	if err := p.Kill(); !errors.Is(err, ErrPidReused) {
		t.Errorf("Kill = %v, want ErrPidReused", err)
	}
	if err := p.Signal(syscall.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Signal = %v, want os.ErrProcessDone", err)
	}
	if pids := groupPids(t, p); len(pids) != 0 {
		t.Errorf("GroupPids = %v, want none: the group is not ours", pids)
	}
	if err := p.Stop(t.Context()); err != nil {
		t.Errorf("Stop = %v, want nil: nothing of ours is left", err)
	}

	// With no process holding the pid, what is left in the group is ours.
	root2 := t.TempDir()
	p.root = procfs.FS(root2)
	root = root2
	writeStat(4300, pid, 201)
	if pids := groupPids(t, p); len(pids) != 1 || pids[0] != 4300 {
		t.Errorf("GroupPids = %v, want [4300]", pids)
	}
}

// threads returns the number of OS threads of the test process.
func threads(t *testing.T) int {
	t.Helper()
	n := statusThreads(t)
	if n <= 0 {
		t.Fatal("no Threads: line in /proc/self/status")
	}
	return n
}

func statusThreads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("Threads: %q: %v", v, err)
			}
			return n
		}
	}
	return 0
}

// Idle children cost no OS thread each: they are forked from the one
// spawner thread and waited for in the netpoller.
func TestIdleChildrenHoldNoThreads(t *testing.T) {
	const n = 200
	before := threads(t)
	ps := make([]*Process, 0, n)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopLimit)
		defer cancel()
		var wg sync.WaitGroup
		for _, p := range ps {
			wg.Go(func() {
				if err := p.Stop(ctx); err != nil {
					t.Errorf("Stop pid %d: %v", p.Pid(), err)
				}
				<-p.Done()
			})
		}
		wg.Wait()
	})
	for range n {
		p, err := Start(t.Context(), Spec{Path: "sleep", Args: []string{"30"}})
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		ps = append(ps, p)
	}
	time.Sleep(100 * time.Millisecond) // let the wait goroutines park
	after := threads(t)
	t.Logf("threads: %d before, %d with %d children", before, after, n)
	if after-before > 20 {
		t.Errorf("threads grew from %d to %d with %d idle children, want at most 20 more", before, after, n)
	}
	for _, p := range ps {
		if _, done := p.ExitState(); done {
			t.Fatalf("pid %d ended early", p.Pid())
		}
	}
}

// The spawner runs only while it has children to keep alive, so a program
// that supervises nothing has no background goroutine (and goleak is happy).
func TestSpawnerEndsWhenUnused(t *testing.T) {
	running := func() (bool, int) {
		forker.mu.Lock()
		defer forker.mu.Unlock()
		return forker.reqs != nil, forker.refs
	}
	if on, refs := running(); on || refs != 0 {
		t.Fatalf("before Start: spawner running %v, refs %d; want idle", on, refs)
	}
	a := start(t, sh("sleep 30"))
	b := start(t, sh("exit 0"))
	waitDone(t, b)
	if on, refs := running(); !on || refs != 1 {
		t.Errorf("one child left: spawner running %v, refs %d; want running, 1", on, refs)
	}
	if err := a.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if on, refs := running(); on || refs != 0 {
		t.Errorf("after Stop: spawner running %v, refs %d; want idle", on, refs)
	}
	if _, err := Start(t.Context(), Spec{Path: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Fatal("Start of a missing program succeeded")
	}
	if on, refs := running(); on || refs != 0 {
		t.Errorf("after a failed Start: spawner running %v, refs %d; want idle", on, refs)
	}
}

// Threads that locked goroutines leave behind are ended by the runtime. That
// must not take a child with it (through Pdeathsig): children are forked only
// from the spawner's thread, which stays locked while they live, also across
// the spawner being ended and restarted.
func TestChildrenSurviveThreadChurn(t *testing.T) {
	churn := func() {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 25 {
					done := make(chan struct{})
					go func() {
						runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
						close(done)
					}()
					<-done
				}
			})
		}
		wg.Wait()
	}
	first := start(t, sh("exit 0"))
	waitDone(t, first) // the spawner may end here
	var ps []*Process
	for range 8 {
		ps = append(ps, start(t, sh("sleep 30")))
		churn()
	}
	time.Sleep(100 * time.Millisecond) // Pdeathsig is asynchronous
	for _, p := range ps {
		if info, done := p.ExitState(); done {
			t.Errorf("pid %d ended while threads were churned: %v", p.Pid(), info)
		}
	}
}
