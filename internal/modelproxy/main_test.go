package modelproxy

import (
	"os"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/fabric-runtime/fabric/adapterkit/iface"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recordToken adds a credential a test made (a real key, a placeholder) to
// the suite's token ledger (iface.EnvTokenLedger), so that the suite's scan
// of all test output proves it never leaked. Like iface's own recording it
// appends only to an existing 0600 regular file of this user.
func recordToken(t testing.TB, token string) {
	t.Helper()
	path := os.Getenv(iface.EnvTokenLedger)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		return
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		t.Fatalf("token ledger: %v", err)
	}
}
