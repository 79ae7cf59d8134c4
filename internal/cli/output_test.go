package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

const scriptedConfig = `schema_version: fabric.agent/v1alpha1
metadata: {name: demo}
runtime: {}
harness:
  adapter_id: fabric.scripted
  settings: {response: "turn {turn}: {input}"}
`

// openPTY returns a pseudo-terminal's two ends: what a program writes to
// tty is read from ptm.
func openPTY(t *testing.T) (ptm, tty *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		livetest.Missing(t, "a pseudo-terminal (/dev/ptmx)", "mount devpts on /dev/pts", err)
	}
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return ptm, tty
}

// runOn runs the fabric CLI, with stdout on a pseudo-terminal when
// terminal is set, and returns what reached stdout and stderr.
func runOn(t *testing.T, terminal bool, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var errw bytes.Buffer
	var got bytes.Buffer
	read := make(chan struct{})
	if !terminal {
		code = Run(context.Background(), args, Stdio{In: strings.NewReader(""), Out: &got, Err: &errw})
		return got.String(), errw.String(), code
	}
	ptm, tty := openPTY(t)
	go func() {
		defer close(read)
		io.Copy(&got, ptm) // ends with EIO once tty is closed
	}()
	code = Run(context.Background(), args, Stdio{In: strings.NewReader(""), Out: tty, Err: &errw})
	tty.Close()
	<-read
	return strings.ReplaceAll(got.String(), "\r\n", "\n"), errw.String(), code
}

// fabric run renders the turn for a person at a terminal and prints JSON
// for programs: when stdout is not a terminal (scripts keep working) or
// when -o json is given.
func TestRunOutputDefault(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(cfg, []byte(scriptedConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("terminal", func(t *testing.T) {
		stdout, stderr, code := runOn(t, true, "run", cfg, "--input", "hi")
		if code != ExitOK || strings.TrimSpace(stdout) != "turn 1: hi" {
			t.Fatalf("exit %d, stdout %q (stderr %q), want the rendered answer", code, stdout, stderr)
		}
		if !strings.HasPrefix(stderr, "[succeeded] invocation-") {
			t.Fatalf("stderr %q, want the one-line summary", stderr)
		}
	})
	t.Run("terminal -o json", func(t *testing.T) {
		stdout, _, code := runOn(t, true, "run", "-o", "json", cfg, "--input", "hi")
		if code != ExitOK || !strings.Contains(stdout, `"status": "succeeded"`) {
			t.Fatalf("exit %d, stdout %q, want the RunResult as JSON", code, stdout)
		}
	})
	t.Run("not a terminal", func(t *testing.T) {
		stdout, _, code := runOn(t, false, "run", cfg, "--input", "hi")
		if code != ExitOK || !strings.Contains(stdout, `"status": "succeeded"`) || !strings.Contains(stdout, `"output": "turn 1: hi"`) {
			t.Fatalf("exit %d, stdout %q, want the RunResult as JSON", code, stdout)
		}
	})
	t.Run("plan stays JSON on a terminal", func(t *testing.T) {
		stdout, _, code := runOn(t, true, "plan", cfg)
		if code != ExitOK || !strings.HasPrefix(strings.TrimSpace(stdout), "{") {
			t.Fatalf("exit %d, stdout %q, want a JSON RunPlan", code, stdout)
		}
	})
}
