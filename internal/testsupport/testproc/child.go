package testproc

import (
	"bytes"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Output collects a child's output for the test to read while the child
// runs: a bytes.Buffer safe for exec's copying goroutine. Use it as
// exec.Cmd's Stdout or Stderr.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// Wait waits for the started cmd to exit and returns its state; if it has
// not exited within d, Wait kills it and fails t.
func Wait(t testing.TB, cmd *exec.Cmd, d time.Duration) *os.ProcessState {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not exit within %v", cmd.Path, d)
	}
	return cmd.ProcessState
}

// Eventually waits until cond holds, checking every 2 ms, and fails t
// when it still does not after d; what says what was awaited. It is the
// handshake for a condition only the outside can observe (a process gone,
// a file written), where no event says so.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
