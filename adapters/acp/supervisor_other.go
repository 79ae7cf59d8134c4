//go:build !linux

package acp

// Supervise is Linux-only (it relies on PR_SET_PDEATHSIG and subreapers);
// elsewhere the agent runs directly under the host.
func Supervise() (served bool, exitCode int) { return false, 0 }

func supervisorCommand(bin string, args []string) (string, []string, []string) {
	return bin, args, nil
}
