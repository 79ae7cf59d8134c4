package testproc

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"testing"
)

// Run runs bin with args to its end, with the test's environment plus env,
// and returns what it printed and its exit code; anything else that goes
// wrong (bin cannot start) fails t.
func Run(t testing.TB, env []string, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}
