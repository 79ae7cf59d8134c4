package pkginstall

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// Options tune Install.
type Options struct {
	DataDir  string // required: the data directory (DataDir gives the default)
	Force    bool   // reinstall even when a verified install of the version exists
	Platform string // default: Platform()
	// Env is npm's environment (default os.Environ()); PATH in it finds
	// npm, after the pinned Node's bin directory.
	Env    []string
	Logger *slog.Logger
	// Stderr receives npm's output as it runs (default: kept, and its
	// tail put in the error when npm fails).
	Stderr io.Writer
}

// npmArgs is the npm ci command line: from the lockfile, never changing
// it, running install scripts (platform packages need them), offline of
// the audit and funding endpoints.
var npmArgs = []string{"ci", "--ignore-scripts=false", "--no-audit", "--no-fund", "--loglevel=error"}

// Install installs src into opts.DataDir/packages/<id>@<version>/. An
// existing install of that version that verifies is returned as is
// (Reused) unless opts.Force; one that does not verify is an
// artifact_digest_mismatch naming the file (Force reinstalls it).
func Install(ctx context.Context, src Source, opts Options) (*Installed, error) {
	if opts.Platform == "" {
		opts.Platform = Platform()
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.DataDir == "" {
		return nil, errors.New("pkginstall: no data directory")
	}
	if err := src.check(opts.Platform); err != nil {
		return nil, err
	}
	d := &src.Descriptor
	entry := dirName(d.Package.ID, d.Package.Version)
	pkgsDir := PackagesDir(opts.DataDir)
	if err := os.MkdirAll(pkgsDir, 0o755); err != nil {
		return nil, installFailed(err, "create %s: %v", pkgsDir, err)
	}
	unlock, err := lockDir(filepath.Join(pkgsDir, ".lock"))
	if err != nil {
		return nil, installFailed(err, "lock %s: %v", pkgsDir, err)
	}
	defer unlock()

	final := filepath.Join(pkgsDir, entry)
	if _, err := os.Stat(final); err == nil && !opts.Force {
		in, err := Read(final)
		if err != nil {
			return nil, mismatch(StageInstall, entry, filepath.Join(final, RecordFile), "the existing install's record is unreadable (%v); --force reinstalls", err)
		}
		if err := Verify(in); err != nil {
			return nil, fmt.Errorf("%w (--force reinstalls)", err)
		}
		in.Reused = true
		return in, nil
	}

	removeLeftovers(pkgsDir, opts.Logger)
	staging, err := os.MkdirTemp(pkgsDir, ".staging-"+entry+"-")
	if err != nil {
		return nil, installFailed(err, "create staging directory: %v", err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(staging)
		}
	}()
	if err := os.Chmod(staging, 0o755); err != nil {
		return nil, installFailed(err, "%v", err)
	}
	rec, err := stage(ctx, &src, &opts, staging)
	if err != nil {
		return nil, err
	}
	if err := writeRecord(staging, rec); err != nil {
		return nil, installFailed(err, "write %s: %v", RecordFile, err)
	}
	if err := replace(staging, final); err != nil {
		return nil, installFailed(err, "move the install into place: %v", err)
	}
	done = true
	opts.Logger.Info("package installed", "package", entry, "dir", final, "manifest", rec.Manifest.Digest)
	return &Installed{Root: final, Record: *rec}, nil
}

// removeLeftovers removes what interrupted installs left (staging
// directories, installs moved aside); the caller holds the packages lock,
// so no install is using them.
func removeLeftovers(pkgsDir string, log *slog.Logger) {
	ents, err := os.ReadDir(pkgsDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if n := e.Name(); e.IsDir() && (strings.HasPrefix(n, ".staging-") || strings.HasPrefix(n, ".old-")) {
			log.Info("removing what an interrupted install left", "dir", n)
			_ = os.RemoveAll(filepath.Join(pkgsDir, n))
		}
	}
}

// stage installs into dir and returns the record, not yet written.
func stage(ctx context.Context, src *Source, opts *Options, dir string) (*Record, error) {
	d := &src.Descriptor
	entry := dirName(d.Package.ID, d.Package.Version)
	// The package directory itself is kept in the install, and its
	// digest is the tree manifest of that copy unless the caller knows it.
	pkgCopy := filepath.Join(dir, PackageCopyDir)
	if err := copyFS(pkgCopy, src.FS); err != nil {
		return nil, installFailed(err, "copy the package directory: %v", err)
	}
	digest := src.Digest
	if digest == "" {
		m, err := treemanifest.Take(pkgCopy, treemanifest.Options{})
		if err != nil {
			return nil, installFailed(err, "package digest: %v", err)
		}
		digest = m.Digest()
	}
	lockDir := path.Dir(d.Install.Lockfile)
	lockData, err := fs.ReadFile(src.FS, d.Install.Lockfile)
	if err != nil {
		return nil, notInstallable("install.lockfile", "read %s: %v", d.Install.Lockfile, err)
	}
	pkgJSON, err := fs.ReadFile(src.FS, path.Join(lockDir, "package.json"))
	if err != nil {
		return nil, notInstallable("install.lockfile", "read the package.json beside %s: %v", d.Install.Lockfile, err)
	}
	lock, err := parseLockfile(lockData, d.Install.Lockfile)
	if err != nil {
		return nil, notInstallable("install.lockfile", "%v", err)
	}
	arts, err := matchArtifacts(entry, d.Artifacts[opts.Platform], lock, opts.Platform, d.Install.Lockfile)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), pkgJSON, 0o644); err != nil {
		return nil, installFailed(err, "%v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package-lock.json"), lockData, 0o644); err != nil {
		return nil, installFailed(err, "%v", err)
	}

	if err := checkLocalTarballs(entry, dir, lock); err != nil {
		return nil, err
	}
	env := opts.Env
	var node *RecordNode
	if name := d.Install.Node; name != "" {
		if node, err = installNode(ctx, opts, dir, name, lock); err != nil {
			return nil, err
		}
		env = prependPath(env, filepath.Join(dir, filepath.FromSlash(node.BinDir)))
	}
	if err := runNPM(ctx, opts, dir, env); err != nil {
		return nil, err
	}
	if err := checkInstalled(entry, dir, lock, arts); err != nil {
		return nil, err
	}
	bins, err := resolveBins(dir, d.Install.Bins)
	if err != nil {
		return nil, err
	}
	m, err := treemanifest.Take(dir, treemanifest.Options{Ignore: []string{RecordFile}, NoIgnoreFile: true})
	if err != nil {
		return nil, installFailed(err, "manifest of the install: %v", err)
	}
	fps, err := fingerprints(dir, m)
	if err != nil {
		return nil, installFailed(err, "fingerprints of the install: %v", err)
	}
	return &Record{
		Type:          RecordV1Alpha1,
		Package:       RecordPackage{ID: d.Package.ID, Version: d.Package.Version, Publisher: d.Package.Publisher},
		PackageDigest: digest,
		Platform:      opts.Platform,
		Artifacts:     arts,
		Node:          node,
		Bins:          bins,
		Manifest:      RecordManifest{Digest: m.Digest(), Entries: m.Entries, Fingerprints: fps},
	}, nil
}

// matchArtifacts finds each descriptor artifact in the lockfile (by its
// install path node_modules/<name>, or by the real name of an alias) at
// the pinned version and checks the lockfile's integrity against the
// descriptor's digest.
func matchArtifacts(entry string, want []contract.PackageArtifact, lock *lockfile, platform, lockName string) ([]RecordArtifact, error) {
	var out []RecordArtifact
	for i, a := range want {
		field := fmt.Sprintf("artifacts.%s[%d]", platform, i)
		if a.Kind != contract.ArtifactNPM {
			return nil, notInstallable(field, "artifact %s is of kind %q; only npm artifacts install", a.Name, a.Kind)
		}
		key, e, ok := findLocked(lock, a.Name, a.Version)
		if !ok {
			return nil, notInstallable(field, "artifact %s@%s is not in %s at that version", a.Name, a.Version, lockName)
		}
		dv, ok := a.Digest["sha512"]
		if !ok {
			return nil, notInstallable(field+".digest", "artifact %s has no sha512 digest (npm records sha512 integrity)", a.Name)
		}
		wantSum, err := sha512Of(dv)
		if err != nil {
			return nil, notInstallable(field+".digest.sha512", "%v", err)
		}
		gotSum, err := sha512Of(e.Integrity)
		if err != nil {
			return nil, notInstallable("install.lockfile", "%s: packages[%q].integrity: %v", lockName, key, err)
		}
		if !bytes.Equal(wantSum, gotSum) {
			return nil, mismatch(StageInstall, entry, lockName, "artifact %s@%s: the lockfile's integrity %s differs from the descriptor's digest %s", a.Name, a.Version, e.Integrity, sri(wantSum))
		}
		out = append(out, RecordArtifact{Name: a.Name, Version: a.Version, Path: key, Integrity: sri(gotSum)})
	}
	return out, nil
}

func findLocked(lock *lockfile, name, version string) (string, lockEntry, bool) {
	if e, ok := lock.Packages["node_modules/"+name]; ok && e.Version == version {
		return "node_modules/" + name, e, true
	}
	keys := make([]string, 0, len(lock.Packages))
	for k := range lock.Packages {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := lock.Packages[k]
		if k != "" && (installedName(k) == name || e.Name == name) && e.Version == version {
			return k, e, true
		}
	}
	return "", lockEntry{}, false
}

// installNode installs the pinned Node package (its lockfile entry, with
// its integrity) into dir/.node with the system's npm and returns where
// its bin directory is.
func installNode(ctx context.Context, opts *Options, dir, name string, lock *lockfile) (*RecordNode, error) {
	key := "node_modules/" + name
	e, ok := lock.Packages[key]
	if !ok || e.Integrity == "" {
		return nil, notInstallable("install.node", "%s is not in the lockfile with an integrity", name)
	}
	nodeDir := filepath.Join(dir, ".node")
	if err := os.MkdirAll(nodeDir, 0o755); err != nil {
		return nil, installFailed(err, "%v", err)
	}
	manifest := map[string]any{"name": "fabric-pinned-node", "private": true, "dependencies": map[string]string{name: e.Version}}
	nodeLock := map[string]any{
		"name": "fabric-pinned-node", "lockfileVersion": 3, "requires": true,
		"packages": map[string]any{"": map[string]any{"name": "fabric-pinned-node", "dependencies": map[string]string{name: e.Version}}, key: e},
	}
	for file, v := range map[string]any{"package.json": manifest, "package-lock.json": nodeLock} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return nil, installFailed(err, "%v", err)
		}
		if err := os.WriteFile(filepath.Join(nodeDir, file), b, 0o644); err != nil {
			return nil, installFailed(err, "%v", err)
		}
	}
	if err := runNPM(ctx, opts, nodeDir, opts.Env); err != nil {
		return nil, err
	}
	if err := checkInstalled(name, nodeDir, &lockfile{LockfileVersion: 3, Packages: map[string]lockEntry{key: e}}, nil); err != nil {
		return nil, err
	}
	bin := ".node/" + key + "/bin"
	if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(bin), "node")); err != nil || st.Mode()&0o111 == 0 {
		return nil, installFailed(err, "the pinned Node %s@%s has no executable bin/node", name, e.Version)
	}
	return &RecordNode{Name: name, Version: e.Version, BinDir: bin}, nil
}

func runNPM(ctx context.Context, opts *Options, dir string, env []string) error {
	npm, err := lookPathIn("npm", env)
	if err != nil {
		return installFailed(err, "npm is needed to install npm packages: %v", err)
	}
	cmd := exec.CommandContext(ctx, npm, npmArgs...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, env...), "npm_config_update_notifier=false")
	var tail bytes.Buffer
	out := io.Writer(&tail)
	if opts.Stderr != nil {
		out = io.MultiWriter(&tail, opts.Stderr)
	}
	cmd.Stdout, cmd.Stderr = out, out
	opts.Logger.Debug("npm", "dir", dir, "args", npmArgs)
	if err := cmd.Run(); err != nil {
		msg := tail.String()
		if len(msg) > 4000 {
			msg = "…" + msg[len(msg)-4000:]
		}
		return installFailed(err, "npm %s in %s failed: %v\n%s", strings.Join(npmArgs, " "), dir, err, strings.TrimSpace(msg))
	}
	return nil
}

// checkInstalled checks what npm installed in dir against the lockfile:
// every package npm recorded in node_modules/.package-lock.json is in the
// lockfile at the same version and integrity, every package directory
// present has the locked version, and every artifact is there.
func checkInstalled(entry, dir string, lock *lockfile, arts []RecordArtifact) error {
	hidden := filepath.Join(dir, "node_modules", ".package-lock.json")
	if data, err := os.ReadFile(hidden); err == nil {
		h, err := parseLockfile(data, hidden)
		if err != nil {
			return installFailed(err, "%v", err)
		}
		for k, e := range h.Packages {
			if k == "" || e.Link {
				continue
			}
			l, ok := lock.Packages[k]
			if !ok {
				return installFailed(nil, "npm installed %s, which the lockfile does not list", k)
			}
			if l.Version != e.Version || (l.Integrity != "" && l.Integrity != e.Integrity) {
				return mismatch(StageInstall, entry, filepath.Join(dir, filepath.FromSlash(k)), "npm installed %s@%s (%s), the lockfile pins %s (%s)", k, e.Version, e.Integrity, l.Version, l.Integrity)
			}
		}
	}
	for k, l := range lock.Packages {
		if k == "" || l.Link {
			continue
		}
		v, err := installedVersion(filepath.Join(dir, filepath.FromSlash(k)))
		if errors.Is(err, fs.ErrNotExist) {
			continue // optional packages of other platforms
		}
		if err != nil {
			return installFailed(err, "%s: %v", k, err)
		}
		if v != l.Version {
			return mismatch(StageInstall, entry, filepath.Join(dir, filepath.FromSlash(k)), "%s is installed at version %s, the lockfile pins %s", k, v, l.Version)
		}
	}
	for _, a := range arts {
		if _, err := installedVersion(filepath.Join(dir, filepath.FromSlash(a.Path))); err != nil {
			return installFailed(err, "artifact %s@%s is not installed at %s: %v", a.Name, a.Version, a.Path, err)
		}
	}
	return nil
}

// checkLocalTarballs checks the integrity of every lockfile entry npm
// installs from a local tarball (resolved "file:…"), which npm ci does not
// verify itself (it verifies what it fetches from a registry).
func checkLocalTarballs(entry, dir string, lock *lockfile) error {
	for k, e := range lock.Packages {
		p, ok := strings.CutPrefix(e.Resolved, "file:")
		if !ok || e.Link {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, filepath.FromSlash(p))
		}
		want, err := sha512Of(e.Integrity)
		if err != nil {
			return notInstallable("install.lockfile", "packages[%q] installs from %s with no sha512 integrity", k, e.Resolved)
		}
		f, err := os.Open(p)
		if err != nil {
			return installFailed(err, "packages[%q]: %v", k, err)
		}
		h := sha512.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return installFailed(err, "packages[%q]: %v", k, err)
		}
		if got := h.Sum(nil); !bytes.Equal(got, want) {
			return mismatch(StageInstall, entry, p, "%s: the tarball's sha512 %s differs from the lockfile's integrity %s", k, sri(got), e.Integrity)
		}
	}
	return nil
}

func installedVersion(pkgDir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return "", err
	}
	var pj struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &pj); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(pkgDir, "package.json"), err)
	}
	return pj.Version, nil
}

// resolveBins resolves each declared bin inside dir and hashes its file.
func resolveBins(dir string, bins []string) ([]RecordBin, error) {
	out := []RecordBin{}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, installFailed(err, "%v", err)
	}
	for _, b := range bins {
		p := filepath.Join(dir, filepath.FromSlash(b))
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, installFailed(err, "bin %s was not installed: %v", b, err)
		}
		rel, err := filepath.Rel(realDir, real)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, installFailed(err, "bin %s resolves outside the install, to %s", b, real)
		}
		st, err := os.Stat(real)
		if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			return nil, installFailed(err, "bin %s (%s) is not an executable file", b, rel)
		}
		sum, err := fileSHA256(real)
		if err != nil {
			return nil, installFailed(err, "%v", err)
		}
		out = append(out, RecordBin{Name: path.Base(b), Path: b, Resolved: filepath.ToSlash(rel), SHA256: sum})
	}
	return out, nil
}

func fingerprints(dir string, m *treemanifest.Manifest) (map[string]Fingerprint, error) {
	out := map[string]Fingerprint{}
	for _, e := range m.Entries {
		if e.Type != "file" {
			continue
		}
		info, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(e.Path)))
		if err != nil {
			return nil, err
		}
		if info.Size() != e.Size {
			return nil, fmt.Errorf("%s changed while the install was recorded", e.Path)
		}
		if fp, ok := fingerprintOf(info); ok {
			out[e.Path] = fp
		}
	}
	return out, nil
}

func writeRecord(dir string, r *Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, RecordFile), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// replace renames staging to final. An existing final (a forced
// reinstall) is first moved aside and removed after: a crash in between
// leaves no install of that version, never a half-written one.
func replace(staging, final string) error {
	var old string
	if _, err := os.Lstat(final); err == nil {
		var b [6]byte
		_, _ = rand.Read(b[:])
		old = filepath.Join(filepath.Dir(final), ".old-"+filepath.Base(final)+"-"+hex.EncodeToString(b[:]))
		if err := os.Rename(final, old); err != nil {
			return err
		}
	}
	if err := os.Rename(staging, final); err != nil {
		if old != "" {
			_ = os.Rename(old, final)
		}
		return err
	}
	if d, err := os.Open(filepath.Dir(final)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// copyFS copies fsys into dir: directories 0755, files 0644 (0755 when
// any execute bit is set), symlinks refused.
func copyFS(dir string, fsys fs.FS) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: only regular files and directories are copied", p)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if info.Mode()&0o111 != 0 {
			mode = 0o755
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, mode)
	})
}

func prependPath(env []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	found := false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + dir + string(os.PathListSeparator) + v
			found = true
		}
		out = append(out, kv)
	}
	if !found {
		out = append(out, "PATH="+dir)
	}
	return out
}

// lookPathIn finds name on env's PATH.
func lookPathIn(name string, env []string) (string, error) {
	p := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			p = v
		}
	}
	for _, d := range filepath.SplitList(p) {
		if d == "" {
			continue
		}
		c := filepath.Join(d, name)
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return c, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH: %w", name, exec.ErrNotFound)
}

// lockDir takes an exclusive flock on path (created if missing), waiting
// for another install to release it; the lock ends with the process.
func lockDir(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
