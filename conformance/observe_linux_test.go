package conformance

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// A harness child lives in its own process group and dies of its
// parent-death signal only after the host's group is gone: the observer of
// a stopped runtime must give such a process the same grace as the group
// before it reports it, and still report one that stays.
func TestObserveStoppedWaitsForDyingProcesses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string // what the process mentioning the state directory does
		agrees bool
	}{
		// Alive at the first scan, gone well inside the grace period:
		// like a harness killed by its parent-death signal on a busy
		// machine.
		{"exits after the group", "exec sleep 0.5", true},
		{"stays", "exec sleep 30", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stateDir := t.TempDir()
			cmd := exec.Command("sh", "-c", tc.script)
			cmd.Env = append(os.Environ(), "FABRIC_TEST_HOME="+stateDir+"/home")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			waitMentioned(t, stateDir, cmd.Process.Pid)
			// The host's group (here a group with no member left) is gone
			// at once. An exited child stays a zombie until Cleanup reaps
			// it, which the observer does not count.
			it := &itemT{}
			err := it.observeStopped(context.Background(), 1<<22, stateDir, "")
			if tc.agrees != (err == nil) || it.observed == nil || it.observed.Agrees != tc.agrees {
				t.Fatalf("observeStopped = %v, observation %+v; want agrees %v", err, it.observed, tc.agrees)
			}
			if !tc.agrees && !strings.Contains(err.Error(), "of the runtime are still running") {
				t.Fatalf("the violation does not name the process: %v", err)
			}
		})
	}
}

// waitMentioned waits until pid's environment, naming dir, is readable.
func waitMentioned(t *testing.T, dir string, pid int) {
	t.Helper()
	for range 2000 {
		for _, p := range processesMentioning(dir) {
			if p == pid {
				return
			}
		}
		runtime.Gosched()
	}
	t.Fatalf("process %d never showed in the process table", pid)
}
