package pkginstall

import (
	"errors"
	"path/filepath"
)

// Environment variables that place the data directory.
const (
	EnvDataHome    = "FABRIC_DATA_HOME"
	EnvXDGDataHome = "XDG_DATA_HOME"
)

// DataDir is Fabric's data directory: $FABRIC_DATA_HOME, else
// $XDG_DATA_HOME/fabric, else ~/.local/share/fabric. Relative values are
// ignored, as the XDG specification says.
func DataDir(getenv func(string) string) (string, error) {
	if d := getenv(EnvDataHome); d != "" && filepath.IsAbs(d) {
		return filepath.Clean(d), nil
	}
	if d := getenv(EnvXDGDataHome); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "fabric"), nil
	}
	home := getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", errors.New("no data directory: set FABRIC_DATA_HOME, XDG_DATA_HOME or HOME")
	}
	return filepath.Join(home, ".local", "share", "fabric"), nil
}

// PackagesDir is where installs live in a data directory.
func PackagesDir(dataDir string) string { return filepath.Join(dataDir, "packages") }
