// Package companion finds and runs the programs that ship beside one of
// Fabric's binaries: fabric-serve beside fabric, fabric-agent-ctl-serve
// beside fabric-agent-ctl, fabric-temporal beside fabric. A command whose
// work needs what the short-lived commands should not link (Go runs every
// linked package's init in every process) replaces itself with its
// companion, found beside the running executable, else on PATH.
package companion

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// Find returns the path of the program name: beside the running
// executable, else on PATH. Its error names both places.
func Find(name string) (string, error) {
	beside := "(this executable's directory is unknown)"
	if self, err := os.Executable(); err == nil {
		beside = filepath.Join(filepath.Dir(self), name)
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return beside, nil
		}
	}
	path, err := exec.LookPath(name)
	if err == nil {
		return path, nil
	}
	if !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s is not beside this executable (%s), and on PATH: %w", name, beside, err)
	}
	return "", fmt.Errorf("%s is neither beside this executable (%s) nor on PATH", name, beside)
}

// Exec replaces the process with the program name (Find) run with args:
// the same pid, environment, open files and signal dispositions. It
// returns only when that fails.
func Exec(name string, args []string) error {
	path, err := Find(name)
	if err != nil {
		return err
	}
	err = syscall.Exec(path, append([]string{path}, args...), os.Environ())
	return fmt.Errorf("exec %s: %w", path, err)
}
