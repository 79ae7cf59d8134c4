package testproc

import (
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/fabric-runtime/fabric/internal/procfs"
)

// Stat reads the parent pid, process group and command name of pid from
// /proc; ok is false when pid is gone or a zombie.
func Stat(pid int) (ppid, pgrp int, comm string, ok bool) {
	st, err := procfs.Default.Stat(pid)
	if err != nil || !st.Live() {
		return 0, 0, "", false
	}
	return st.PPID, st.PGID, st.Comm, true
}

// Pids lists every process id in /proc.
func Pids() []int {
	pids, _ := procfs.Default.Pids()
	return pids
}

// Group lists the live processes of process group pgid.
func Group(pgid int) []int {
	pids, _ := procfs.Default.GroupPids(pgid)
	return pids
}

// Mentioning lists the live processes whose environment or command line
// contains s (a runtime's private directory, say): what a leak check looks
// for after stop.
func Mentioning(s string) []int {
	self := os.Getpid()
	has := func(e string) bool { return strings.Contains(e, s) }
	var out []int
	for _, pid := range Pids() {
		if pid == self {
			continue
		}
		env, _ := procfs.Default.Environ(pid)
		args, _ := procfs.Default.Cmdline(pid)
		if !slices.ContainsFunc(env, has) && !slices.ContainsFunc(args, has) {
			continue
		}
		if _, _, _, ok := Stat(pid); ok {
			out = append(out, pid)
		}
	}
	return out
}

// RSSKiB sums the resident set (VmRSS) of pids in KiB; gone pids count 0.
func RSSKiB(pids ...int) int64 {
	var total int64
	for _, pid := range pids {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					n, _ := strconv.ParseInt(f[0], 10, 64)
					total += n
				}
			}
		}
	}
	return total
}
