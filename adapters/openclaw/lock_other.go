//go:build !unix

package openclaw

import "os"

// lockFile opens path; without flock there is no cross-process lock.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
