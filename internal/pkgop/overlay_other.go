//go:build !linux

package pkgop

import (
	"errors"
	"os/exec"
)

func overlayAvailable() bool { return false }

func isWhiteout(string) bool { return false }

func unshareMounts(*exec.Cmd) {}

func mountOverlays([]overlayMount, string) error {
	return errors.New("overlays are only available on Linux")
}

func copyRootAttrs(string, string) error { return errors.New("overlays are only available on Linux") }

func rootChanged(string, string, bool) (bool, error) { return false, nil }
