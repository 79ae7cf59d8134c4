package fabric

import (
	"path/filepath"

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

// checkInstalledExec is the runtime's pre-exec check: a path inside an
// installed package (as given or after resolving symlinks) verifies that
// install.
func (c *Client) checkInstalledExec(path string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	for _, in := range c.installed {
		if in.Contains(path) || in.Contains(real) {
			return pkginstall.Verify(in)
		}
	}
	return nil
}
