//go:build linux

package codex

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// sweep kills the processes that escaped codex's process group but carry
// the runtime's private environment (marker is "CODEX_HOME=<dir>", unique
// per runtime): commands the model started with setsid or a double fork.
// Only processes readable by this user are seen. It returns the pids it
// signalled.
func sweep(marker string, wait time.Duration) []int {
	needle := append([]byte(marker), 0)
	self := os.Getpid()
	var killed []int
	deadline := time.Now().Add(wait)
	for {
		var found []int
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return killed
		}
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err != nil || !bytes.Contains(append([]byte{0}, env...), append([]byte{0}, needle...)) {
				continue
			}
			if zombie(pid) {
				continue
			}
			found = append(found, pid)
		}
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

func zombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(data, ')')
	return i < 0 || i+2 >= len(data) || data[i+2] == 'Z' || data[i+2] == 'X'
}
