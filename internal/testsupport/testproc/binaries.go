package testproc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
)

// RepoRoot is the module's root directory in the source tree.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0) // internal/testsupport/testproc/binaries.go
	return filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(file))))
}

// MainWithBinaries is a TestMain for tests that drive Fabric's binaries as
// a user does, each command its own process: it builds pkgs (module
// paths such as "./cmd/fabric") into a temporary directory, sets *bins to
// it, runs the tests, removes the directory and exits with their code.
func MainWithBinaries(m *testing.M, bins *string, pkgs ...string) {
	dir, err := os.MkdirTemp("", "fabric-bins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bins = dir
	cmd := exec.Command("go", append([]string{"build", "-o", dir}, pkgs...)...)
	cmd.Dir = RepoRoot()
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the binaries:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// ExecutableAs puts the running test binary into a fresh directory under
// each of names (a hard link, or a copy across file systems) and returns
// the directory: a TestMain that dispatches on its program name (as
// testscript.Main does) then runs as that program, found beside its
// companions.
func ExecutableAs(t testing.TB, names ...string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range names {
		dst := filepath.Join(dir, name)
		if os.Link(self, dst) == nil {
			continue
		}
		b, err := os.ReadFile(self)
		if err == nil {
			err = os.WriteFile(dst, b, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ServesAs starts cmd, a command that replaces itself (same pid) with the
// program named want and serves until SIGTERM. serving reads from cmd's
// stdout what it prints once it serves and returns the pid it reports;
// ServesAs checks that this is cmd's process and that it runs want, then
// sends SIGTERM and fails t unless cmd exits 0.
func ServesAs(t testing.TB, cmd *exec.Cmd, want string, serving func(stdout io.Reader) (pid int, err error)) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid, err := serving(stdout)
	if err != nil {
		t.Fatalf("%s: nothing served: %v; stderr: %s", cmd.Path, err, stderr.String())
	}
	if pid != cmd.Process.Pid {
		t.Fatalf("%s serves as pid %d, want the process started, %d", cmd.Path, pid, cmd.Process.Pid)
	}
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	if err != nil || filepath.Base(exe) != want {
		t.Errorf("the serving process runs %q (%v), want %s", exe, err, want)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s: %v; stderr: %s", cmd.Path, err, stderr.String())
	}
}
