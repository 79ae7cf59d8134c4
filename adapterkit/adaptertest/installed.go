package adaptertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Installed returns a check that every program in names is an executable
// file in a directory of path (a PATH value), for a live test to decide
// whether the harness it drives is there. The check's error wraps
// exec.ErrNotFound and names the first program missing.
func Installed(names ...string) func(path string) error {
	return func(path string) error {
		for _, name := range names {
			if !onPath(path, name) {
				return fmt.Errorf("%s not found in %s: %w", name, path, exec.ErrNotFound)
			}
		}
		return nil
	}
}

func onPath(path, name string) bool {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}
