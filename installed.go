package fabric

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/fabric-runtime/fabric/contract"

	"github.com/fabric-runtime/fabric/internal/pkginstall"
)

// WithInstalledPackages makes the client use the runtime packages
// installed in dataDir (`fabric packages install`; "" is the default data
// directory: $FABRIC_DATA_HOME, else $XDG_DATA_HOME/fabric, else
// ~/.local/share/fabric). Their bin directories and pinned Node come after
// FABRIC_HARNESS_PATH on every host's PATH and are searched by doctor, so
// an installed harness is found without FABRIC_HARNESS_PATH. New only
// reads each install's install.json; every start whose host or required
// binaries lie in an install re-checks that install's files first and
// fails with artifact_digest_mismatch when one changed.
func WithInstalledPackages(dataDir string) Option {
	return func(c *Client) { c.installedDir, c.useInstalled = dataDir, true }
}

// loadInstalled reads the installs (cheap: no hashing) and adds their bin
// directories to the extra path.
func (c *Client) loadInstalled() {
	if !c.useInstalled {
		return
	}
	dir := c.installedDir
	if dir == "" {
		d, err := pkginstall.DataDir(c.getenv)
		if err != nil {
			c.logger.Debug("no data directory for installed packages", "err", err)
			return
		}
		dir = d
	}
	ins, errs := pkginstall.List(dir)
	for _, err := range errs {
		c.logger.Warn("installed package ignored", "err", err)
	}
	for _, in := range ins {
		c.extraPath = append(c.extraPath, in.BinDirs()...)
	}
	c.installed = ins
}

// selectedInstall is the install a runtime planned under sel runs from:
// the one the selection verified, found among the client's installs or,
// installed since the client was made, read now. Nil when sel is nil or
// names no install (a built-in package without artifacts).
func (c *Client) selectedInstall(sel *contract.PackageSelection) *pkginstall.Installed {
	if sel == nil || !c.useInstalled {
		return nil
	}
	same := func(in *pkginstall.Installed) bool {
		return in.Entry() == sel.Entry && strings.TrimPrefix(in.Record.PackageDigest, "fm1:") == sel.PackageDigest
	}
	for _, in := range c.installed {
		if same(in) {
			return in
		}
	}
	dir := c.installedDir
	if dir == "" {
		d, err := pkginstall.DataDir(c.getenv)
		if err != nil {
			return nil
		}
		dir = d
	}
	in, err := pkginstall.Read(filepath.Join(pkginstall.PackagesDir(dir), sel.Entry))
	if err != nil || !same(in) {
		return nil
	}
	return in
}

// execPaths are the extra path and pre-exec check of a runtime (or a
// doctor run) planned under sel. A selection that verified an install
// runs from it: its bin directories come first on the host's PATH, so the
// harness that runs is the one the catalog entry pins and not another on
// FABRIC_HARNESS_PATH, and an exec from it re-checks it. Without one they
// are the client's.
func (c *Client) execPaths(sel *contract.PackageSelection) (extra []string, check func(string) error) {
	installs := c.installed
	extra = c.extraPath
	if in := c.selectedInstall(sel); in != nil {
		extra = append(in.BinDirs(), extra...)
		if !slices.Contains(installs, in) {
			installs = append([]*pkginstall.Installed{in}, installs...)
		}
	}
	if len(installs) > 0 {
		check = checkExecIn(installs)
	}
	return extra, check
}

// checkExecIn is the runtime's pre-exec check: a path inside one of the
// installs (as given or after resolving symlinks) verifies that install.
func checkExecIn(installs []*pkginstall.Installed) func(path string) error {
	return func(path string) error {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			real = path
		}
		for _, in := range installs {
			if in.Contains(path) || in.Contains(real) {
				return pkginstall.Verify(in)
			}
		}
		return nil
	}
}
