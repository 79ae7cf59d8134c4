// Package e2e drives fabric batch as a user does: the built fabric binary,
// one process a command, killed and interrupted for real.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// bins holds the binaries TestMain built.
var bins string

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fabric-batch-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins = dir
	cmd := exec.Command("go", "build", "-o", dir, "./cmd/fabric", "./cmd/fabric-host")
	cmd.Dir = repoRoot()
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
