package pkginstall

import (
	"io/fs"
	"syscall"
)

// fingerprintOf is the stat data that changes whenever a file's content
// does: inode, size, and the modification and change times (a change
// time cannot be set back without root).
func fingerprintOf(info fs.FileInfo) (Fingerprint, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return Fingerprint{}, false
	}
	return Fingerprint{
		Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size,
		MtimeNS: st.Mtim.Nano(), CtimeNS: st.Ctim.Nano(),
	}, true
}
