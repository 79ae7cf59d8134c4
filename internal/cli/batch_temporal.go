package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/companion"
)

// CodeBackendUnavailable: the batch backend asked for is not installed
// (for --backend temporal, the fabric-temporal executable).
const CodeBackendUnavailable = "backend_unavailable"

// temporalExecutable is the Temporal backend's command, built from the
// nested module scale/temporal so this module never links the SDK.
const temporalExecutable = "fabric-temporal"

// findTemporal returns fabric-temporal beside the running fabric, else
// the one on PATH.
func findTemporal() (string, error) {
	if p, err := companion.Find(temporalExecutable); err == nil {
		return p, nil
	}
	return "", &fabric.ConfigError{Failure: contract.Failure{
		Stage: contract.StageConfig,
		Code:  CodeBackendUnavailable,
		Message: "the temporal batch backend needs the " + temporalExecutable + " executable beside fabric or on PATH; " +
			"build it from a Fabric checkout with: go build -C scale/temporal -o \"$(dirname \"$(command -v fabric)\")/" + temporalExecutable + "\" ./cmd/" + temporalExecutable,
	}}
}

// runTemporal runs fabric-temporal with args, passing the standard
// streams and forwarding SIGINT and SIGTERM (the child runs in its own
// process group, so a terminal's Ctrl-C reaches it once, through us). Its
// exit code becomes the command's; a missing executable is a
// backend_unavailable error.
func runTemporal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	bin, err := findTemporal()
	if err != nil {
		return &exitError{code: ExitFailure, err: err}
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return &exitError{code: ExitFailure, err: err}
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	forwarded := 0
	forward := func(s os.Signal) {
		forwarded++
		_ = cmd.Process.Signal(s)
	}
	done := ctx.Done()
	for {
		select {
		case s := <-sigs:
			forward(s)
			continue
		case <-done:
			done = nil
			// A signal cancels ctx too; forward it once, not twice.
			if forwarded == 0 {
				select {
				case s := <-sigs:
					forward(s)
				case <-time.After(200 * time.Millisecond):
					forward(os.Interrupt)
				}
			}
			continue
		case err = <-waited:
		}
		break
	}
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code := ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		return silentExit(code)
	}
	return &exitError{code: ExitFailure, err: err}
}
