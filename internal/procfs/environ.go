package procfs

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
)

// ParseEnviron splits the contents of /proc/<pid>/environ (or cmdline),
// NUL-terminated strings, into those strings in order. A last string
// without its NUL (a process that rewrote its own memory) is kept; an
// empty content is no string at all.
func ParseEnviron(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	b = bytes.TrimSuffix(b, []byte{0})
	out := make([]string, 0, bytes.Count(b, []byte{0})+1)
	for e := range bytes.SplitSeq(b, []byte{0}) {
		out = append(out, string(e))
	}
	return out
}

// Environ reads the environment pid was started with (or set up in its
// own memory since), one "NAME=value" entry a string. Only the processes
// of this user (or all, for root) can be read.
func (f FS) Environ(pid int) ([]string, error) { return f.nulList(pid, "environ") }

// Cmdline reads the arguments of pid, its program name first.
func (f FS) Cmdline(pid int) ([]string, error) { return f.nulList(pid, "cmdline") }

func (f FS) nulList(pid int, file string) ([]string, error) {
	b, err := os.ReadFile(f.path(strconv.Itoa(pid), file))
	if err != nil {
		return nil, fmt.Errorf("procfs: %w", err)
	}
	return ParseEnviron(b), nil
}

// EnvPids lists, in ascending order, the live processes (Stat.Live) whose
// environment holds an entry that match accepts: for instance a marker
// entry that every process of one runtime inherits, whichever process
// group or session it moved to. The processes whose environment cannot be
// read (another user's, or gone meanwhile) are skipped.
func (f FS) EnvPids(match func(entry string) bool) ([]int, error) {
	pids, err := f.Pids()
	if err != nil {
		return nil, err
	}
	var out []int
	for _, pid := range pids {
		env, err := f.Environ(pid)
		if err != nil || !slices.ContainsFunc(env, match) {
			continue
		}
		if st, err := f.Stat(pid); err == nil && st.Live() {
			out = append(out, pid)
		}
	}
	return out, nil
}
