//go:build unix

package openclaw

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockFile opens path and takes an exclusive, non-blocking lock on it.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if err == unix.EWOULDBLOCK {
			return nil, errPortLocked
		}
		return nil, err
	}
	return f, nil
}
