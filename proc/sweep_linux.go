//go:build linux

package proc

import (
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fabric-runtime/fabric/internal/procfs"
)

// KillByEnv kills, with SIGKILL, every process whose environment holds
// marker (a whole "NAME=value" entry, unique to one runtime, such as its
// private home directory): the processes that escaped a runtime's process
// group (commands a model started with setsid or a double fork). It keeps
// looking until none is left or wait has passed. Only processes readable
// by this user are seen. It returns the pids it signalled.
func KillByEnv(marker string, wait time.Duration) []int {
	self := os.Getpid()
	holds := func(entry string) bool { return entry == marker }
	var killed []int
	deadline := time.Now().Add(wait)
	for {
		found, err := procfs.Default.EnvPids(holds)
		if err != nil {
			return killed
		}
		found = slices.DeleteFunc(found, func(pid int) bool { return pid == self })
		if len(found) == 0 || time.Now().After(deadline) {
			return killed
		}
		for _, pid := range found {
			if unix.Kill(pid, unix.SIGKILL) == nil {
				killed = append(killed, pid)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func zombieOrGone(pid int) bool {
	st, err := procfs.Default.Stat(pid)
	return err != nil || !st.Live()
}
