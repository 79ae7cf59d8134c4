package pkgop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

func requireOverlay(t *testing.T) {
	t.Helper()
	if !OverlayAvailable() {
		livetest.Missing(t, "root with CAP_SYS_ADMIN (overlay mounts in a private mount namespace)", "run the test as root, as CI does", nil)
	}
}

// As root a read operation can change what neither Landlock (it does not
// govern chown, timestamps or extended attributes) nor the manifest (it
// records no owner, time or xattr) sees. Without the overlay such an
// operation passes; with it, what it left in the upper directory fails it
// with the diff, and the real file is untouched.
func TestOverlayCatchesWhatTheManifestCannot(t *testing.T) {
	requireOverlay(t)
	cases := []struct {
		name, script string
	}{
		{"chown", "chown 4242:4242 .app/config/config.json"},
		{"timestamps", "touch -m -d 2001-02-03T04:05:06 .app/config/config.json"},
		{"xattr", "setfattr -n user.fabric -v x .app/config/config.json 2>/dev/null || python3 -c 'import os; os.setxattr(\".app/config/config.json\", \"user.fabric\", b\"x\")'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := fixture(t)
			file := filepath.Join(env.StatePaths["config"], "config.json")
			st0 := stat(t, file)
			op := contract.PackageOperation{ID: "show", Mode: contract.OperationRead, Argv: sh("cat .app/config/config.json; " + tc.script)}

			// The gap: detection alone passes it, and the file changed.
			res, err := Run(context.Background(), op, env, Options{AllowUnenforcedRead: true})
			if err != nil || res.Tainted {
				t.Fatalf("without the overlay: %v tainted %v (the gap this test shows is closed elsewhere?)", err, res != nil && res.Tainted)
			}
			if st1 := stat(t, file); st1 == st0 {
				t.Fatalf("the %s did not happen; the test shows nothing", tc.name)
			}

			env = fixture(t)
			file = filepath.Join(env.StatePaths["config"], "config.json")
			st0 = stat(t, file)
			res, err = Run(context.Background(), op, env, Options{AllowUnenforcedRead: true, Overlay: true})
			if got := code(err); got != CodeMutatedState {
				t.Fatalf("code %q (%v), want %s", got, err, CodeMutatedState)
			}
			if !res.Tainted || len(res.Violations) != 1 || res.Violations[0].Kind != "modified" || res.Violations[0].Path != filepath.ToSlash(file) {
				t.Fatalf("tainted %v violations %+v", res.Tainted, res.Violations)
			}
			if res.Stdout != "" {
				t.Errorf("output kept: %q", res.Stdout)
			}
			if st1 := stat(t, file); st1 != st0 {
				t.Errorf("the real file changed under the overlay: %+v -> %+v", st0, st1)
			}
			if len(res.Overlay) != 2 { // the home (holding the state paths) and the package dir
				t.Errorf("overlaid %v", res.Overlay)
			}
		})
	}
}

// Under the overlay, writes without Landlock land in the upper directory:
// each kind of change is reported as the manifest would, and the real
// state never changes.
func TestOverlayWithoutLandlock(t *testing.T) {
	requireOverlay(t)
	cases := []struct{ script, change string }{
		{"echo x >> .app/config/config.json", "modified /config/config.json"},
		{"echo x > .app/session/new.json", "added /session/new.json"},
		{"rm .app/config/b.json", "removed /config/b.json"},
		{"ln -sfn b.json .app/config/current", "modified /config/current"},
		{"mkdir -p .app/cache/deep", "added /cache"},
	}
	for _, tc := range cases {
		t.Run(tc.change, func(t *testing.T) {
			env := fixture(t)
			before, err := Snapshot(watchRoots(env))
			if err != nil {
				t.Fatal(err)
			}
			op := contract.PackageOperation{ID: "show", Mode: contract.OperationRead, Argv: sh(tc.script)}
			res, err := Run(context.Background(), op, env, Options{NoLandlock: true, AllowUnenforcedRead: true, Overlay: true})
			if got := code(err); got != CodeMutatedState {
				t.Fatalf("code %q (%v)", got, err)
			}
			var got []string
			for _, c := range res.Violations {
				got = append(got, c.Kind+" "+strings.TrimPrefix(c.Path, filepath.ToSlash(filepath.Join(env.Home, ".app"))))
			}
			if len(got) == 0 || got[0] != tc.change {
				t.Errorf("violations %v, want first %q", got, tc.change)
			}
			if res.Before != res.After || res.Before != before.Digest() {
				t.Errorf("the real state changed: %s -> %s", res.Before, res.After)
			}
		})
	}
}

// A read operation that only reads passes under the overlay with
// Landlock; a configure operation is never overlaid (its writes are
// real).
func TestOverlayCleanAndConfigure(t *testing.T) {
	requireOverlay(t)
	requireLandlock(t)
	env := fixture(t)
	op := contract.PackageOperation{ID: "show", Mode: contract.OperationRead, Argv: sh("cat .app/config/config.json; echo s > \"$TMPDIR/scratch\"")}
	res, err := Run(context.Background(), op, env, Options{Overlay: true})
	if err != nil || res.Stdout != `{"model":"m"}` || len(res.Overlay) == 0 {
		t.Fatalf("%v %+v", err, res)
	}
	set := contract.PackageOperation{ID: "set", Mode: contract.OperationConfigure, Writes: []string{"config"}, Argv: sh("echo '{}' > .app/config/config.json")}
	if res, err = Run(context.Background(), set, env, Options{Overlay: true}); err != nil || len(res.Overlay) != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	if b, _ := os.ReadFile(filepath.Join(env.StatePaths["config"], "config.json")); string(b) != "{}\n" {
		t.Errorf("the configure write did not reach the state: %q", b)
	}
}

type fileStat struct {
	uid, gid uint32
	mtime    int64
	xattr    int
}

func stat(t *testing.T, p string) fileStat {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	n, _ := syscall.Listxattr(p, make([]byte, 1024))
	return fileStat{uid: st.Uid, gid: st.Gid, mtime: st.Mtim.Nano(), xattr: n}
}
