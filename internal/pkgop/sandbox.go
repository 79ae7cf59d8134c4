package pkgop

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
)

// envSandbox marks a process started as the sandbox of an operation; its
// value is the sandboxSpec as JSON.
const envSandbox = "FABRIC_PKGOP_SANDBOX"

// sandboxFailure starts the sandbox's own error output, so that Run tells
// a sandbox that could not be set up from an operation that failed.
const sandboxFailure = "fabric: package operation sandbox: "

// sandboxApplied is what the sandbox writes on fd 3 (then closes it) once
// its overlays are mounted and Landlock is in force, just before it execs
// the operation.
const sandboxApplied = "landlock applied\n"

// sandboxSpec is what the sandbox child applies before it execs Argv.
type sandboxSpec struct {
	Path string   `json:"path"` // Argv[0] as found on the operation's PATH
	Argv []string `json:"argv"`
	// Writable are the paths write rights are granted beneath: the
	// declared writes and the private temp dir. A missing one is granted
	// at its nearest existing ancestor (detection still holds it to the
	// path itself).
	Writable []string `json:"writable"`
	// Landlock says to apply Landlock (the kernel has it and the caller
	// did not turn it off).
	Landlock bool `json:"landlock"`
	// Overlays are mounted first, in the child's own mount namespace;
	// Dir is then made the working directory again.
	Overlays []overlayMount `json:"overlays,omitempty"`
	Dir      string         `json:"dir,omitempty"`
}

// MaybeServeSandbox makes this process the sandbox of a package operation
// when it was started as one (Run re-executes the current binary), and
// else returns at once with served false: call it first thing in main
// (and in TestMain of tests that run operations), as bundled.ServeHost is.
// When served it never returns on success (the process becomes the
// operation); on failure it returns the exit code to exit with.
func MaybeServeSandbox() (served bool, exitCode int) {
	raw, ok := os.LookupEnv(envSandbox)
	if !ok {
		return false, 0
	}
	var spec sandboxSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil || len(spec.Argv) == 0 || spec.Path == "" {
		fmt.Fprintf(os.Stderr, "%sbad %s: %v\n", sandboxFailure, envSandbox, err)
		return true, 126
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envSandbox+"=") {
			env = append(env, kv)
		}
	}
	err := serveSandbox(spec, env)
	fmt.Fprintf(os.Stderr, "%s%v\n", sandboxFailure, err)
	return true, 126
}

// serveSandbox mounts the overlays, applies Landlock, tells the parent on
// fd 3, and execs the operation; it returns only on failure. Landlock
// comes after the mounts: a Landlock domain forbids mounting, which also
// keeps the operation from unmounting an overlay.
func serveSandbox(spec sandboxSpec, env []string) error {
	// Landlock and no_new_privs bind the calling thread; exec from it.
	runtime.LockOSThread()
	if len(spec.Overlays) > 0 {
		if err := mountOverlays(spec.Overlays, spec.Dir); err != nil {
			return err
		}
	}
	if spec.Landlock {
		if err := restrict(spec); err != nil {
			return err
		}
	}
	if _, err := syscall.Write(3, []byte(sandboxApplied)); err != nil {
		return fmt.Errorf("tell the parent the sandbox is applied: %w", err)
	}
	syscall.Close(3)
	if err := syscall.Exec(spec.Path, spec.Argv, env); err != nil {
		return fmt.Errorf("exec %s: %w", spec.Path, err)
	}
	return nil
}

// LandlockABI is the Landlock ABI version of this kernel, 0 without
// Landlock (and off Linux): the N of Result.Enforcement "landlock-abi-N"
// for an operation run here now.
func LandlockABI() int { return landlockABI() }
