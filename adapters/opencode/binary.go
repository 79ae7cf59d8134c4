package opencode

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// envBinary names the opencode binary to run instead of `opencode` on PATH.
const envBinary = "FABRIC_OPENCODE_BIN"

// resolveBinary finds OpenCode: $FABRIC_OPENCODE_BIN, else `opencode` on
// path (a PATH value). The npm package's bin/opencode is its native
// binary. The returned error wraps exec.ErrNotFound when it is missing.
func resolveBinary(getenv func(string) string, path string) (string, error) {
	bin := getenv(envBinary)
	if bin != "" {
		if st, err := os.Stat(bin); err != nil || !st.Mode().IsRegular() {
			return "", fmt.Errorf("%s=%s is not a file: %w", envBinary, bin, exec.ErrNotFound)
		}
	} else if bin = lookIn(path, "opencode"); bin == "" {
		return "", fmt.Errorf("opencode not found on PATH (run harnesses/install.sh and put its --print-path first, or set %s): %w", envBinary, exec.ErrNotFound)
	}
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		bin = real
	}
	return filepath.Abs(bin)
}

// lookIn returns the first dir/name of a PATH value that is an executable
// file.
func lookIn(path, name string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
