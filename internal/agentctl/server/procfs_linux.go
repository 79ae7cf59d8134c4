//go:build linux

package server

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// procRoot is where procfs is mounted.
const procRoot = "/proc"

// procStat is what serve needs of /proc/PID/stat.
type procStat struct {
	pid        int
	state      byte
	pgrp       int
	startTicks uint64 // field 22: start time in clock ticks after boot
}

// live reports whether the process is running (not a zombie or dead).
func (s procStat) live() bool { return s.state != 'Z' && s.state != 'X' && s.state != 'x' }

// readStat reads /proc/PID/stat. The command name (field 2) may hold any
// byte, so fields are counted from its closing parenthesis.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", procRoot, pid))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(pid, b)
}

func parseStat(pid int, b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	// After ")": state(3) ppid(4) pgrp(5) ... starttime(22).
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields after the command", pid, len(f))
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: pgrp: %w", pid, err)
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: starttime: %w", pid, err)
	}
	return procStat{pid: pid, state: f[0][0], pgrp: pgrp, startTicks: start}, nil
}

// startTicks returns pid's start time, or 0 when it cannot be read.
func startTicks(pid int) uint64 {
	st, err := readStat(pid)
	if err != nil {
		return 0
	}
	return st.startTicks
}

// groupMembers returns the live processes whose process group is pgid.
func groupMembers(pgid int) ([]procStat, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, err
	}
	var out []procStat
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		st, err := readStat(pid)
		if err != nil {
			continue // gone meanwhile, or not readable
		}
		if st.pgrp == pgid && st.live() {
			out = append(out, st)
		}
	}
	return out, nil
}

// procUID returns the owner (effective uid) of a process.
func procUID(pid int) (uint32, error) {
	fi, err := os.Stat(fmt.Sprintf("%s/%d", procRoot, pid))
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, errors.New("no owner")
	}
	return st.Uid, nil
}

// bootID identifies this boot of the machine; empty when unknown.
func bootID() string {
	b, err := os.ReadFile(procRoot + "/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// killMember sends SIGKILL to m through a pidfd after checking, with the
// pidfd held, that the pid still names the same process in the same
// group: a pid reused meanwhile is never signalled.
func killMember(m procStat) error {
	fd, err := unix.PidfdOpen(m.pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil
		}
		return fmt.Errorf("pidfd_open %d: %w", m.pid, err)
	}
	defer unix.Close(fd)
	st, err := readStat(m.pid)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.startTicks != m.startTicks || st.pgrp != m.pgrp {
		return nil // another process now
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("kill %d: %w", m.pid, err)
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
	st, err := readStat(pid)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("cannot read the host process: %w", err)
	case start == 0:
		return "", fmt.Errorf("pid %d is alive and no start time was recorded to tell it from a reused pid", pid)
	case st.startTicks != start:
		// A pid is not reused while a process group of that id has
		// members, so the recorded group is gone too.
		return confirmedPidReused, nil
	}
	members, err := groupMembers(pid)
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
		owner, err := procUID(m.pid)
		if err != nil {
			continue // gone
		}
		if owner != uid {
			return "", fmt.Errorf("process %d of host group %d belongs to uid %d, not this serve's", m.pid, pid, owner)
		}
		if err := killMember(m); err != nil {
			return "", err
		}
	}
	deadline := time.Now().Add(wait)
	for {
		members, err = groupMembers(pid)
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
