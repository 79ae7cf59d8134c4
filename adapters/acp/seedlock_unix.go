//go:build unix

package acp

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive, non-blocking lock on path (made as
// needed), which the kernel releases when the process dies; unlock
// releases it. A lock held elsewhere is errSeedBusy.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errSeedBusy
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}

// scratchNice is the scheduling priority of a seed's scratch start, which
// runs beside live runtimes.
const scratchNice = 10

// setNice sets the scheduling priority of the process pid (never of the
// caller: pid 0, which a platform without process ids reports, is left).
func setNice(pid, nice int) error {
	if pid <= 0 {
		return nil
	}
	return unix.Setpriority(unix.PRIO_PROCESS, pid, nice)
}

// sameDevice reports whether directories a and b are on one filesystem
// (a rename can move an entry from one to the other).
func sameDevice(a, b string) bool {
	var sa, sb unix.Stat_t
	return unix.Stat(a, &sa) == nil && unix.Stat(b, &sb) == nil && sa.Dev == sb.Dev
}
