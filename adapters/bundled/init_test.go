package bundled_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// No bundled adapter and nothing of adapterkit does work at package init.
// A host binary links every bundled adapter, so each one's init runs in
// every host, whichever adapter it serves, and the kernel maps the 64 KiB
// around that code: measured with bench/idle, the adapters' inits (package
// level sync.OnceValue calls) cost every idle fabric-host 0.23 MiB of RSS.
// Declare lazy values with internal/lazy instead. The test binary links
// every bundled adapter; re-executed with GODEBUG=inittrace=1, the Go
// runtime lists each package whose init ran.
func TestBundledAdaptersDoNoWorkAtInit(t *testing.T) {
	if os.Getenv("FABRIC_TEST_INITTRACE") != "" {
		return // the re-executed binary: its inits have run
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBundledAdaptersDoNoWorkAtInit$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "FABRIC_TEST_INITTRACE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("re-executing the test binary: %v\n%s", err, out)
	}
	const module = "github.com/fabric-runtime/fabric/"
	traced := 0
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "init" {
			continue
		}
		traced++
		pkg, ok := strings.CutPrefix(f[1], module)
		if !ok || strings.HasSuffix(pkg, "_test") {
			continue
		}
		if strings.HasPrefix(pkg, "adapters/") || pkg == "adapterkit" || strings.HasPrefix(pkg, "adapterkit/") || pkg == "internal/lazy" {
			t.Errorf("%s does work at init: %s", pkg, strings.TrimSpace(line))
		}
	}
	if traced == 0 {
		t.Fatalf("no init trace in the output (GODEBUG=inittrace=1):\n%s", out)
	}
}
