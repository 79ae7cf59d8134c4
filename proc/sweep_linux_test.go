//go:build linux

package proc

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillByEnv: a process that left our process group (its own session)
// but carries the marker in its environment is found and killed; one
// without it is left alone.
func TestKillByEnv(t *testing.T) {
	marker := "FABRIC_SWEEP_TEST=" + strconv.FormatInt(time.Now().UnixNano(), 36)
	start := func(env ...string) (*exec.Cmd, <-chan struct{}) {
		cmd := exec.Command("sleep", "60")
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-done })
		return cmd, done
	}
	marked, exited := start(marker)
	other, _ := start("FABRIC_SWEEP_TEST=other")
	// Until exec, /proc shows the parent's environment.
	for _, pid := range []int{marked.Process.Pid, other.Process.Pid} {
		for deadline := time.Now().Add(5 * time.Second); ; {
			if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); string(comm) == "sleep\n" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("process %d did not exec sleep", pid)
			}
			time.Sleep(time.Millisecond)
		}
	}
	pids := KillByEnv(marker, 5*time.Second)
	if len(pids) != 1 || pids[0] != marked.Process.Pid {
		t.Fatalf("killed %v, want [%d]", pids, marked.Process.Pid)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the marked process is still running")
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the unmarked process was touched: %v", err)
	}
}

// TestStopKillsMarkedEscapees: a child that spawns a detached grandchild
// (its own session, so outside the group) and is then killed leaves an
// orphan; Stop with an EnvMarker finds it by the marker and kills it.
func TestStopKillsMarkedEscapees(t *testing.T) {
	marker := "FABRIC_STOP_SWEEP_TEST=" + strconv.FormatInt(time.Now().UnixNano(), 36)
	pidFile := t.TempDir() + "/escapee.pid"
	p, err := Start(t.Context(), Spec{
		Path: "sh", Args: []string{"-c", "setsid sleep 60 & echo $! >" + pidFile + "; exec sleep 60"},
		Env:       append(os.Environ(), marker),
		EnvMarker: marker,
		Grace:     -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	var escapee int
	for deadline := time.Now().Add(5 * time.Second); escapee == 0; time.Sleep(5 * time.Millisecond) {
		data, _ := os.ReadFile(pidFile)
		escapee, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		if time.Now().After(deadline) {
			t.Fatal("the child did not report its detached grandchild")
		}
	}
	t.Cleanup(func() { _ = syscall.Kill(escapee, syscall.SIGKILL) })
	if err := p.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The escapee was reparented away from us; once killed it is reaped
	// by its new parent, so wait for /proc to lose it (or show a zombie).
	for deadline := time.Now().Add(5 * time.Second); !zombieOrGone(escapee); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the detached grandchild %d outlived Stop", escapee)
		}
	}
}
