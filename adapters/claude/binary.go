package claude

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// envBinary names the variable that points the adapter at a claude
// executable, bypassing the PATH search.
const envBinary = "FABRIC_CLAUDE_BIN"

// resolveBinary finds the claude executable: $FABRIC_CLAUDE_BIN, else
// `claude` on path. When the one on path belongs to the npm package
// @anthropic-ai/claude-code (its bin shim or a wrapper script), the native
// binary of the platform package installed beside it is preferred: it is
// what the shim ends up running, without a Node start in between.
func resolveBinary(lookupEnv func(string) (string, bool), path string) (string, error) {
	if p, ok := lookupEnv(envBinary); ok && p != "" {
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", envBinary, p, err)
		}
		return p, nil
	}
	found := ""
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, "claude")
		if executable(p) == nil {
			found = p
			break
		}
	}
	if found == "" {
		return "", fmt.Errorf("claude not found on PATH (install @anthropic-ai/claude-code, or set %s)", envBinary)
	}
	if native := vendoredNative(found); native != "" {
		return native, nil
	}
	return found, nil
}

// vendoredNative returns the platform package's native binary for a claude
// found inside an npm install, or "".
func vendoredNative(found string) string {
	real, err := filepath.EvalSymlinks(found)
	if err != nil {
		return ""
	}
	// .../node_modules/@anthropic-ai/claude-code/<anything>/claude[.exe]
	dir := filepath.Dir(real)
	for range 4 {
		if filepath.Base(dir) == "claude-code" && filepath.Base(filepath.Dir(dir)) == "@anthropic-ai" {
			scope := filepath.Dir(dir)
			for _, pkg := range platformPackages() {
				p := filepath.Join(scope, pkg, "claude")
				if executable(p) == nil && !isScript(p) {
					return p
				}
			}
			return ""
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

func platformPackages() []string {
	arch := runtime.GOARCH
	if arch == "amd64" {
		arch = "x64"
	}
	base := "claude-code-" + runtime.GOOS + "-" + arch
	return []string{base, base + "-musl"}
}

func executable(p string) error {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("%s is a directory", p)
	case st.Mode()&0o111 == 0:
		return fmt.Errorf("%s is not executable", p)
	}
	return nil
}

// isScript reports whether p starts with "#!".
func isScript(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 2)
	n, _ := f.Read(buf)
	return bytes.Equal(buf[:n], []byte("#!"))
}

// pathOf returns the PATH value of an environment list.
func pathOf(environ []string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(environ[i], "PATH="); ok {
			return v
		}
	}
	return ""
}
