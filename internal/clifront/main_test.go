package clifront_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fabric-runtime/fabric/internal/cli"
	"github.com/fabric-runtime/fabric/internal/clifront"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

// TestMain doubles as fabric and fabric-core, by program name.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fabric":            func() { os.Exit(clifront.Main()) },
		clifront.CoreBinary: func() { os.Exit(cli.Main()) },
	})
}

// fabric, a process of its own, runs a command in fabric-core beside it:
// output, errors and exit code are fabric-core's, usage errors in
// arguments included.
func TestRunsInFabricCore(t *testing.T) {
	dir := testproc.ExecutableAs(t, "fabric", clifront.CoreBinary)
	noPath := []string{"PATH=" + t.TempDir()}
	for _, args := range [][]string{
		{"adapters", "list", "-o", "jsonl"},
		{"plan", filepath.Join(t.TempDir(), "missing.yaml")},
		{"plan"},
		{"check", "--live", "--ready", "x"},
		{"-o", "yaml", "adapters", "list"},
	} {
		wantOut, wantErr, wantCode := testproc.Run(t, noPath, filepath.Join(dir, clifront.CoreBinary), args...)
		out, errOut, code := testproc.Run(t, noPath, filepath.Join(dir, "fabric"), args...)
		if out != wantOut || errOut != wantErr || code != wantCode {
			t.Errorf("fabric %q: exit %d, stdout %q, stderr %q\nfabric-core: exit %d, stdout %q, stderr %q", args, code, out, errOut, wantCode, wantOut, wantErr)
		}
		if wantOut == "" && wantErr == "" {
			t.Errorf("fabric-core %q printed nothing", args)
		}
	}
}

// Without fabric-core beside it or on PATH, fabric answers help itself,
// and a command that runs is a usage exit with one line naming both
// places.
func TestWithoutFabricCore(t *testing.T) {
	fabric := filepath.Join(testproc.ExecutableAs(t, "fabric"), "fabric")
	noPath := []string{"PATH=" + t.TempDir()}
	out, errOut, code := testproc.Run(t, noPath, fabric, "run", "--help")
	if code != 0 || !strings.Contains(out, "fabric run CONFIG") || errOut != "" {
		t.Errorf("fabric run --help: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = testproc.Run(t, noPath, fabric, "adapters", "list")
	beside := filepath.Join(filepath.Dir(fabric), clifront.CoreBinary)
	if code != cli.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 ||
		!strings.HasPrefix(errOut, "fabric: adapters list: ") || !strings.Contains(errOut, beside) || !strings.Contains(errOut, "nor on PATH") {
		t.Errorf("fabric adapters list without fabric-core: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
