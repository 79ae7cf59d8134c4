package procfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseEnviron(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\x00", []string{""}},
		{"A=1\x00B=2\x00", []string{"A=1", "B=2"}},
		{"A=1\x00B=2", []string{"A=1", "B=2"}}, // rewritten: no last NUL
		{"A=1\x00\x00B=\x00", []string{"A=1", "", "B="}},
		{"NOEQUALS\x00", []string{"NOEQUALS"}},
	} {
		if got := ParseEnviron([]byte(tc.in)); !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("ParseEnviron(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzParseEnviron(f *testing.F) {
	f.Add([]byte("HOME=/h\x00PATH=/bin:/usr/bin\x00"))
	f.Add([]byte("A=1\x00\x00B"))
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, in []byte) {
		got := ParseEnviron(in)
		if len(in) == 0 {
			if got != nil {
				t.Fatalf("ParseEnviron(%q) = %q, want none", in, got)
			}
			return
		}
		// The strings, NUL-terminated again, are the input.
		back := strings.Join(got, "\x00")
		if in[len(in)-1] == 0 {
			back += "\x00"
		}
		if back != string(in) {
			t.Fatalf("ParseEnviron(%q) = %q, which joins to %q", in, got, back)
		}
	})
}

// fakeEnviron gives the fake tree's processes an environment: 123 and 456
// (its last entry without NUL) and the zombie 789 hold MARK=one; 900 has
// none that can be read.
func fakeEnviron(t *testing.T, root FS) {
	t.Helper()
	for pid, env := range map[string]string{
		"123": "HOME=/h\x00MARK=one\x00",
		"456": "MARK=one\x00X=MARK=one-not",
		"789": "MARK=one\x00",
	} {
		must(t, os.WriteFile(filepath.Join(string(root), pid, "environ"), []byte(env), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(string(root), "123", "cmdline"), []byte("sleep\x001000\x00"), 0o644))
}

func TestEnviron(t *testing.T) {
	p := fakeProc(t)
	fakeEnviron(t, p)
	if env, err := p.Environ(456); err != nil || !slices.Equal(env, []string{"MARK=one", "X=MARK=one-not"}) {
		t.Errorf("Environ(456) = %q, %v", env, err)
	}
	if args, err := p.Cmdline(123); err != nil || !slices.Equal(args, []string{"sleep", "1000"}) {
		t.Errorf("Cmdline(123) = %q, %v", args, err)
	}
	if _, err := p.Environ(900); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Environ(900) err = %v, want not exist", err)
	}
	if pids, err := p.EnvPids(func(e string) bool { return e == "MARK=one" }); err != nil || !slices.Equal(pids, []int{123, 456}) {
		t.Errorf("EnvPids(MARK=one) = %v, %v; want 123 and 456 (789 is a zombie)", pids, err)
	}
	if pids, err := p.EnvPids(func(e string) bool { return strings.Contains(e, "/h") }); err != nil || !slices.Equal(pids, []int{123}) {
		t.Errorf("EnvPids(contains /h) = %v, %v", pids, err)
	}
}
