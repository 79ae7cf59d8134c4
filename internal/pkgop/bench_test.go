package pkgop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// stateDir1000 is a state dir of 1,000 files of 1 KiB in 10 directories.
func stateDir1000(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	body := make([]byte, 1024)
	for d := range 10 {
		dir := filepath.Join(root, fmt.Sprintf("d%02d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.json", f)), body, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return root
}

// The detection cost of one operation: the before and after manifests of
// a 1,000-file state dir and their diff.
func BenchmarkBeforeAfter1000Files(b *testing.B) {
	roots := []string{stateDir1000(b)}
	cpu := cpuTime(b)
	for b.Loop() {
		before, err := Snapshot(roots)
		if err != nil {
			b.Fatal(err)
		}
		after, err := Snapshot(roots)
		if err != nil {
			b.Fatal(err)
		}
		if len(treemanifest.Diff(before, after)) != 0 {
			b.Fatal("changed")
		}
	}
	b.ReportMetric(float64(cpuTime(b)-cpu)/1e6/float64(b.N), "cpu-ms/op")
}

// cpuTime is this process's user+system CPU time in ns: on a shared
// machine the wall time of a syscall-bound loop says more about the
// neighbours than about the code.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// A whole read operation (sh -c true) over the same state dir, with and
// without Landlock, and as root also overlaid: the manifests plus the
// re-exec'd sandbox (plus the mount namespace and the upper-dir scan).
func BenchmarkRunRead1000Files(b *testing.B) {
	for _, mode := range []string{"detection-only", "landlock", "landlock+overlay"} {
		landlock, overlay := mode != "detection-only", mode == "landlock+overlay"
		b.Run(mode, func(b *testing.B) {
			if landlock && landlockABI() < 1 {
				b.Skip("no Landlock on this kernel")
			}
			if overlay && !OverlayAvailable() {
				b.Skip("overlays need root with CAP_SYS_ADMIN")
			}
			home := stateDir1000(b)
			env := Env{Home: home, StatePaths: map[string]string{"state": home}, Environ: []string{"PATH=" + os.Getenv("PATH")}}
			op := contract.PackageOperation{ID: "noop", Mode: contract.OperationRead, Argv: []string{"sh", "-c", "true"}}
			for b.Loop() {
				if _, err := Run(context.Background(), op, env, Options{NoLandlock: !landlock, AllowUnenforcedRead: true, Overlay: overlay}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
