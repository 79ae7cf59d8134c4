package harnessui

import (
	"os"
	"syscall"
)

// EnvTokenLedger names the test suite's token ledger: a file to which Start
// appends every token it generates, one per line, so that the suite can
// scan everything it produced (plans, handles, results, events, logs, test
// output) for token values afterwards (T1). It exists for Fabric's own test
// suite (scripts/test sets it); nothing else should set it.
//
// The variable alone cannot make a token file appear: Start only appends
// to a file that already exists, is a regular file (not a symlink) owned by
// this user and has mode 0600. Otherwise the ledger is ignored.
const EnvTokenLedger = "FABRIC_TEST_TOKEN_LEDGER"

// RecordForAudit appends token to the ledger named by EnvTokenLedger, when
// that names a usable ledger: Start records every token it generates, and
// Fabric's own services and tests record theirs (placeholders, keys) the
// same way. Failures are ignored (the ledger is a test aid; it must never
// make a start fail).
func RecordForAudit(token string) {
	path := os.Getenv(EnvTokenLedger)
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
