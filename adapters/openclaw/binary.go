package openclaw

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Variables that override which programs run.
const (
	// envBinary names OpenClaw's entry point (the npm launcher
	// node_modules/.bin/openclaw or the package's openclaw.mjs).
	envBinary = "FABRIC_OPENCLAW_BIN"
	// envNode names the Node.js binary that runs it.
	envNode = "FABRIC_OPENCLAW_NODE"
)

// binary is how the Gateway is run: Node, then OpenClaw's entry point.
type binary struct {
	Node  string // absolute path of a Node >= 24.16
	Entry string // absolute path of openclaw.mjs (or the launcher)
	// NodeVersion is what `node --version` printed ("v24.22.3").
	NodeVersion string
}

// resolveBinary finds OpenClaw ($FABRIC_OPENCLAW_BIN, else `openclaw` on
// path, a PATH value) and a Node.js it supports ($FABRIC_OPENCLAW_NODE,
// else the first `node` on path): OpenClaw needs Node >= 24.16 (< 25) or
// >= 26.1. The returned error wraps exec.ErrNotFound when a program is
// missing and errNodeUnsupported when no suitable Node is found.
func resolveBinary(ctx context.Context, getenv func(string) string, path string) (binary, error) {
	var b binary
	entry := getenv(envBinary)
	if entry != "" {
		if !isFile(entry) {
			return b, fmt.Errorf("%s=%s is not a file: %w", envBinary, entry, exec.ErrNotFound)
		}
	} else if entry = lookIn(path, "openclaw"); entry == "" {
		return b, fmt.Errorf("openclaw not found on PATH (run harnesses/install.sh and put its --print-path first, or set %s): %w", envBinary, exec.ErrNotFound)
	}
	if real, err := filepath.EvalSymlinks(entry); err == nil {
		entry = real
	}
	b.Entry, _ = filepath.Abs(entry)

	var nodes []string
	if n := getenv(envNode); n != "" {
		nodes = []string{n}
	} else {
		for _, dir := range filepath.SplitList(path) {
			if p := lookIn(dir, "node"); p != "" {
				nodes = append(nodes, p)
			}
		}
	}
	if len(nodes) == 0 {
		return b, fmt.Errorf("node not found on PATH (OpenClaw needs Node >= 24.16; harnesses/ pins one): %w", exec.ErrNotFound)
	}
	var seen []string
	for _, n := range nodes {
		v, err := nodeVersion(ctx, n)
		if err != nil {
			seen = append(seen, n+": "+err.Error())
			continue
		}
		if nodeSupported(v) {
			b.Node, b.NodeVersion = n, v
			return b, nil
		}
		seen = append(seen, n+" is "+v)
		if getenv(envNode) != "" {
			break
		}
	}
	return b, fmt.Errorf("%w: OpenClaw needs Node >= 24.16 (< 25) or >= 26.1; found %s", errNodeUnsupported, strings.Join(seen, "; "))
}

// errNodeUnsupported: no Node.js that OpenClaw supports was found.
var errNodeUnsupported = errors.New("no supported Node.js")

// nodeSupported reports whether a `node --version` string is a version
// OpenClaw runs on: >= 24.16.0 < 25, or >= 26.1.0.
func nodeSupported(v string) bool {
	parts := strings.SplitN(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	switch {
	case major == 24:
		return minor >= 16
	case major == 26:
		return minor >= 1
	case major > 26:
		return true
	}
	return false
}

func nodeVersion(ctx context.Context, node string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// lookIn returns dir/name when it is an executable file; with a list of
// directories (a PATH value) the first match.
func lookIn(path, name string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			abs, err := filepath.Abs(p)
			if err != nil {
				return p
			}
			return abs
		}
	}
	return ""
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
