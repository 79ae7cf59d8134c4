//go:build !linux

package pkginstall

import "io/fs"

// fingerprintOf has no stat fingerprint here: Verify hashes every file.
func fingerprintOf(fs.FileInfo) (Fingerprint, bool) { return Fingerprint{}, false }
