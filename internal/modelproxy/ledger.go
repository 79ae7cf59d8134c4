package modelproxy

import (
	"os"
	"syscall"

	"github.com/fabric-runtime/fabric/adapterkit/iface"
)

// RecordForAudit appends token to the test suite's token ledger (the file
// iface.EnvTokenLedger names), so that the suite's scan of everything the
// tests printed proves the token never leaked (T1). Grant records every
// placeholder it issues; tests record the fake provider keys they make. As
// with iface's own recording, the variable alone cannot make a file appear:
// only an existing 0600 regular file of this user, never through a
// symlink, is appended to; otherwise, and on any failure, nothing happens.
// It exists for Fabric's own test suite; real provider keys never reach it.
func RecordForAudit(token string) {
	path := os.Getenv(iface.EnvTokenLedger)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		return
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || int(sys.Uid) != os.Getuid() {
		return
	}
	_, _ = f.Write([]byte(token + "\n"))
}
