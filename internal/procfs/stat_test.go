package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Stat
	}{
		{
			name: "sleep",
			in:   "4242 (sleep) S 4241 4241 1 0 -1 4194304 98 0 0 0 12 5 0 0 20 0 1 0 1234567 2314240 128 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
			want: Stat{Pid: 4242, Comm: "sleep", State: 'S', PPID: 4241, PGID: 4241, UTime: 12, STime: 5, StartTime: 1234567, RSS: 128},
		},
		{
			name: "command with spaces and parens",
			in:   "77 (a) b (c)) R 1 70 70 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0",
			want: Stat{Pid: 77, Comm: "a) b (c)", State: 'R', PPID: 1, PGID: 70, StartTime: 99},
		},
		{
			name: "command looking like fields",
			in:   "8 (x) Z 1 2 3 ) T 2 8 8 0 -1 0 0 0 0 0 4 6 0 0 20 0 1 0 50 9 3",
			want: Stat{Pid: 8, Comm: "x) Z 1 2 3 ", State: 'T', PPID: 2, PGID: 8, UTime: 4, STime: 6, StartTime: 50, RSS: 3},
		},
		{
			name: "empty command",
			in:   "9 () D 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0",
			want: Stat{Pid: 9, State: 'D', PPID: 1, PGID: 9, StartTime: 1},
		},
		{
			name: "zombie",
			in:   "5 (sh) Z 1 5 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 18446744073709551615 0 0",
			want: Stat{Pid: 5, Comm: "sh", State: 'Z', PPID: 1, PGID: 5, StartTime: 18446744073709551615},
		},
		{
			name: "pid 0's parent",
			in:   "1 (init) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 3 0 -1",
			want: Stat{Pid: 1, Comm: "init", State: 'S', PGID: 1, StartTime: 3, RSS: -1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseStat: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseStat mismatch (-want +got):\n%s", diff)
			}
		})
	}
	const good = "5 (sh) S 1 5 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0"
	for name, in := range map[string]string{
		"empty":           "",
		"no command":      "5 sh S 1 5 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0",
		"parens reversed": "5 )sh( S 1 5 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0",
		"no pid":          "(sh) S 1 5 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0",
		"truncated":       good[:len(good)-4],
		"long state":      "5 (sh) SS 1 5 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0",
		"ppid not number": "5 (sh) S x 5 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0",
		"pgrp not number": "5 (sh) S 1 x 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0",
		"utime negative":  "5 (sh) S 1 5 1 0 -1 0 0 0 0 0 -1 0 0 0 20 0 1 0 99 0 0",
		"start negative":  "5 (sh) S 1 5 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -99 0 0",
		"rss not number":  "5 (sh) S 1 5 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 x",
	} {
		t.Run(name, func(t *testing.T) {
			if st, err := ParseStat([]byte(in)); err == nil {
				t.Errorf("ParseStat(%q) = %+v, want error", in, st)
			}
		})
	}
	if _, err := ParseStat([]byte(good)); err != nil {
		t.Fatalf("the malformed cases' base line does not parse: %v", err)
	}
}

func TestStatLive(t *testing.T) {
	for state, live := range map[byte]bool{'R': true, 'S': true, 'D': true, 'T': true, 't': true, 'Z': false, 'X': false, 'x': false} {
		if got := (Stat{State: state}).Live(); got != live {
			t.Errorf("Stat{State: %q}.Live() = %v, want %v", state, got, live)
		}
	}
}

func TestFakeTree(t *testing.T) {
	root := fakeProc(t)
	st, err := root.Stat(456)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Stat{Pid: 456, Comm: "fake (456)", State: 'R', PPID: 123, PGID: 123, UTime: 7, STime: 3, StartTime: 1456, RSS: 456}); st != want {
		t.Errorf("Stat(456) = %+v, want %+v", st, want)
	}
	if _, err := root.Stat(31337); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a missing pid: %v, want fs.ErrNotExist", err)
	}
	pids, err := root.Pids()
	if err != nil || !cmp.Equal(pids, []int{123, 456, 789, 900}) {
		t.Errorf("Pids = %v, %v", pids, err)
	}
	group, err := root.GroupPids(123)
	if err != nil || !cmp.Equal(group, []int{123, 456}) { // 789 is a zombie
		t.Errorf("GroupPids(123) = %v, %v; want [123 456]", group, err)
	}
	if group, err := root.Group(5); err != nil || len(group) != 0 {
		t.Errorf("Group(5) = %v, %v; want none", group, err)
	}
	threads, err := root.Threads(123)
	if err != nil || len(threads) != 2 || threads[0].Pid != 123 || threads[1].Pid != 124 || threads[0].Stopped() || !threads[1].Stopped() {
		t.Errorf("Threads(123) = %+v, %v; want 123 sleeping and 124 stopped", threads, err)
	}
	if _, err := root.Threads(31337); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Threads of a missing pid: %v, want fs.ErrNotExist", err)
	}
	if id, err := root.BootID(); err != nil || id != "1d2c3b4a-0000-4000-8000-00000000abcd" {
		t.Errorf("BootID = %q, %v", id, err)
	}
	if uid, err := root.UID(900); err != nil || int(uid) != os.Getuid() {
		t.Errorf("UID(900) = %d, %v; want %d (the owner of the fake tree)", uid, err, os.Getuid())
	}
}

func TestStatsSkipsGoneAndReportsMalformed(t *testing.T) {
	root := fakeProc(t)
	// A directory without stat is a process that exited meanwhile.
	must(t, os.MkdirAll(filepath.Join(string(root), "1000"), 0o755))
	all, err := root.Stats()
	if err != nil || len(all) != 4 {
		t.Fatalf("Stats = %+v, %v; want the 4 processes", all, err)
	}
	must(t, os.MkdirAll(filepath.Join(string(root), "1001"), 0o755))
	must(t, os.WriteFile(filepath.Join(string(root), "1001", "stat"), []byte("1001 (x) S 1"), 0o644))
	if _, err := root.Stats(); err == nil {
		t.Errorf("Stats with a malformed stat file: no error")
	}
}

// formatStat prints st the way the kernel does (the fields Stat does not
// keep are zero). The state is one byte, written as it is: %c would write
// a byte over 0x7f as the UTF-8 of that code point, two bytes, and 0xa0
// would come back as U+00A0, a space to strings.Fields.
func formatStat(st Stat) string {
	return fmt.Sprintf("%d (%s) %s %d %d 0 0 -1 0 0 0 0 0 %d %d 0 0 20 0 1 0 %d 0 %d 0 0 0\n",
		st.Pid, st.Comm, []byte{st.State}, st.PPID, st.PGID, st.UTime, st.STime, st.StartTime, st.RSS)
}

func FuzzParseStat(f *testing.F) {
	f.Add("4242 (sleep) S 4241 4241 1 0 -1 4194304 98 0 0 0 0 0 0 0 20 0 1 0 1234567 2314240 128 18446744073709551615 1 1 0 0")
	f.Add("77 (a) b (c)) R 1 70 70 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0")
	f.Add("8 (x) Z 1 2 3 ) T 2 8 8 0 -1 0 0 0 0 0 4 6 0 0 20 0 1 0 50 9 3")
	f.Add("1 () Z")
	f.Fuzz(func(t *testing.T, in string) {
		st, err := ParseStat([]byte(in))
		if err != nil {
			return
		}
		if st.State == ' ' || st.State == '\t' || st.State == '\n' || st.State == ')' {
			t.Fatalf("ParseStat(%q) = %+v: bad state", in, st)
		}
		// Whatever the command name holds, printing the parsed fields back
		// the kernel's way gives the same reading.
		again, err := ParseStat([]byte(formatStat(st)))
		if err != nil {
			t.Fatalf("reparse of %q: %v", formatStat(st), err)
		}
		if again != st {
			t.Fatalf("round trip of %q: got %+v, want %+v", in, again, st)
		}
	})
}
