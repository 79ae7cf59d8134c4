package deptest

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// adapterBad is what the production code of an adapter (a package under
// adapters/) must not import itself: the host protocol is adapterkit's,
// which exposes what an adapter needs of it.
var adapterBad = map[string]string{
	Module + "/internal/wire":      "the host protocol's framing and JSON-RPC (adapterkit speaks it)",
	Module + "/internal/hostproto": "the host protocol's messages and variables (adapterkit exposes what adapters need)",
}

// TestAdaptersImportOnlyTheKit fails on a package under adapters/ whose
// non-test files import a package of adapterBad directly (adapterkit links
// them, so a transitive walk would find them in every adapter).
func TestAdaptersImportOnlyTheKit(t *testing.T) {
	cmd := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", Module+"/adapters/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s/adapters/...: %v\n%s", Module, err, stderr.Bytes())
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		n++
		for _, imp := range fields[1:] {
			if why, ok := adapterBad[imp]; ok {
				t.Errorf("%s imports %s (%s): use adapterkit", fields[0], imp, why)
			}
		}
	}
	if n < 8 {
		t.Fatalf("go list found %d packages under adapters/, want the bundled adapters:\n%s", n, out)
	}
}
