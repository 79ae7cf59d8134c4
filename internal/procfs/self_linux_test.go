package procfs

import (
	"os"
	"slices"
	"testing"
)

// TestSelf reads this process from the real procfs.
func TestSelf(t *testing.T) {
	st, err := Default.Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.Pid != os.Getpid() || st.PPID != os.Getppid() || !st.Live() || st.StartTime == 0 || st.RSS <= 0 {
		t.Errorf("Stat(self) = %+v", st)
	}
	threads, err := Default.Threads(os.Getpid())
	if err != nil || len(threads) == 0 {
		t.Errorf("Threads(self) = %v, %v", threads, err)
	}
	if id, err := Default.BootID(); err != nil || len(id) != 36 {
		t.Errorf("BootID = %q, %v", id, err)
	}
	if FS("").path("1") != "/proc/1" {
		t.Errorf(`FS("") is not /proc`)
	}
}

// TestSelfEnviron reads this process's environment and arguments from the
// real procfs (nothing in this package changes its environment).
func TestSelfEnviron(t *testing.T) {
	if env, err := Default.Environ(os.Getpid()); err != nil || !slices.Equal(env, os.Environ()) {
		t.Errorf("Environ(self) = %d entries, %v; want os.Environ()'s %d", len(env), err, len(os.Environ()))
	}
	if args, err := Default.Cmdline(os.Getpid()); err != nil || !slices.Equal(args, os.Args) {
		t.Errorf("Cmdline(self) = %q, %v; want %q", args, err, os.Args)
	}
}
