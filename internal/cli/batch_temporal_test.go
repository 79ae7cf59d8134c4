package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
)

func TestRunTemporalMissingIsBackendUnavailable(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := runTemporal(context.Background(), []string{"worker"}, &bytes.Buffer{}, &bytes.Buffer{})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != ExitFailure {
		t.Fatalf("err %v, want an exit %d error", err, ExitFailure)
	}
	info := fabric.ErrorInfo(err)
	if info == nil || info.Code != CodeBackendUnavailable || !strings.Contains(info.Message, "go build -C scale/temporal") {
		t.Fatalf("info %+v, want %s with the build command", info, CodeBackendUnavailable)
	}
}

func TestRunTemporalPassesArgsAndExitCode(t *testing.T) {
	fakeTemporal(t, "echo \"args: $*\"\necho oops >&2\nexit 3\n")
	var out, errOut bytes.Buffer
	err := runTemporal(context.Background(), []string{"run", "spec.yaml", "--dir", "d"}, &out, &errOut)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 3 || ee.err != nil {
		t.Fatalf("err %#v, want a silent exit 3", err)
	}
	if out.String() != "args: run spec.yaml --dir d\n" || errOut.String() != "oops\n" {
		t.Fatalf("stdout %q stderr %q", out.String(), errOut.String())
	}
}

func TestRunTemporalForwardsCancelAsInterrupt(t *testing.T) {
	// Exits 3 on SIGINT; says it is ready first so the test cancels only
	// once the trap is set.
	fakeTemporal(t, "trap 'exit 3' INT\necho ready\nwhile :; do sleep 0.05; done\n")
	ctx, cancel := context.WithCancel(context.Background())
	out := &lockedBuffer{}
	go func() {
		for !strings.Contains(out.String(), "ready") {
			if ctx.Err() != nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	err := runTemporal(ctx, nil, out, &bytes.Buffer{})
	cancel()
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 3 {
		t.Fatalf("err %#v, want exit 3 after the forwarded SIGINT", err)
	}
}

// fakeTemporal puts a shell script named fabric-temporal first on PATH.
func fakeTemporal(t *testing.T, body string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, temporalExecutable), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}
