package harnessui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

// TestTokenLedger: Start records each generated token in the suite's
// ledger, but only in an existing 0600 regular file of this user, never
// through a symlink and never by creating one.
func TestTokenLedger(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "ledger")
	loose := filepath.Join(dir, "loose")
	link := filepath.Join(dir, "link")
	missing := filepath.Join(dir, "missing")
	for path, mode := range map[string]os.FileMode{good: 0o600, loose: 0o644} {
		if err := os.WriteFile(path, nil, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, read string
		recorded         bool
	}{
		{"0600 file", good, good, true},
		{"group-readable file", loose, loose, false},
		{"symlink to a ledger", link, good, false},
		{"missing file", missing, missing, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(EnvTokenLedger, c.path)
			before, _ := os.ReadFile(c.read)
			dash := testChild(t, "dashboard", freePort(t), envTokenEnv+"=DEMO_TOKEN")
			dash.Browser, dash.Credential, dash.TokenEnv, dash.ReadyPath = true, contract.CredentialBearer, "DEMO_TOKEN", "/auth"
			set := mustStart(t, testSpec(t, &testLog{}, dash))
			tok := set.Token("dashboard")
			if len(tok) != 64 {
				t.Fatalf("token of %d bytes", len(tok))
			}
			after, err := os.ReadFile(c.read)
			switch {
			case c.recorded && string(after) != string(before)+tok+"\n":
				t.Errorf("the ledger holds %d bytes, want the token appended", len(after))
			case !c.recorded && err == nil && strings.Contains(string(after), tok):
				t.Errorf("the token was recorded through %s", c.name)
			case !c.recorded && c.path == missing && err == nil:
				t.Errorf("a ledger was created")
			}
		})
	}
}
