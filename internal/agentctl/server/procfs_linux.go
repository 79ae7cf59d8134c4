//go:build linux

package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fabric-runtime/fabric/internal/procfs"
)

// startTicks returns pid's start time, or 0 when it cannot be read.
func startTicks(pid int) uint64 {
	st, err := procfs.Default.Stat(pid)
	if err != nil {
		return 0
	}
	return st.StartTime
}

// bootID identifies this boot of the machine; empty when unknown.
func bootID() string {
	id, _ := procfs.Default.BootID()
	return id
}

// killMember sends SIGKILL to m through a pidfd after checking, with the
// pidfd held, that the pid still names the same process in the same
// group: a pid reused meanwhile is never signalled.
func killMember(m procfs.Stat) error {
	fd, err := unix.PidfdOpen(m.Pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil
		}
		return fmt.Errorf("pidfd_open %d: %w", m.Pid, err)
	}
	defer unix.Close(fd)
	st, err := procfs.Default.Stat(m.Pid)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.StartTime != m.StartTime || st.PGID != m.PGID {
		return nil // another process now
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("kill %d: %w", m.Pid, err)
	}
	return nil
}

// confirmation results.
const (
	confirmedGone      = "gone"
	confirmedPidReused = "pid_reused"
	confirmedRebooted  = "rebooted"
	confirmedKilled    = "killed"
)

// confirmGone checks that the adapter host recorded as (pid, start) and
// its process group are gone. With kill set, live members of the group
// that belong to this user are sent SIGKILL and awaited for up to wait.
// It returns how cleanup was confirmed, or an error saying why not.
func confirmGone(pid int, start uint64, recordedBoot string, kill bool, wait time.Duration) (string, error) {
	if recordedBoot != "" {
		if now := bootID(); now != "" && now != recordedBoot {
			return confirmedRebooted, nil
		}
	}
	if pid <= 1 {
		return "", fmt.Errorf("recorded host pid %d is not a process group serve could own", pid)
	}
	st, err := procfs.Default.Stat(pid)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("cannot read the host process: %w", err)
	case start == 0:
		return "", fmt.Errorf("pid %d is alive and no start time was recorded to tell it from a reused pid", pid)
	case st.StartTime != start:
		// A pid is not reused while a process group of that id has
		// members, so the recorded group is gone too.
		return confirmedPidReused, nil
	}
	members, err := procfs.Default.Group(pid)
	if err != nil {
		return "", fmt.Errorf("cannot list processes: %w", err)
	}
	if len(members) == 0 {
		return confirmedGone, nil
	}
	if !kill {
		return "", fmt.Errorf("%d process(es) of host group %d are alive", len(members), pid)
	}
	uid := uint32(os.Getuid())
	for _, m := range members {
		owner, err := procfs.Default.UID(m.Pid)
		if err != nil {
			continue // gone
		}
		if owner != uid {
			return "", fmt.Errorf("process %d of host group %d belongs to uid %d, not this serve's", m.Pid, pid, owner)
		}
		if err := killMember(m); err != nil {
			return "", err
		}
	}
	deadline := time.Now().Add(wait)
	for {
		members, err = procfs.Default.Group(pid)
		if err != nil {
			return "", fmt.Errorf("cannot list processes: %w", err)
		}
		if len(members) == 0 {
			return confirmedKilled, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%d process(es) of host group %d are still alive after SIGKILL", len(members), pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
