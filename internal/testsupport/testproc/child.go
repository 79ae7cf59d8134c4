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
