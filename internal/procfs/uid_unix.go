//go:build unix

package procfs

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// UID returns the owner of pid: the owner of /proc/<pid>, which is the
// process's effective uid.
func (f FS) UID(pid int) (uint32, error) {
	fi, err := os.Stat(f.path(strconv.Itoa(pid)))
	if err != nil {
		return 0, fmt.Errorf("procfs: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("procfs: pid %d: no owner", pid)
	}
	return st.Uid, nil
}
