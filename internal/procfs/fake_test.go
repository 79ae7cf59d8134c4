package procfs

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// fakeProc builds a procfs tree in a temporary directory: net/ from
// testdata, a boot id, and processes with stat files, threads and fd
// symlinks (dangling links are made here because git does not keep them
// well).
//
//	123  pgrp 123  fds: /dev/null, socket 1001, a pipe; threads 123 (S), 124 (T)
//	456  pgrp 123  fds: socket 8008, socket 1605; parent 123
//	789  pgrp 123  zombie, no fds
//	900  pgrp 900  fds: socket 9999
func fakeProc(t *testing.T) FS {
	t.Helper()
	root := t.TempDir()
	net, err := filepath.Abs(filepath.Join("testdata", "proc", "net"))
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.Symlink(net, filepath.Join(root, "net")))
	must(t, os.Symlink("123", filepath.Join(root, "self")))
	must(t, os.MkdirAll(filepath.Join(root, "sys", "kernel", "random"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "sys", "kernel", "random", "boot_id"), []byte("1d2c3b4a-0000-4000-8000-00000000abcd\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "uptime"), []byte("1.00 2.00\n"), 0o644)) // not a process
	procs := []struct {
		pid, ppid, pgrp int
		state           byte
		fds             map[string]string
		threads         map[int]byte
	}{
		{123, 1, 123, 'S', map[string]string{"0": "/dev/null", "3": "socket:[1001]", "4": "pipe:[55]"}, map[int]byte{123: 'S', 124: 'T'}},
		{456, 123, 123, 'R', map[string]string{"5": "socket:[8008]", "6": "socket:[1605]"}, nil},
		{789, 123, 123, 'Z', nil, nil},
		{900, 1, 900, 'S', map[string]string{"3": "socket:[9999]"}, nil},
	}
	for _, p := range procs {
		dir := filepath.Join(root, fmt.Sprint(p.pid))
		must(t, os.MkdirAll(filepath.Join(dir, "fd"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(fakeStat(p.pid, p.ppid, p.pgrp, p.state)), 0o644))
		for fd, target := range p.fds {
			must(t, os.Symlink(target, filepath.Join(dir, "fd", fd)))
		}
		for tid, state := range p.threads {
			tdir := filepath.Join(dir, "task", fmt.Sprint(tid))
			must(t, os.MkdirAll(tdir, 0o755))
			must(t, os.WriteFile(filepath.Join(tdir, "stat"), []byte(fakeStat(tid, p.ppid, p.pgrp, state)), 0o644))
		}
	}
	return FS(root)
}

// fakeStat is a stat line for a process named "fake (pid)" (a name with a
// space and parentheses), its start time 1000+pid and its rss pid pages.
func fakeStat(pid, ppid, pgrp int, state byte) string {
	return fmt.Sprintf("%d (fake (%d)) %c %d %d %d 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 %d 0 %d 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		pid, pid, state, ppid, pgrp, pgrp, 1000+pid, pid)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
