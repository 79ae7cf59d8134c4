package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/procfs"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

// subreaper starts this test binary as the "subreaper" helper (see
// runHelper): RunAsSubreaper around serveScript in mode, running script.
// It returns the process, a reader of its stdout lines (the first is the
// helper's pid) and a function that closes the script's stdin.
func subreaper(t *testing.T, mode, script string) (*Process, func() int, func()) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w, started, lines := pipeStdout(t)
	in, release, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { release.Close() })
	p := start(t, Spec{Path: exe, Args: []string{"-test.run=^$", script},
		Env:   append(os.Environ(), helperEnv+"=subreaper", serveModeEnv+"="+mode),
		Stdin: in, Stdout: w, Stderr: os.Stderr})
	started()
	in.Close()
	return p, func() int { return atoi(t, readLine(t, lines)) }, func() { release.Close() }
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// goneOrZombie reports whether pid has exited (and the subreaper or init reaped it,
// or it waits as a zombie).
func goneOrZombie(pid int) bool {
	st, err := procfs.Default.Stat(pid)
	return err != nil || !st.Live()
}

func ppid(pid int) int {
	st, err := procfs.Default.Stat(pid)
	if err != nil {
		return 0
	}
	return st.PPID
}

func TestSubreaperPassesExitCode(t *testing.T) {
	p, _, _ := subreaper(t, "wait", "exit 3")
	if info := waitDone(t, p); info.Code != 3 {
		t.Errorf("exit %+v, want code 3", info)
	}
}

// A double-forked process, and one that also left the session, are
// reparented to the subreaper while it serves (not to init), and killed
// when serve returns.
func TestSubreaperKillsOrphans(t *testing.T) {
	p, line, release := subreaper(t, "wait", `(sleep 60 & echo $!) ; (setsid sleep 60 & echo $!); read x`)
	self := line()
	orphans := []int{line(), line()}
	for _, pid := range orphans {
		testproc.Eventually(t, waitLimit, fmt.Sprintf("orphan %d to be adopted by the subreaper %d", pid, self), func() bool { return ppid(pid) == self })
	}
	release() // the script's read returns, the script exits, serve returns
	waitDone(t, p)
	for _, pid := range orphans {
		testproc.Eventually(t, waitLimit, fmt.Sprintf("orphan %d to be killed", pid), func() bool { return goneOrZombie(pid) })
	}
}

// A stop (SIGTERM from the caller, which is alive) is serve's to handle;
// what serve leaves running when it returns, including what ignores
// SIGTERM and what left the session, is killed.
func TestSubreaperStop(t *testing.T) {
	p, line, _ := subreaper(t, "term", `trap "" TERM; setsid sleep 60 & echo $!; wait`)
	line() // the helper's pid
	child := line()
	if err := syscall.Kill(p.Pid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if info := waitDone(t, p); info.Code != 143 {
		t.Errorf("exit %+v, want code 143", info)
	}
	testproc.Eventually(t, waitLimit, fmt.Sprintf("pid %d to be killed", child), func() bool { return goneOrZombie(child) })
}

// When the caller dies without stopping it and serve does not return,
// the subreaper is told (Pdeathsig SIGTERM) and, OrphanGrace later, takes
// down everything it started and exits.
func TestSubreaperOutlivesNoCaller(t *testing.T) {
	caller, release, lines := startSupervisorHelper(t, "subreaper-caller", "sh -c 'setsid sleep 60 & echo $!; wait' & echo $!; wait")
	var pids []int
	for range 4 { // the subreaper (twice: as the caller's child and as itself), the shells' children
		pids = append(pids, atoi(t, readLine(t, lines)))
	}
	release() // the caller exits without stopping the subreaper
	waitDone(t, caller)
	deadline := time.Now().Add(OrphanGrace + waitLimit)
	for _, pid := range pids {
		for !goneOrZombie(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("pid %d outlived its caller", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
