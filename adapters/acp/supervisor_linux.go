//go:build linux

package acp

import (
	"bytes"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fabric-runtime/fabric/adapterkit/proc"
)

// envSupervisor makes a re-executed host binary the agent's supervisor: a
// small process between the host and the agent that is told when the host
// dies (PR_SET_PDEATHSIG) and is the subreaper of everything the agent
// starts, so that a killed host leaves no agent, worker or grandchild
// behind (Node launchers such as codex-acp's, Qwen Code's relaunched worker
// and Claude's native binary are not the host's direct child, which
// Pdeathsig alone would cover).
const envSupervisor = "FABRIC_ACP_SUPERVISOR"

// Supervise runs this process as an agent's supervisor when the adapter
// re-executed the host binary for that (FABRIC_ACP_SUPERVISOR=1), and
// reports whether it did and the exit code. Programs that host bundled
// adapters call it first thing (fabric.ServeBuiltinHost does).
func Supervise() (served bool, exitCode int) {
	if os.Getenv(envSupervisor) != "1" || len(os.Args) < 2 {
		return false, 0
	}
	return true, supervise(os.Args[1], os.Args[2:])
}

// supervisorCommand wraps bin and args in the supervisor, when the host
// binary can be found.
func supervisorCommand(bin string, args []string) (string, []string, []string) {
	self, err := os.Executable()
	if err != nil {
		return bin, args, nil
	}
	return self, append([]string{bin}, args...), []string{envSupervisor + "=1"}
}

func supervise(bin string, args []string) int {
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGTERM), 0, 0, 0)
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	parent := os.Getppid()
	if parent == 1 { // the host died before the signal was armed
		return 1
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !bytes.HasPrefix([]byte(kv), []byte(envSupervisor+"=")) {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = os.Stdin, os.Stdout, os.Stderr, env
	if err := cmd.Start(); err != nil {
		os.Stderr.WriteString("fabric acp supervisor: " + err.Error() + "\n")
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
		if os.Getppid() == parent { // a stop: give the agent a moment
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	killDescendants()
	// Whatever carries this runtime's marker and escaped the group and the
	// subreaper (setsid, a double fork before the reparenting).
	if m := os.Getenv("FABRIC_ACP_RUNTIME_HOME"); m != "" {
		proc.KillByEnv("FABRIC_ACP_RUNTIME_HOME="+m, 500*time.Millisecond)
	}
	return code
}

// killDescendants SIGKILLs every process in this process group and every
// child reparented to this subreaper, until none is left (bounded).
func killDescendants() {
	self := os.Getpid()
	pgid := syscall.Getpgrp()
	for range 50 {
		found := false
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
			if err != nil {
				continue
			}
			i := bytes.LastIndexByte(st, ')')
			if i < 0 || i+2 >= len(st) {
				continue
			}
			f := bytes.Fields(st[i+2:])
			if len(f) < 3 {
				continue
			}
			ppid, _ := strconv.Atoi(string(f[1]))
			pg, _ := strconv.Atoi(string(f[2]))
			if pg != pgid && ppid != self {
				continue
			}
			if f[0][0] == 'Z' {
				if ppid == self {
					var ws syscall.WaitStatus
					_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
				}
				continue
			}
			found = true
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if !found {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
