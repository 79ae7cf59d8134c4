// Package testproc holds process helpers shared by tests that drive real
// processes.
package testproc

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
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
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, _ := os.ReadDir(dir)
	if len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(dir + "/" + task.Name() + "/stat")
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if err != nil || i < 0 || i+2 >= len(s) || s[i+2] != 'T' {
			return false
		}
	}
	return true
}
