package pi

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// envBinary names the variable that overrides which pi binary runs.
const envBinary = "FABRIC_PI_BIN"

// resolveBinary finds pi: $FABRIC_PI_BIN, else `pi` on path (a PATH value).
func resolveBinary(getenv func(string) string, path string) (string, error) {
	if p := getenv(envBinary); p != "" {
		if !isExecutable(p) {
			return "", fmt.Errorf("%s=%s is not an executable file", envBinary, p)
		}
		return p, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		if p := filepath.Join(dir, "pi"); isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("pi not found on PATH (install @earendil-works/pi-coding-agent, or set %s): %w", envBinary, exec.ErrNotFound)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}
