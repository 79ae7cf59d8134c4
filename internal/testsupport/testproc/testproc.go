// Package testproc holds process helpers shared by tests that drive real
// processes.
package testproc

import (
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/procfs"
)

// WaitStopped waits until every thread of pid is stopped (state T), as a
// SIGSTOP lands asynchronously; it fails the test after 10 s.
func WaitStopped(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if Stopped(pid) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d did not stop", pid)
}

// Stopped reports whether every thread of pid is in state T.
func Stopped(pid int) bool {
	threads, err := procfs.Default.Threads(pid)
	if err != nil || len(threads) == 0 {
		return false
	}
	for _, th := range threads {
		if !th.Stopped() {
			return false
		}
	}
	return true
}
