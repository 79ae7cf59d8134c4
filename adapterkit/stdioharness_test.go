package adapterkit

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/proc"
)

func TestHarnessHealthCheck(t *testing.T) {
	// The ladder of a harness that must answer a handshake (active) and
	// keep taking input (ready), as the Claude Code and Pi adapters use it.
	ladder := func(exited, started, broken bool) []HealthRung {
		return []HealthRung{
			{Level: contract.LevelLive, Failed: exited, Reason: contract.ReasonAgentExited, Message: "exited"},
			{Level: contract.LevelActive, Failed: !started, Reason: contract.ReasonSessionClosed, Message: "no handshake"},
			{Level: contract.LevelReady, Failed: broken, Reason: contract.ReasonHealthFailed, Message: "broken"},
		}
	}
	tests := []struct {
		name                  string
		level                 string
		busy                  bool
		exited, started, brkn bool
		outcome, reason, msg  string
		activity              string
	}{
		{"live while running", contract.LevelLive, false, false, false, false, contract.OutcomePassed, "", "", contract.ActivityIdle},
		{"live, busy", contract.LevelLive, true, false, true, false, contract.OutcomePassed, "", "", contract.ActivityBusy},
		{"live after exit", contract.LevelLive, true, true, true, false, contract.OutcomeFailed, contract.ReasonAgentExited, "exited", contract.ActivityStopped},
		{"active before the handshake", contract.LevelActive, false, false, false, false, contract.OutcomeFailed, contract.ReasonSessionClosed, "no handshake", contract.ActivityIdle},
		{"active before the handshake, exited", contract.LevelActive, false, true, false, false, contract.OutcomeFailed, contract.ReasonAgentExited, "exited", contract.ActivityStopped},
		{"active, broken", contract.LevelActive, false, false, true, true, contract.OutcomePassed, "", "", contract.ActivityIdle},
		{"ready", contract.LevelReady, false, false, true, false, contract.OutcomePassed, "", "", contract.ActivityIdle},
		{"ready, broken", contract.LevelReady, false, false, true, true, contract.OutcomeFailed, contract.ReasonHealthFailed, "broken", contract.ActivityIdle},
		{"ready before the handshake", contract.LevelReady, false, false, false, true, contract.OutcomeFailed, contract.ReasonSessionClosed, "no handshake", contract.ActivityIdle},
		{"unknown level", "deep", false, false, false, false, contract.OutcomeUnsupported, contract.ReasonUnsupportedLevel, "", contract.ActivityIdle},
		{"unknown level, exited", "", false, true, false, false, contract.OutcomeUnsupported, contract.ReasonUnsupportedLevel, "", contract.ActivityStopped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now().UnixMilli()
			h := HarnessHealth{Source: "harness", Busy: tt.busy, Exited: tt.exited, Metadata: map[string]any{"pid": 7},
				Rungs: ladder(tt.exited, tt.started, tt.brkn)}.Check(tt.level)
			if h.Outcome != tt.outcome || h.ReasonCode != tt.reason || h.Message != tt.msg || h.Activity != tt.activity {
				t.Errorf("Check(%q) = outcome %q reason %q message %q activity %q, want %q %q %q %q",
					tt.level, h.Outcome, h.ReasonCode, h.Message, h.Activity, tt.outcome, tt.reason, tt.msg, tt.activity)
			}
			if h.Source != "harness" || h.Metadata["pid"] != 7 || h.ObservedAtMillis < before {
				t.Errorf("source %q, metadata %v, observed at %d (before %d)", h.Source, h.Metadata, h.ObservedAtMillis, before)
			}
		})
	}
}

// harness starts script under sh with its stdin and stdout on pipes and a
// reader draining stdout; it returns the stop sequence's parts.
func harness(t *testing.T, script string, env ...string) (p *proc.Process, stdin, stdout *os.File, readerDone chan struct{}) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("process groups are supervised on Linux")
	}
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
	// The script says it runs once it has set up what it leaves behind.
	return p, inW, outR, readerDone
}

func TestHarnessStop(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	tests := []struct {
		name   string
		script string
		sweep  bool
		// the sequence waits about this long at least and at most
		least, most time.Duration
	}{
		// cat exits on end of input: nothing to wait for.
		{"exits on end of input", "exec cat", false, 0, 900 * time.Millisecond},
		// sleep ignores its input: the group is stopped after ExitWait.
		{"ignores end of input", "exec sleep 30", false, 300 * time.Millisecond, 1500 * time.Millisecond},
		// An escaped process holds the output: the reader is cut off after
		// OutputWait.
		{"escaped process holds the output", "setsid sleep 30 & exec cat", false, 400 * time.Millisecond, 1500 * time.Millisecond},
		// The sweep kills it, so the output ends without the cut.
		{"escaped process swept", "setsid sleep 30 & exec cat", true, 0, 1200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			priv := filepath.Join(root, "private")
			if err := os.MkdirAll(filepath.Join(priv, "home"), 0o700); err != nil {
				t.Fatal(err)
			}
			marker := "FABRIC_STOP_TEST=" + priv
			p, stdin, stdout, readerDone := harness(t, tt.script, marker)
			t.Cleanup(func() { proc.KillByEnv(marker, time.Second) })
			st := HarnessStop{
				CloseInput: func() { stdin.Close() }, Proc: p, ExitWait: 300 * time.Millisecond,
				Output: stdout, OutputDone: readerDone, OutputWait: 400 * time.Millisecond, Remove: priv,
				Log: discardLogger(),
			}
			if tt.sweep {
				st.Sweep, st.SweepWait = marker, time.Second
			}
			time.Sleep(50 * time.Millisecond) // let sh start its background process
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

func TestHarnessStopBoundsTheReaderAfterClose(t *testing.T) {
	// A reader that does not end when its output is closed (an SDK
	// connection with work of its own) is waited for at most ClosedWait.
	never := make(chan struct{})
	start := time.Now()
	if err := (HarnessStop{OutputDone: never, ClosedWait: 100 * time.Millisecond}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 100*time.Millisecond || took > time.Second {
		t.Errorf("Run took %v, want about 100ms", took)
	}
}

func TestHarnessStopReportsTheRemoval(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root removes what a read-only directory holds")
	}
	root := t.TempDir()
	locked := filepath.Join(root, "locked")
	if err := os.MkdirAll(filepath.Join(locked, "inner"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(locked, 0o700) })
	err := HarnessStop{Remove: locked}.Run(context.Background())
	if err == nil || !errors.Is(err, os.ErrPermission) {
		t.Fatalf("Run = %v, want the removal's permission error", err)
	}
}

func TestStartPiped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process groups are supervised on Linux")
	}
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

func TestLineWriter(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lw := NewLineWriter(w, time.Second)
	if err := lw.Send(map[string]any{"type": "prompt", "id": "fabric-1"}); err != nil {
		t.Fatal(err)
	}
	if err := lw.Send(func() {}); err == nil {
		t.Error("Send of a value JSON cannot encode succeeded")
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := lw.Send("late"); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Send after Close = %v, want os.ErrClosed", err)
	}
	got, _ := io.ReadAll(r)
	if string(got) != `{"id":"fabric-1","type":"prompt"}`+"\n" {
		t.Errorf("wrote %q, want one JSON line", got)
	}
}

func TestLineWriterTimesOut(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lw := NewLineWriter(w, 50*time.Millisecond)
	defer lw.Close()
	big := strings.Repeat("x", 1<<20) // more than a pipe holds, and nobody reads
	if err := lw.Send(big); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Send to a full pipe = %v, want os.ErrDeadlineExceeded", err)
	}
}

func TestExitedError(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process groups are supervised on Linux")
	}
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
