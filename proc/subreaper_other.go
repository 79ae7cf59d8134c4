//go:build !linux

package proc

// SubreaperCommand is Linux-only (it relies on PR_SET_PDEATHSIG and
// subreapers); elsewhere it returns bin and args unwrapped and the command
// runs directly under the caller.
func SubreaperCommand(bin string, args []string, marker string) (path string, argv, env []string) {
	return bin, args, nil
}

// RunSubreaper is Linux-only; elsewhere it never runs one.
func RunSubreaper() (ran bool, exitCode int) { return false, 0 }
