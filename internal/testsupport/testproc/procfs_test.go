package testproc

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
)

func TestProcfs(t *testing.T) {
	marker := "FABRIC_TESTPROC_MARK=" + t.Name()
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	ppid, pgrp, _, ok := Stat(pid)
	if !ok || ppid != os.Getpid() || pgrp != pid {
		t.Fatalf("Stat(%d) = %d, %d, %v; want parent %d, group %d", pid, ppid, pgrp, ok, os.Getpid(), pid)
	}
	if !slices.Contains(Pids(), pid) || !slices.Equal(Group(pid), []int{pid}) {
		t.Errorf("Pids or Group(%d) = %v misses the child", pid, Group(pid))
	}
	// The environment shows the marker once the child has exec'd.
	for range 1000 {
		if slices.Contains(Mentioning(marker), pid) {
			break
		}
		syscall.Nanosleep(&syscall.Timespec{Nsec: 1e6}, nil)
	}
	if got := Mentioning(marker); !slices.Equal(got, []int{pid}) {
		t.Errorf("Mentioning = %v, want [%d] (never this process)", got, pid)
	}
	if RSSKiB(pid) <= 0 {
		t.Errorf("RSSKiB(%d) = %d", pid, RSSKiB(pid))
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, _, _, ok := Stat(pid); ok {
		t.Errorf("Stat of a reaped child is ok")
	}
	if len(Mentioning(marker)) != 0 || RSSKiB(pid) != 0 {
		t.Errorf("a reaped child is still found")
	}
}
