package conformance

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procChecks says whether process checks are available here.
const procChecks = true

// procStat reads the state and process group of pid from /proc.
func procStat(pid int) (state byte, pgrp int, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return 0, 0, false
	}
	fields := strings.Fields(s[i+2:])
	if len(fields) < 3 || len(fields[0]) == 0 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(fields[2])
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pg, true
}

func live(state byte) bool { return state != 'Z' && state != 'X' && state != 'x' }

// pids lists the process ids in /proc.
func pids() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// groupMembers lists the live (non-zombie) processes of process group pgid.
func groupMembers(pgid int) []int {
	var out []int
	for _, pid := range pids() {
		if st, pg, ok := procStat(pid); ok && pg == pgid && live(st) {
			out = append(out, pid)
		}
	}
	return out
}

// processesMentioning lists live processes, other than this one, whose
// environment contains dir: hosts started with a home under a state dir
// and every descendant that inherited their environment, whichever process
// group or session they moved to.
func processesMentioning(dir string) []int {
	needle := []byte(dir)
	self := os.Getpid()
	var out []int
	for _, pid := range pids() {
		if pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil || !bytes.Contains(env, needle) {
			continue
		}
		if st, _, ok := procStat(pid); ok && live(st) {
			out = append(out, pid)
		}
	}
	return out
}

// killGroup sends SIGKILL to process group pgid.
func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }

// killPids sends SIGKILL to each process.
func killPids(list []int) {
	for _, pid := range list {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// hostExe is the path of the binary process pid runs.
func hostExe(pid int) (string, error) { return os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe") }
