package bundled

import (
	"fmt"
	"io/fs"
	"path"

	"github.com/fabric-runtime/fabric/adapters/acp"
	"github.com/fabric-runtime/fabric/adapters/claude"
	"github.com/fabric-runtime/fabric/adapters/codex"
	"github.com/fabric-runtime/fabric/adapters/nodelib"
	"github.com/fabric-runtime/fabric/adapters/openclaw"
	"github.com/fabric-runtime/fabric/adapters/opencode"
	"github.com/fabric-runtime/fabric/adapters/pi"
	"github.com/fabric-runtime/fabric/adapters/scripted"
)

// Packages returns every bundled runtime package by package id (the
// adapter id), each an fs.FS rooted at its package directory.
func Packages() (map[string]fs.FS, error) {
	out := map[string]fs.FS{}
	for _, tree := range []fs.FS{
		scripted.Packages(), claude.Packages(), codex.Packages(), openclaw.Packages(),
		opencode.Packages(), pi.Packages(), acp.Packages(), nodelib.Packages(),
	} {
		dirs, err := fs.ReadDir(tree, "packages")
		if err != nil {
			return nil, fmt.Errorf("bundled packages: %w", err)
		}
		for _, d := range dirs {
			if !d.IsDir() {
				continue
			}
			if _, dup := out[d.Name()]; dup {
				return nil, fmt.Errorf("bundled packages: %s is bundled twice", d.Name())
			}
			sub, err := fs.Sub(tree, path.Join("packages", d.Name()))
			if err != nil {
				return nil, fmt.Errorf("bundled packages: %w", err)
			}
			out[d.Name()] = sub
		}
	}
	return out, nil
}
