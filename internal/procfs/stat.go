package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// FS is the mount point of a procfs tree: "/proc", or a fake tree in tests.
// The empty FS means /proc.
type FS string

// Default is the system's procfs.
const Default FS = "/proc"

func (f FS) path(elem ...string) string {
	root := string(f)
	if root == "" {
		root = string(Default)
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// gone reports whether err means that a process, or one of its files, no
// longer exists: the directory is gone, or it went away between open and
// read.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// Stat is the part of /proc/<pid>/stat that Fabric reads (proc(5) numbers
// the fields from 1).
type Stat struct {
	Pid       int    // field 1
	Comm      string // field 2, without its parentheses; it may hold any byte but NUL
	State     byte   // field 3: R, S, D, T, t, Z, X, ...
	PPID      int    // field 4
	PGID      int    // field 5: the process group
	UTime     uint64 // field 14: user CPU time, in clock ticks
	STime     uint64 // field 15: system CPU time, in clock ticks
	StartTime uint64 // field 22: start time, in clock ticks after boot
	RSS       int64  // field 24: resident set, in pages
}

// Live reports whether the process runs or could run: it is not a zombie
// waiting to be reaped nor being torn down, so it holds resources a signal
// could release.
func (s Stat) Live() bool { return s.State != 'Z' && s.State != 'X' && s.State != 'x' }

// Stopped reports whether the process (or thread) is stopped by a signal.
func (s Stat) Stopped() bool { return s.State == 'T' }

// minStatFields is how many fields must follow the command name: fields 3
// to 24.
const minStatFields = 22

// ParseStat parses the contents of /proc/<pid>/stat (or of a thread's
// /proc/<pid>/task/<tid>/stat). The command name may hold spaces and
// parentheses, so it runs from the first '(' to the last ')' and the other
// fields are counted from there.
func ParseStat(b []byte) (Stat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return Stat{}, errors.New("malformed stat: no command name")
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return Stat{}, fmt.Errorf("malformed stat: pid: %w", err)
	}
	// f[0] is field 3 (state), so field n is f[n-3].
	f := strings.Fields(string(b[end+1:]))
	if len(f) < minStatFields {
		return Stat{}, fmt.Errorf("malformed stat: %d fields after the command name, want %d", len(f), minStatFields)
	}
	if len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("malformed stat: state %q", f[0])
	}
	st := Stat{Pid: pid, Comm: string(b[open+1 : end]), State: f[0][0]}
	for _, v := range []struct {
		name string
		s    string
		to   *int
	}{{"ppid", f[1], &st.PPID}, {"pgrp", f[2], &st.PGID}} {
		if *v.to, err = strconv.Atoi(v.s); err != nil {
			return Stat{}, fmt.Errorf("malformed stat: %s: %w", v.name, err)
		}
	}
	for _, v := range []struct {
		name string
		s    string
		to   *uint64
	}{{"utime", f[11], &st.UTime}, {"stime", f[12], &st.STime}, {"starttime", f[19], &st.StartTime}} {
		if *v.to, err = strconv.ParseUint(v.s, 10, 64); err != nil {
			return Stat{}, fmt.Errorf("malformed stat: %s: %w", v.name, err)
		}
	}
	if st.RSS, err = strconv.ParseInt(f[21], 10, 64); err != nil {
		return Stat{}, fmt.Errorf("malformed stat: rss: %w", err)
	}
	return st, nil
}

// Stat reads /proc/<pid>/stat. When the process does not exist the error
// satisfies errors.Is(err, fs.ErrNotExist).
func (f FS) Stat(pid int) (Stat, error) {
	return f.readStat(pid, f.path(strconv.Itoa(pid), "stat"))
}

func (f FS) readStat(pid int, path string) (Stat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if gone(err) {
			return Stat{}, fmt.Errorf("procfs: pid %d: %w", pid, fs.ErrNotExist)
		}
		return Stat{}, fmt.Errorf("procfs: %w", err)
	}
	st, err := ParseStat(b)
	if err != nil {
		return Stat{}, fmt.Errorf("procfs: %s: %w", path, err)
	}
	return st, nil
}

// Threads reads the stat line of every thread of pid
// (/proc/<pid>/task/<tid>/stat), in ascending tid order; each Stat's Pid is
// the thread id. A thread that exits meanwhile is skipped; a process that
// is gone is an error satisfying errors.Is(err, fs.ErrNotExist).
func (f FS) Threads(pid int) ([]Stat, error) {
	dir := f.path(strconv.Itoa(pid), "task")
	tids, err := numericEntries(dir)
	if err != nil {
		if gone(err) {
			return nil, fmt.Errorf("procfs: pid %d: %w", pid, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("procfs: %w", err)
	}
	return f.stats(tids, func(tid int) string { return filepath.Join(dir, strconv.Itoa(tid), "stat") })
}

// Pids lists the processes, in ascending order.
func (f FS) Pids() ([]int, error) {
	pids, err := numericEntries(f.path())
	if err != nil {
		return nil, fmt.Errorf("procfs: %w", err)
	}
	return pids, nil
}

// Stats reads the stat line of every process, in ascending pid order,
// skipping the processes that exit meanwhile.
func (f FS) Stats() ([]Stat, error) {
	pids, err := f.Pids()
	if err != nil {
		return nil, err
	}
	return f.stats(pids, func(pid int) string { return f.path(strconv.Itoa(pid), "stat") })
}

func (f FS) stats(ids []int, path func(int) string) ([]Stat, error) {
	out := make([]Stat, 0, len(ids))
	for _, id := range ids {
		st, err := f.readStat(id, path(id))
		if err != nil {
			if gone(err) {
				continue
			}
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Group returns the live processes (see [Stat.Live]) whose process group
// is pgid, in ascending pid order.
func (f FS) Group(pgid int) ([]Stat, error) {
	all, err := f.Stats()
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(st Stat) bool { return st.PGID != pgid || !st.Live() }), nil
}

// GroupPids is [FS.Group] as pids.
func (f FS) GroupPids(pgid int) ([]int, error) {
	members, err := f.Group(pgid)
	if err != nil {
		return nil, err
	}
	pids := make([]int, len(members))
	for i, m := range members {
		pids[i] = m.Pid
	}
	return pids, nil
}

// BootID returns the id of this boot of the machine
// (/proc/sys/kernel/random/boot_id).
func (f FS) BootID() (string, error) {
	b, err := os.ReadFile(f.path("sys", "kernel", "random", "boot_id"))
	if err != nil {
		return "", fmt.Errorf("procfs: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// numericEntries lists the positive numeric entries of dir, in ascending
// order.
func numericEntries(dir string) ([]int, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	ids := make([]int, 0, len(names))
	for _, n := range names {
		if n == "" || n[0] < '1' || n[0] > '9' {
			continue
		}
		if id, err := strconv.Atoi(n); err == nil && id > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}
