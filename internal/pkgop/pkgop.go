package pkgop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// Error codes (docs/errors.md, "Package helper operations").
const (
	CodeInvalid      = "operation_invalid"
	CodeUnenforced   = "operation_unenforced"
	CodeMutatedState = "operation_mutated_state"
	CodeFailed       = "operation_failed"
	CodeWatchFailed  = "operation_watch_failed"
	CodeSandbox      = "operation_sandbox_failed"
)

// Stage is the Stage of every error Run returns.
const Stage = "operation"

// EnforcementNone is Result.Enforcement when nothing stopped a write and
// only detection ran; otherwise it is "landlock-abi-N".
const EnforcementNone = "none"

// Default output limits.
const (
	DefaultStdoutLimit = 1 << 20
	DefaultStderrLimit = 64 << 10
)

// Env is where an operation runs.
type Env struct {
	// Home is the runtime's home: the command's working directory.
	Home string
	// StatePaths maps every state path id of the package to its absolute
	// path. All of them are watched; Writes name some of them.
	StatePaths map[string]string
	// Watch lists more absolute roots to watch: the package directory,
	// the workspace, the artifact root. A missing root is watched as
	// empty (so its creation is a change).
	Watch []string
	// Environ is the command's environment (nil: empty). TMPDIR is set to
	// the private temp dir.
	Environ []string
	// StdoutLimit and StderrLimit cap the output kept (0: the defaults);
	// the rest is read and dropped, and the result says it was truncated.
	StdoutLimit, StderrLimit int64
}

// Options tune Run.
type Options struct {
	// AllowUnenforcedRead runs a read operation with detection only
	// where Landlock is unavailable (Result.Enforcement "none").
	AllowUnenforcedRead bool
	// NoLandlock does not use Landlock even where the kernel has it (as
	// on a platform without it).
	NoLandlock bool
	// Executable is the binary re-exec'd as the sandbox; it must call
	// MaybeServeSandbox first thing in main. Empty: os.Executable().
	Executable string
	// Overlay runs a read operation with every watched directory
	// overlaid onto itself in the sandbox's private mount namespace (root
	// only: see OverlayAvailable): the real directories cannot change, and
	// anything the operation leaves in an overlay's upper directory is a
	// violation, a chown, timestamp or extended attribute change included
	// (which neither Landlock nor the manifest sees). Ignored for a
	// configure operation, whose writes must reach the real state.
	Overlay bool
}

// Result is what an operation did. When Tainted, Stdout and Stderr are
// empty: the output of an operation that changed what it must not is
// discarded.
type Result struct {
	Operation   string `json:"operation"`
	Mode        string `json:"mode"`
	Enforcement string `json:"enforcement"`
	ExitCode    int    `json:"exit_code"`
	// Attempt says a write was denied by the sandbox: the operation failed
	// under enforcement with EACCES in its error output while nothing
	// changed (an inference from the child's failure: a denial leaves no
	// trace a process without audit rights can read).
	Attempt         bool                  `json:"attempt,omitempty"`
	Stdout          string                `json:"stdout,omitempty"`
	Stderr          string                `json:"stderr,omitempty"`
	StdoutTruncated bool                  `json:"stdout_truncated,omitempty"`
	StderrTruncated bool                  `json:"stderr_truncated,omitempty"`
	Before          string                `json:"before"` // fm1 digest of every watched root
	After           string                `json:"after"`
	Changes         []treemanifest.Change `json:"changes,omitempty"` // every change, allowed or not
	Violations      []treemanifest.Change `json:"violations,omitempty"`
	Tainted         bool                  `json:"tainted"`
	// Overlay lists the directories that were overlaid (Options.Overlay);
	// their upper directories' contents are among Changes.
	Overlay    []string `json:"overlay,omitempty"`
	DurationMS float64  `json:"duration_ms"`
}

func fail(code, msg string, md map[string]any, err error) error {
	return &contract.RuntimeError{Failure: contract.Failure{Stage: Stage, Code: code, Message: msg, Metadata: md, Err: err}}
}

// Run runs op in env. It returns the result and, when the operation failed
// or changed what it must not, a *contract.RuntimeError with one of the
// Code* codes; the result is non-nil whenever the command was started.
func Run(ctx context.Context, op contract.PackageOperation, env Env, opts Options) (*Result, error) {
	writes, err := check(op, env)
	if err != nil {
		return nil, err
	}
	abi := 0
	if !opts.NoLandlock {
		abi = landlockABI()
	}
	res := &Result{Operation: op.ID, Mode: op.Mode, Enforcement: EnforcementNone}
	if abi > 0 {
		res.Enforcement = "landlock-abi-" + strconv.Itoa(abi)
	} else if op.Mode == contract.OperationRead && !opts.AllowUnenforcedRead {
		return nil, fail(CodeUnenforced, fmt.Sprintf("read operation %q cannot be enforced here (no Landlock); allow it explicitly to run it with detection only", op.ID), map[string]any{"operation": op.ID}, nil)
	}
	roots := watchRoots(env)

	tmp, err := os.MkdirTemp("", "fabric-pkgop-")
	if err != nil {
		return nil, fail(CodeWatchFailed, "cannot make the private temp dir", nil, err)
	}
	defer os.RemoveAll(tmp)
	var overlays []overlayMount
	if opts.Overlay && op.Mode == contract.OperationRead {
		if !OverlayAvailable() {
			return nil, fail(CodeSandbox, fmt.Sprintf("read operation %q: an overlay was asked for, but overlays need root with CAP_SYS_ADMIN on Linux", op.ID), map[string]any{"operation": op.ID}, nil)
		}
		// Not beneath the private temp dir: the operation may write
		// there, and must not reach its own upper directories.
		base, err := os.MkdirTemp("", "fabric-pkgop-overlay-")
		if err != nil {
			return nil, fail(CodeWatchFailed, "cannot make the overlays' directory", nil, err)
		}
		defer os.RemoveAll(base)
		if overlays, err = prepareOverlays(overlayRoots(roots), base); err != nil {
			return nil, fail(CodeSandbox, fmt.Sprintf("read operation %q cannot be overlaid", op.ID), map[string]any{"operation": op.ID}, err)
		}
		for _, m := range overlays {
			res.Overlay = append(res.Overlay, filepath.ToSlash(m.Lower))
		}
	}

	before, err := Snapshot(roots)
	if err != nil {
		return nil, fail(CodeWatchFailed, "cannot take the manifest before the operation", nil, err)
	}
	res.Before = before.Digest()

	stdout := &limited{max: orDefault(env.StdoutLimit, DefaultStdoutLimit)}
	stderr := &limited{max: orDefault(env.StderrLimit, DefaultStderrLimit)}
	cmd, err := command(ctx, op, env, opts, abi, writes, tmp, overlays)
	if err != nil {
		return nil, fail(CodeInvalid, fmt.Sprintf("operation %q cannot be started", op.ID), nil, err)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// The sandbox says on fd 3 that it applied Landlock, so that a binary
	// that does not serve the sandbox cannot pass for one.
	var applied *os.File
	if abi > 0 || len(overlays) > 0 {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fail(CodeSandbox, "cannot make the sandbox's pipe", nil, err)
		}
		defer r.Close()
		applied, cmd.ExtraFiles = r, []*os.File{w}
		defer w.Close()
	}
	start := time.Now()
	runErr := cmd.Start()
	if runErr == nil {
		for _, f := range cmd.ExtraFiles {
			f.Close()
		}
		runErr = cmd.Wait()
	}
	res.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	} else {
		res.ExitCode = -1
	}
	if len(overlays) > 0 && cmd.Process != nil {
		// A process the operation left behind would keep its mount
		// namespace, and so the overlays, alive: end them all.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}

	after, err := Snapshot(roots)
	if err != nil {
		// Without an after manifest nothing is known: fail closed.
		res.Tainted = true
		return res, fail(CodeWatchFailed, "cannot take the manifest after the operation", nil, err)
	}
	res.After = after.Digest()
	res.Changes = treemanifest.Diff(before, after)
	if len(overlays) > 0 {
		upper, err := upperChanges(overlays, before)
		if err != nil {
			res.Tainted = true
			return res, fail(CodeWatchFailed, "cannot read the overlays after the operation", nil, err)
		}
		res.Changes = mergeChanges(res.Changes, upper)
	}
	for _, c := range res.Changes {
		if !within(c.Path, writes) {
			res.Violations = append(res.Violations, c)
		}
	}
	if len(res.Violations) > 0 {
		res.Tainted = true
		md := map[string]any{"operation": op.ID, "mode": op.Mode, "enforcement": res.Enforcement, "changes": changeList(res.Violations)}
		return res, fail(CodeMutatedState, fmt.Sprintf("%s operation %q changed %s outside its declared writes", op.Mode, op.ID, describe(res.Violations)), md, nil)
	}
	if applied != nil {
		ack, _ := io.ReadAll(applied) // every write end is closed by now
		failed := runErr != nil && bytes.HasPrefix(stderr.buf.Bytes(), []byte(sandboxFailure))
		if string(ack) != sandboxApplied || failed {
			msg := fmt.Sprintf("operation %q: %s did not apply the sandbox (it must call pkgop.MaybeServeSandbox first in main)", op.ID, cmd.Path)
			if failed {
				msg = fmt.Sprintf("operation %q: %s", op.ID, firstLine(stderr.buf.String()))
			}
			return res, fail(CodeSandbox, msg, map[string]any{"operation": op.ID}, nil)
		}
	}
	if runErr != nil && abi > 0 && deniedWrite(stderr.buf.Bytes()) {
		res.Attempt = true
		md := map[string]any{"operation": op.ID, "mode": op.Mode, "enforcement": res.Enforcement, "attempt": true, "exit_code": res.ExitCode}
		return res, fail(CodeMutatedState, fmt.Sprintf("%s operation %q tried to write outside its declared writes and was denied (exit %d): %s", op.Mode, op.ID, res.ExitCode, firstLine(stderr.buf.String())), md, nil)
	}
	res.Stdout, res.Stderr = stdout.buf.String(), stderr.buf.String()
	res.StdoutTruncated, res.StderrTruncated = stdout.dropped, stderr.dropped
	if runErr != nil {
		return res, fail(CodeFailed, fmt.Sprintf("operation %q failed (exit %d)", op.ID, res.ExitCode), map[string]any{"operation": op.ID, "exit_code": res.ExitCode}, runErr)
	}
	return res, nil
}

// check validates op against env and returns the absolute paths of its
// writes.
func check(op contract.PackageOperation, env Env) ([]string, error) {
	bad := func(msg string) error {
		return fail(CodeInvalid, msg, map[string]any{"operation": op.ID}, nil)
	}
	if op.ID == "" {
		return nil, bad("operation has no id")
	}
	if len(op.Argv) == 0 || op.Argv[0] == "" {
		return nil, bad(fmt.Sprintf("operation %q: argv is empty", op.ID))
	}
	if !filepath.IsAbs(env.Home) {
		return nil, bad(fmt.Sprintf("operation %q: the runtime home %q is not an absolute path", op.ID, env.Home))
	}
	for id, p := range env.StatePaths {
		if !filepath.IsAbs(p) {
			return nil, bad(fmt.Sprintf("operation %q: state path %q resolves to %q, not an absolute path", op.ID, id, p))
		}
	}
	for _, p := range env.Watch {
		if !filepath.IsAbs(p) {
			return nil, bad(fmt.Sprintf("operation %q: watched root %q is not an absolute path", op.ID, p))
		}
	}
	switch op.Mode {
	case contract.OperationRead:
		if len(op.Writes) > 0 {
			return nil, bad(fmt.Sprintf("operation %q: a read operation declares no writes (writes: %v)", op.ID, op.Writes))
		}
	case contract.OperationConfigure:
	default:
		return nil, bad(fmt.Sprintf("operation %q: mode %q is not read or configure", op.ID, op.Mode))
	}
	var out []string
	for _, id := range op.Writes {
		p, ok := env.StatePaths[id]
		if !ok {
			return nil, bad(fmt.Sprintf("operation %q: writes names state path %q, which the package does not declare", op.ID, id))
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

func watchRoots(env Env) []string {
	var roots []string
	for _, p := range env.StatePaths {
		roots = append(roots, filepath.Clean(p))
	}
	for _, p := range env.Watch {
		roots = append(roots, filepath.Clean(p))
	}
	slices.Sort(roots)
	return slices.Compact(roots)
}

// within reports whether the slash path p is one of roots or beneath one.
func within(p string, roots []string) bool {
	for _, r := range roots {
		r = filepath.ToSlash(r)
		if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}

// Snapshot is one manifest of several roots: every entry's path is
// absolute (slash separated), each root is listed itself (so a chmod of a
// root or its replacement by a symlink counts), a missing root has no
// entries, and an entry under two overlapping roots is listed once.
// Symlinks are recorded, never followed.
func Snapshot(roots []string) (*treemanifest.Manifest, error) {
	seen := map[string]treemanifest.Entry{}
	for _, root := range roots {
		self, err := treemanifest.Stat(root, treemanifest.Options{})
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("pkgop: %w", err)
		}
		if self.Type == "dir" {
			m, err := treemanifest.Take(root, treemanifest.Options{NoIgnoreFile: true})
			if err != nil {
				return nil, err
			}
			for _, e := range m.Entries {
				e.Path = self.Path + "/" + e.Path
				seen[e.Path] = e
			}
		}
		seen[self.Path] = self
	}
	m := &treemanifest.Manifest{Entries: make([]treemanifest.Entry, 0, len(seen))}
	for _, e := range seen {
		m.Entries = append(m.Entries, e)
	}
	slices.SortFunc(m.Entries, func(a, b treemanifest.Entry) int { return strings.Compare(a.Path, b.Path) })
	return m, nil
}

// mergeChanges is a and b, one change per path (a's first), sorted.
func mergeChanges(a, b []treemanifest.Change) []treemanifest.Change {
	seen := map[string]bool{}
	var out []treemanifest.Change
	for _, c := range append(slices.Clone(a), b...) {
		if !seen[c.Path] {
			seen[c.Path] = true
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(x, y treemanifest.Change) int { return strings.Compare(x.Path, y.Path) })
	return out
}

// command builds the process: the sandbox child when enforcing or
// overlaying, else the argv itself.
func command(ctx context.Context, op contract.PackageOperation, env Env, opts Options, abi int, writes []string, tmp string, overlays []overlayMount) (*exec.Cmd, error) {
	environ := append(slices.Clone(env.Environ), "TMPDIR="+tmp)
	path, err := lookPath(op.Argv[0], environ)
	if err != nil {
		return nil, err
	}
	var cmd *exec.Cmd
	if abi > 0 || len(overlays) > 0 {
		self := opts.Executable
		if self == "" {
			var err error
			if self, err = os.Executable(); err != nil {
				return nil, err
			}
		}
		spec, err := json.Marshal(sandboxSpec{Path: path, Argv: op.Argv, Writable: append(slices.Clone(writes), tmp), Landlock: abi > 0, Overlays: overlays, Dir: env.Home})
		if err != nil {
			return nil, err
		}
		cmd = exec.CommandContext(ctx, self)
		environ = append(environ, envSandbox+"="+string(spec))
	} else {
		cmd = exec.CommandContext(ctx, path, op.Argv[1:]...)
		cmd.Args[0] = op.Argv[0]
	}
	cmd.Dir = env.Home
	cmd.Env = environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if len(overlays) > 0 {
		unshareMounts(cmd)
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	return cmd, nil
}

// LookPath finds name (an operation's argv[0]) on the PATH of environ,
// as Run does: the executor a caller names in a claim.
func LookPath(name string, environ []string) (string, error) { return lookPath(name, environ) }

// lookPath finds name on the PATH of environ (not of this process).
func lookPath(name string, environ []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := ""
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found on the operation's PATH %q", name, path)
}

func deniedWrite(stderr []byte) bool {
	return bytes.Contains(bytes.ToLower(stderr), []byte(strings.ToLower(syscall.EACCES.Error())))
}

func changeList(cs []treemanifest.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}

func describe(cs []treemanifest.Change) string {
	const show = 3
	l := changeList(cs)
	if len(l) > show {
		return strings.Join(l[:show], ", ") + fmt.Sprintf(" and %d more", len(l)-show)
	}
	return strings.Join(l, ", ")
}

// firstLine is the first line of s, at most 200 bytes of it.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func orDefault(v, d int64) int64 {
	if v <= 0 {
		return d
	}
	return v
}

// limited keeps the first max bytes written and drops the rest, so a
// chatty operation never blocks on its pipe nor grows memory.
type limited struct {
	buf     bytes.Buffer
	max     int64
	dropped bool
}

func (l *limited) Write(p []byte) (int, error) {
	room := l.max - int64(l.buf.Len())
	if room < int64(len(p)) {
		l.dropped = true
		if room > 0 {
			l.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return l.buf.Write(p)
}
