package testproc

import (
	"os"
	"strconv"
	"strings"
)

// Stat reads the parent pid, process group and command name of pid from
// /proc; ok is false when pid is gone or a zombie.
func Stat(pid int) (ppid, pgrp int, comm string, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, "", false
	}
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open || end+2 > len(s) {
		return 0, 0, "", false
	}
	f := strings.Fields(s[end+2:])
	if len(f) < 3 || f[0] == "Z" {
		return 0, 0, "", false
	}
	ppid, _ = strconv.Atoi(f[1])
	pgrp, _ = strconv.Atoi(f[2])
	return ppid, pgrp, s[open+1 : end], true
}

// Pids lists every process id in /proc.
func Pids() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// Group lists the live processes of process group pgid.
func Group(pgid int) []int {
	var out []int
	for _, pid := range Pids() {
		if _, pg, _, ok := Stat(pid); ok && pg == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// Mentioning lists the live processes whose environment or command line
// contains s (a runtime's private directory, say): what a leak check looks
// for after stop.
func Mentioning(s string) []int {
	self := os.Getpid()
	var out []int
	for _, pid := range Pids() {
		if pid == self {
			continue
		}
		env, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if !strings.Contains(string(env), s) && !strings.Contains(string(cmd), s) {
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
