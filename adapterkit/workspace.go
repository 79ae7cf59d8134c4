package adapterkit

import (
	"fmt"
	"os"
	"path/filepath"
)

// Workspace is where a harness works: the environment's workspace, else
// the host's working directory (which the core sets to the workspace), as
// an absolute path. It fails when that is not a directory.
func Workspace(in StartInput) (string, error) {
	dir := ""
	if ws := in.RuntimeContext.Environment.Workspace; ws != nil {
		dir = *ws
	}
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("workspace: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory", abs)
	}
	return abs, nil
}
