//go:build linux

package proc

import (
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fabric-runtime/fabric/internal/procfs"
)

// The variables by which SubreaperCommand tells the re-executed program to
// run as a subreaper. Neither reaches the wrapped command.
const (
	// envSubreaper set to "1" makes RunSubreaper run this process as a
	// subreaper of the command named by its arguments.
	envSubreaper = "FABRIC_SUBREAPER"
	// envSubreaperMarker carries SubreaperCommand's marker.
	envSubreaperMarker = "FABRIC_SUBREAPER_MARKER"
)

// SubreaperCommand wraps bin and args in a subreaper: this program
// re-executed with FABRIC_SUBREAPER=1, which must call RunSubreaper first
// thing in main. The subreaper is a small process between the caller and
// the command that is told when the caller dies (PR_SET_PDEATHSIG) and is
// the subreaper (PR_SET_CHILD_SUBREAPER) of everything the command starts,
// so that a killed caller leaves no command, worker or grandchild behind:
// Pdeathsig alone covers only a direct child, and launchers (Node wrappers,
// relaunched workers, native binaries behind a script) put the real process
// further down. Start the returned command with Start, in its own process
// group: when the command exits or the subreaper is told to stop, it kills
// its group and everything reparented to it.
//
// marker, when set, is a whole "NAME=value" entry of the command's
// environment unique to its tree (as Spec.EnvMarker): the subreaper also
// kills the processes carrying it that escaped both the group and the
// reparenting. It returns the path, arguments and extra environment
// entries to start; when this program's path cannot be found it returns
// bin and args unwrapped and no entries.
func SubreaperCommand(bin string, args []string, marker string) (path string, argv, env []string) {
	self, err := os.Executable()
	if err != nil {
		return bin, args, nil
	}
	env = []string{envSubreaper + "=1"}
	if marker != "" {
		env = append(env, envSubreaperMarker+"="+marker)
	}
	return self, append([]string{bin}, args...), env
}

// RunSubreaper runs this process as the subreaper SubreaperCommand
// re-executed it for, if it is one, and reports whether it did and the
// exit code to exit with (the command's, or 143 when told to stop).
// Programs that start commands through SubreaperCommand call it first thing
// in main; bundled.ServeHost does.
func RunSubreaper() (ran bool, exitCode int) {
	if os.Getenv(envSubreaper) != "1" || len(os.Args) < 2 {
		return false, 0
	}
	return true, subreap(os.Args[1], os.Args[2:], os.Getenv(envSubreaperMarker))
}

func subreap(bin string, args []string, marker string) int {
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGTERM), 0, 0, 0)
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	parent := os.Getppid()
	if parent == 1 { // the caller died before the signal was armed
		return 1
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envSubreaper+"=") && !strings.HasPrefix(kv, envSubreaperMarker+"=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = os.Stdin, os.Stdout, os.Stderr, env
	if err := cmd.Start(); err != nil {
		os.Stderr.WriteString("fabric subreaper: " + err.Error() + "\n")
		return 127
	}
	done := make(chan int, 1)
	go func() {
		_ = cmd.Wait()
		done <- cmd.ProcessState.ExitCode()
	}()
	code := 0
	select {
	case code = <-done:
	case <-sigs:
		code = 143
		if os.Getppid() == parent { // a stop: give the command a moment
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	killDescendants()
	// Whatever carries the marker and escaped the group and the subreaper
	// (setsid, a double fork before the reparenting).
	if marker != "" {
		KillByEnv(marker, 500*time.Millisecond)
	}
	return code
}

// killDescendants SIGKILLs every process in this process group and every
// child reparented to this subreaper, and reaps those children, until none
// is left (bounded).
func killDescendants() {
	self := os.Getpid()
	pgid := syscall.Getpgrp()
	for range 50 {
		all, err := procfs.Default.Stats()
		found := err != nil // could not list: look again
		for _, st := range all {
			if st.Pid == self || (st.PGID != pgid && st.PPID != self) {
				continue
			}
			if st.State == 'Z' {
				if st.PPID == self {
					var ws syscall.WaitStatus
					_, _ = syscall.Wait4(st.Pid, &ws, syscall.WNOHANG, nil)
				}
				continue
			}
			found = true
			_ = syscall.Kill(st.Pid, syscall.SIGKILL)
		}
		if !found {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
