package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fabric-runtime/fabric/internal/procfs"
)

// subreaped starts script under a subreaper (this test binary re-executed,
// see TestMain) and returns the process and its stdout lines.
func subreaped(t *testing.T, script, marker string) (*Process, func() string) {
	t.Helper()
	path, argv, env := SubreaperCommand("sh", []string{"-c", script}, marker)
	if exe, _ := os.Executable(); path != exe || argv[0] != "sh" {
		t.Fatalf("SubreaperCommand = %q %q, want this binary wrapping sh", path, argv)
	}
	w, started, lines := pipeStdout(t)
	p := start(t, Spec{Path: path, Args: argv, Env: append(os.Environ(), env...), Stdout: w, Stderr: os.Stderr})
	started()
	return p, func() string { return readLine(t, lines) }
}

// goneOrZombie reports whether pid has exited (and the subreaper or init reaped it,
// or it waits as a zombie).
func goneOrZombie(pid int) bool {
	st, err := procfs.Default.Stat(pid)
	return err != nil || !st.Live()
}

func TestSubreaperPassesExitCodeAndHidesItsVariables(t *testing.T) {
	p, line := subreaped(t, `echo "[$FABRIC_SUBREAPER$FABRIC_SUBREAPER_MARKER]"; exit 3`, "MARK=x")
	if got := line(); got != "[]" {
		t.Errorf("the command saw %q, want no subreaper variables", got)
	}
	if info := waitDone(t, p); info.Code != 3 {
		t.Errorf("exit %+v, want code 3", info)
	}
}

// A command that exits leaves orphans behind: they were reparented to the
// subreaper, which kills them before it exits.
func TestSubreaperKillsOrphans(t *testing.T) {
	p, line := subreaped(t, `sleep 60 & echo $!; setsid sleep 60 & echo $!`, "")
	orphans := []string{line(), line()}
	waitDone(t, p)
	for _, s := range orphans {
		pid, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, fmt.Sprintf("orphan %d to be killed", pid), func() bool { return goneOrZombie(pid) })
	}
}

// SIGTERM to the subreaper (a stop) reaches the command, and what ignores it
// is killed after a moment; the exit code says it was terminated.
func TestSubreaperStop(t *testing.T) {
	p, line := subreaped(t, `trap "" TERM; sleep 60 & echo $!; wait`, "")
	child, err := strconv.Atoi(line())
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(p.Pid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if info := waitDone(t, p); info.Code != 143 {
		t.Errorf("exit %+v, want code 143", info)
	}
	eventually(t, fmt.Sprintf("pid %d to be killed", child), func() bool { return goneOrZombie(child) })
}

// When the caller dies without stopping it, the subreaper is told
// (Pdeathsig) and takes down the command and everything it started.
func TestSubreaperOutlivesNoCaller(t *testing.T) {
	host, release, lines := startSupervisorHelper(t, "subreaper-host", "sh -c 'sleep 60 & echo $!; wait' & echo $!; wait")
	var pids []int
	for range 3 { // the subreaper, the command's child shell and its sleep, in any order
		pid, err := strconv.Atoi(strings.TrimSpace(readLine(t, lines)))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	release() // the host exits without stopping the subreaper
	waitDone(t, host)
	for _, pid := range pids {
		eventually(t, fmt.Sprintf("pid %d to die with the host", pid), func() bool { return goneOrZombie(pid) })
	}
}
