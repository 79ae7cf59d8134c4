//go:build !linux

package pkgop

import "errors"

func landlockABI() int { return 0 }

func restrict(sandboxSpec) error {
	return errors.New("Landlock is only available on Linux")
}
