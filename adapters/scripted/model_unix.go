//go:build unix

package scripted

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts a shell command in its own process group and makes
// its cancellation kill the whole group, so that a timed-out command's
// children do not outlive it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
