package testproc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
