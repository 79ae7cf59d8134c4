package pkgop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/procfs"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

func TestMain(m *testing.M) {
	if served, code := MaybeServeSandbox(); served {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// fixture is a runtime home with two state paths (config, session), a
// file outside them, and a package dir, all watched.
func fixture(t *testing.T) Env {
	t.Helper()
	home, pkg := t.TempDir(), t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	cfg, sess := filepath.Join(home, ".app", "config"), filepath.Join(home, ".app", "session")
	must(os.MkdirAll(cfg, 0o755))
	must(os.MkdirAll(sess, 0o755))
	must(os.WriteFile(filepath.Join(cfg, "config.json"), []byte(`{"model":"m"}`), 0o644))
	must(os.WriteFile(filepath.Join(cfg, "b.json"), []byte(`{}`), 0o644))
	must(os.Symlink("config.json", filepath.Join(cfg, "current")))
	must(os.WriteFile(filepath.Join(home, "notes.txt"), []byte("n"), 0o644))
	must(os.WriteFile(filepath.Join(pkg, contract.PackageDescriptorFile), []byte(`{}`), 0o644))
	return Env{
		Home:       home,
		StatePaths: map[string]string{"config": cfg, "session": sess, "cache": filepath.Join(home, ".app", "cache")},
		Watch:      []string{home, pkg},
		Environ:    []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"},
	}
}

func sh(script string) []string { return []string{"sh", "-c", script} }

func code(err error) string {
	var re *contract.RuntimeError
	if errors.As(err, &re) {
		return re.Code
	}
	if err != nil {
		return "untyped: " + err.Error()
	}
	return ""
}

func requireLandlock(t *testing.T) int {
	t.Helper()
	abi := landlockABI()
	if abi < 1 {
		livetest.Missing(t, "Landlock (landlock_create_ruleset version >= 1)", "a Linux kernel >= 5.13 with CONFIG_SECURITY_LANDLOCK=y and landlock in lsm=", nil)
	}
	return abi
}

// A read operation that changes a state path in any way fails closed with
// the diff, under Landlock (where the write itself is denied in the child,
// except chmod, which Landlock does not govern) and without it.
func TestReadOperationThatMutates(t *testing.T) {
	cases := []struct {
		name   string
		script string
		change string // the violation detection reports without Landlock
		denied bool   // Landlock denies it in the child
	}{
		{"write", "echo x >> .app/config/config.json", "modified /config/config.json", true},
		{"create", "echo x > .app/session/new.json", "added /session/new.json", true},
		{"delete", "rm .app/config/b.json", "removed /config/b.json", true},
		{"chmod", "chmod 600 .app/config/config.json", "modified /config/config.json", false},
		{"re-point symlink", "ln -sfn b.json .app/config/current", "modified /config/current", true},
		{"create a missing state path", "mkdir .app/cache", "added /cache", true},
	}
	for _, enforced := range []bool{true, false} {
		mode := map[bool]string{true: "landlock", false: "detection only"}[enforced]
		for _, tc := range cases {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				if enforced {
					requireLandlock(t)
				}
				env := fixture(t)
				op := contract.PackageOperation{ID: "show", Mode: contract.OperationRead, Argv: sh("cat .app/config/config.json; " + tc.script)}
				res, err := Run(context.Background(), op, env, Options{NoLandlock: !enforced, AllowUnenforcedRead: !enforced})
				if got := code(err); got != CodeMutatedState {
					t.Fatalf("code = %q (%v), want %s", got, err, CodeMutatedState)
				}
				if res == nil {
					t.Fatal("no result")
				}
				if res.Stdout != "" || res.Stderr != "" {
					t.Errorf("the output of a mutating operation was kept: %q %q", res.Stdout, res.Stderr)
				}
				if enforced && tc.denied {
					// The child's write failed with EACCES, nothing changed.
					if res.ExitCode == 0 || !res.Attempt || len(res.Changes) != 0 || res.Before != res.After {
						t.Errorf("denied write: exit %d attempt %v changes %v", res.ExitCode, res.Attempt, res.Changes)
					}
					if !strings.Contains(strings.ToLower(err.Error()), "permission denied") {
						t.Errorf("the error does not carry the child's EACCES: %v", err)
					}
					if res.Tainted {
						t.Error("tainted although nothing changed")
					}
					return
				}
				if !res.Tainted || len(res.Violations) != 1 {
					t.Fatalf("tainted %v, violations %v", res.Tainted, res.Violations)
				}
				got := res.Violations[0].Kind + " " + strings.TrimPrefix(res.Violations[0].Path, filepath.ToSlash(filepath.Join(env.Home, ".app")))
				if got != tc.change {
					t.Errorf("violation %q, want %q", got, tc.change)
				}
				if want := map[bool]string{true: "landlock-abi-", false: EnforcementNone}[enforced]; !strings.HasPrefix(res.Enforcement, want) {
					t.Errorf("enforcement %q, want %s*", res.Enforcement, want)
				}
				if res.Before == res.After {
					t.Error("digests equal after a change")
				}
			})
		}
	}
}

func TestOperations(t *testing.T) {
	cases := []struct {
		name     string
		op       contract.PackageOperation
		opts     Options
		landlock bool
		code     string
		stdout   string
		check    func(t *testing.T, env Env, res *Result)
	}{
		{
			name: "read that only reads", landlock: true,
			op:     contract.PackageOperation{ID: "show", Mode: "read", Argv: sh("cat .app/config/config.json; ls .app/config >/dev/null; echo tmp > \"$TMPDIR/scratch\"")},
			stdout: `{"model":"m"}`,
		},
		{
			name: "configure inside its writes", landlock: true,
			op:     contract.PackageOperation{ID: "set", Mode: "configure", Writes: []string{"config"}, Argv: sh("echo '{}' > .app/config/config.json && mkdir .app/config/sub && echo ok")},
			stdout: "ok\n",
			check: func(t *testing.T, env Env, res *Result) {
				if len(res.Changes) != 2 || len(res.Violations) != 0 || res.Tainted {
					t.Errorf("changes %v violations %v tainted %v", res.Changes, res.Violations, res.Tainted)
				}
			},
		},
		{
			name: "configure creating its missing state path", landlock: true,
			op:     contract.PackageOperation{ID: "init", Mode: "configure", Writes: []string{"cache"}, Argv: sh("mkdir .app/cache && echo 1 > .app/cache/x && echo ok")},
			stdout: "ok\n",
		},
		{
			name: "configure writing a sibling state path", landlock: true,
			op:   contract.PackageOperation{ID: "set", Mode: "configure", Writes: []string{"config"}, Argv: sh("echo 1 > .app/session/s.json")},
			code: CodeMutatedState,
			check: func(t *testing.T, env Env, res *Result) {
				if !res.Attempt || res.ExitCode == 0 {
					t.Errorf("the sibling write was not denied: %+v", res)
				}
			},
		},
		{
			name: "configure writing a sibling, detection only",
			op:   contract.PackageOperation{ID: "set", Mode: "configure", Writes: []string{"config"}, Argv: sh("echo 1 > .app/config/c; echo 1 > notes.txt")},
			opts: Options{NoLandlock: true},
			code: CodeMutatedState,
			check: func(t *testing.T, env Env, res *Result) {
				if len(res.Changes) != 2 || len(res.Violations) != 1 || !strings.HasSuffix(res.Violations[0].Path, "/notes.txt") || !res.Tainted {
					t.Errorf("changes %v violations %v", res.Changes, res.Violations)
				}
			},
		},
		{
			name: "read without Landlock and without the allow flag",
			op:   contract.PackageOperation{ID: "show", Mode: "read", Argv: sh("true")},
			opts: Options{NoLandlock: true},
			code: CodeUnenforced,
		},
		{
			name: "read without Landlock, allowed", op: contract.PackageOperation{ID: "show", Mode: "read", Argv: sh("cat .app/config/config.json")},
			opts:   Options{NoLandlock: true, AllowUnenforcedRead: true},
			stdout: `{"model":"m"}`,
			check: func(t *testing.T, env Env, res *Result) {
				if res.Enforcement != EnforcementNone {
					t.Errorf("enforcement %q", res.Enforcement)
				}
			},
		},
		{
			name: "configure without Landlock runs (detection holds it)",
			op:   contract.PackageOperation{ID: "set", Mode: "configure", Writes: []string{"config"}, Argv: sh("echo ok")},
			opts: Options{NoLandlock: true}, stdout: "ok\n",
		},
		{
			name: "failing read", landlock: true,
			op:   contract.PackageOperation{ID: "show", Mode: "read", Argv: sh("echo nope >&2; exit 3")},
			code: CodeFailed,
			check: func(t *testing.T, env Env, res *Result) {
				if res.ExitCode != 3 || res.Stderr != "nope\n" || res.Attempt {
					t.Errorf("exit %d stderr %q attempt %v", res.ExitCode, res.Stderr, res.Attempt)
				}
			},
		},
		{
			name: "a sandbox binary that does not serve the sandbox", landlock: true,
			op:   contract.PackageOperation{ID: "show", Mode: "read", Argv: sh("echo hi")},
			opts: Options{Executable: truePath()},
			code: CodeSandbox,
			check: func(t *testing.T, env Env, res *Result) {
				if res.Stdout != "" || res.ExitCode != 0 {
					t.Errorf("stdout %q exit %d", res.Stdout, res.ExitCode)
				}
			},
		},
		{name: "read declaring writes", op: contract.PackageOperation{ID: "x", Mode: "read", Writes: []string{"config"}, Argv: sh("true")}, code: CodeInvalid},
		{name: "writes an undeclared state path", op: contract.PackageOperation{ID: "x", Mode: "configure", Writes: []string{"nope"}, Argv: sh("true")}, code: CodeInvalid},
		{name: "unknown mode", op: contract.PackageOperation{ID: "x", Mode: "write", Argv: sh("true")}, code: CodeInvalid},
		{name: "empty argv", op: contract.PackageOperation{ID: "x", Mode: "configure"}, code: CodeInvalid},
		{name: "command not found", op: contract.PackageOperation{ID: "x", Mode: "configure", Argv: []string{"no-such-command-here"}}, opts: Options{NoLandlock: true}, code: CodeInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			abi := 0
			if tc.landlock {
				abi = requireLandlock(t)
			}
			env := fixture(t)
			res, err := Run(context.Background(), tc.op, env, tc.opts)
			if got := code(err); got != tc.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tc.code)
			}
			if tc.code == CodeInvalid || tc.code == CodeUnenforced {
				if res != nil {
					t.Errorf("a refused operation has a result: %+v", res)
				}
				return
			}
			if tc.stdout != "" && res.Stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", res.Stdout, tc.stdout)
			}
			if abi > 0 && res.Enforcement != "landlock-abi-"+strconv.Itoa(abi) {
				t.Errorf("enforcement %q, want landlock-abi-%d", res.Enforcement, abi)
			}
			if tc.check != nil {
				tc.check(t, env, res)
			}
		})
	}
}

func truePath() string {
	p, err := lookPath("true", []string{"PATH=" + os.Getenv("PATH")})
	if err != nil {
		return "/bin/true"
	}
	return p
}

func TestOutputLimit(t *testing.T) {
	env := fixture(t)
	env.StdoutLimit = 10
	res, err := Run(context.Background(), contract.PackageOperation{ID: "big", Mode: "configure", Argv: sh("head -c 100000 /dev/zero")}, env, Options{NoLandlock: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stdout) != 10 || !res.StdoutTruncated {
		t.Errorf("stdout %d bytes, truncated %v", len(res.Stdout), res.StdoutTruncated)
	}
}

// A chmod of a watched root itself counts (the root is listed itself).
func TestSnapshotSeesRootModeAndOverlap(t *testing.T) {
	env := fixture(t)
	roots := watchRoots(env)
	before, err := Snapshot(roots)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range before.Entries {
		if seen[e.Path] {
			t.Fatalf("%s listed twice (overlapping roots)", e.Path)
		}
		seen[e.Path] = true
	}
	if err := os.Chmod(env.StatePaths["config"], 0o700); err != nil {
		t.Fatal(err)
	}
	after, _ := Snapshot(roots)
	if before.Digest() == after.Digest() {
		t.Error("a root's chmod changed nothing")
	}
}

// Cancelling the context kills the operation's whole process group (a
// background child too), and the result says it failed.
func TestCancelKillsTheOperation(t *testing.T) {
	env := fixture(t)
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pid := make(chan string, 1)
	go func() {
		defer cancel()
		b, _ := os.ReadFile(fifo) // until the operation has written its child's pid
		pid <- strings.TrimSpace(string(b))
	}()
	op := contract.PackageOperation{ID: "hang", Mode: "configure", Argv: sh("sleep 300 & echo $! > " + fifo + "; wait")}
	res, err := Run(ctx, op, env, Options{NoLandlock: true})
	if code(err) != CodeFailed || res == nil || res.ExitCode == 0 {
		t.Fatalf("code %q (%v), result %+v", code(err), err, res)
	}
	// Run returned once the stdout pipe closed, which the background
	// sleep holds open: it must be gone (or a zombie) by now.
	child := <-pid
	childPid, _ := strconv.Atoi(child)
	if st, err := procfs.Default.Stat(childPid); err == nil && st.Live() {
		t.Errorf("the operation's background child %s survived (state %c)", child, st.State)
	}
}
