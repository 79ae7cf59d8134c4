package codex

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// envBinary names the variable that overrides which codex binary runs.
const envBinary = "FABRIC_CODEX_BIN"

// resolveBinary finds the codex binary: $FABRIC_CODEX_BIN, else `codex` on
// path (a PATH value). When that is the npm package's JavaScript launcher
// (node_modules/.bin/codex -> @openai/codex/bin/codex.js), the native binary
// the package vendors is returned instead, which saves a Node process per
// runtime; the launcher itself is the fallback.
func resolveBinary(getenv func(string) string, path string) (string, error) {
	if p := getenv(envBinary); p != "" {
		if !isExecutable(p) {
			return "", fmt.Errorf("%s=%s is not an executable file", envBinary, p)
		}
		return p, nil
	}
	found := ""
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		if p := filepath.Join(dir, "codex"); isExecutable(p) {
			found = p
			break
		}
	}
	if found == "" {
		return "", fmt.Errorf("codex not found on PATH (install @openai/codex, or set %s): %w", envBinary, exec.ErrNotFound)
	}
	if native := nativeFor(found); native != "" {
		return native, nil
	}
	return found, nil
}

// nativeFor returns the vendored native binary of the npm package whose
// launcher is p, or "" when p is not such a launcher (or none is found).
func nativeFor(p string) string {
	real, err := filepath.EvalSymlinks(p)
	if err != nil || !isScript(real) {
		return ""
	}
	// .../node_modules/@openai/codex/bin/codex.js
	pkg := filepath.Dir(filepath.Dir(real))
	scope := filepath.Dir(pkg)
	if filepath.Base(pkg) != "codex" || filepath.Base(scope) != "@openai" {
		return ""
	}
	nm := filepath.Dir(scope)
	pkgName, triple := platformPackage()
	if pkgName == "" {
		return ""
	}
	for _, c := range []string{
		filepath.Join(nm, "@openai", pkgName, "vendor", triple, "bin", "codex"),
		filepath.Join(pkg, "node_modules", "@openai", pkgName, "vendor", triple, "bin", "codex"),
		filepath.Join(pkg, "vendor", triple, "codex", "codex"), // layout before the per-platform packages
	} {
		if isExecutable(c) && !isScript(c) {
			return c
		}
	}
	return ""
}

// platformPackage names the npm package and target triple of the native
// binary for this machine.
func platformPackage() (pkg, triple string) {
	if runtime.GOOS != "linux" {
		return "", ""
	}
	switch runtime.GOARCH {
	case "amd64":
		return "codex-linux-x64", "x86_64-unknown-linux-musl"
	case "arm64":
		return "codex-linux-arm64", "aarch64-unknown-linux-musl"
	}
	return "", ""
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// isScript reports whether p starts with "#!" or is a .js file.
func isScript(p string) bool {
	if strings.HasSuffix(p, ".js") || strings.HasSuffix(p, ".mjs") {
		return true
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 2)
	n, _ := io.ReadFull(f, head)
	return bytes.Equal(head[:n], []byte("#!"))
}
