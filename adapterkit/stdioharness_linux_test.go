package adapterkit

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/proc"
)

// harness starts script under sh with its stdin and stdout on pipes and a
// reader draining stdout; it returns the stop sequence's parts.
func harness(t *testing.T, script string, env ...string) (p *proc.Process, stdin, stdout *os.File, readerDone chan struct{}) {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err = proc.Start(context.Background(), proc.Spec{Path: "/bin/sh", Args: []string{"-c", script},
		Env: append(os.Environ(), env...), Stdin: inR, Stdout: outW, Stderr: os.Stderr, Grace: 200 * time.Millisecond})
	inR.Close()
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	readerDone = make(chan struct{})
	go func() {
		defer close(readerDone)
		_, _ = io.Copy(io.Discard, outR)
	}()
	return p, inW, outR, readerDone
}

func TestHarnessStop(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Fatalf("setsid (util-linux) is needed to start a process that escapes the harness's group: %v", err)
	}
	tests := []struct {
		name   string
		script string
		sweep  bool
		// the sequence waits about this long at least and at most
		least, most time.Duration
	}{
		// cat exits on end of input: nothing to wait for.
		{"exits on end of input", `: >"$READY"; exec cat`, false, 0, 900 * time.Millisecond},
		// sleep ignores its input: the group is stopped after ExitWait.
		{"ignores end of input", `: >"$READY"; exec sleep 30`, false, 300 * time.Millisecond, 1500 * time.Millisecond},
		// An escaped process holds the output: the reader is cut off after
		// OutputWait.
		{"escaped process holds the output", `setsid sh -c ': >"$READY"; exec sleep 30' & exec cat`, false, 400 * time.Millisecond, 1500 * time.Millisecond},
		// The sweep kills it, so the output ends without the cut.
		{"escaped process swept", `setsid sh -c ': >"$READY"; exec sleep 30' & exec cat`, true, 0, 1200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			priv := filepath.Join(root, "private")
			if err := os.MkdirAll(filepath.Join(priv, "home"), 0o700); err != nil {
				t.Fatal(err)
			}
			marker := "FABRIC_STOP_TEST=" + priv
			ready := filepath.Join(root, "ready")
			p, stdin, stdout, readerDone := harness(t, tt.script, marker, "READY="+ready)
			t.Cleanup(func() { proc.KillByEnv(marker, time.Second) })
			st := HarnessStop{
				CloseInput: func() { stdin.Close() }, Proc: p, ExitWait: 300 * time.Millisecond,
				Output: stdout, OutputDone: readerDone, OutputWait: 400 * time.Millisecond, Remove: priv,
				Log: discardLogger(),
			}
			if tt.sweep {
				st.Sweep, st.SweepWait = marker, time.Second
			}
			// The handshake: what the script leaves behind has left its group.
			testproc.Eventually(t, 10*time.Second, "the script's ready file", func() bool { _, err := os.Stat(ready); return err == nil })
			start := time.Now()
			if err := st.Run(context.Background()); err != nil {
				t.Fatalf("Run: %v", err)
			}
			took := time.Since(start)
			if took < tt.least || took > tt.most {
				t.Errorf("Run took %v, want %v to %v", took, tt.least, tt.most)
			}
			select {
			case <-readerDone:
			default:
				t.Error("Run returned before the output's reader ended")
			}
			if _, ok := p.ExitState(); !ok {
				t.Error("the harness still runs")
			}
			if _, err := os.Stat(priv); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("private root: %v, want it removed", err)
			}
		})
	}
}

func TestHarnessStopReportsTheRemoval(t *testing.T) {
	// A file of the kernel's that nobody, root included, can unlink (a
	// read-only directory would not stop root, which CI runs as).
	const undeletable = "/proc/self/comm"
	err := HarnessStop{Remove: undeletable}.Run(context.Background())
	if err == nil || !errors.Is(err, os.ErrPermission) {
		t.Fatalf("Run = %v, want the removal's permission error", err)
	}
}

func TestStartPiped(t *testing.T) {
	p, stdin, stdout, err := StartPiped(context.Background(), proc.Spec{Path: "/bin/cat", Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	if _, err := stdin.Write([]byte("line\n")); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	got, err := io.ReadAll(stdout)
	if err != nil || string(got) != "line\n" {
		t.Errorf("read %q, %v; want the line cat echoed", got, err)
	}
	<-p.Done()

	_, _, _, err = StartPiped(context.Background(), proc.Spec{Path: filepath.Join(t.TempDir(), "missing")})
	if err == nil || !strings.Contains(err.Error(), "start ") {
		t.Errorf("StartPiped of a missing binary = %v, want a start error", err)
	}
}

func TestExitedError(t *testing.T) {
	p, stdin, stdout, err := StartPiped(context.Background(), proc.Spec{Path: "/bin/sh", Args: []string{"-c", "exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	defer stdout.Close()
	e := ExitedError("x_exited", "harness", p, 5*time.Second)
	if e.Code != "x_exited" || !strings.HasPrefix(e.Message, "harness exited (") || !strings.Contains(e.Message, "3") {
		t.Errorf("ExitedError = %+v, want code x_exited and the exit status", e)
	}
	if e := ExitedError("x_exited", "harness", nil, 0); e.Message != "harness exited" {
		t.Errorf("ExitedError without a process = %q", e.Message)
	}
}
