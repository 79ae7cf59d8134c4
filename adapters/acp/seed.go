package acp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A home seed holds what an agent's first run makes in its empty private
// HOME and later runs only read, whatever the runtime (codex-acp's migrated
// SQLite databases and unpacked skills), so that a runtime's agent starts
// from copies of them instead of redoing that work. Profile.Seed lists the
// files and directories (paths relative to HOME); nothing else is ever
// copied, and every runtime gets its own copies, never links. Seeds live
// in one directory per user (outside Fabric's state directory, which
// holds only live runtimes' homes), one seed per profile and key:
//
//	$FABRIC_ACP_SEEDS/<profile>-<key>/<files>          read-only
//	$FABRIC_ACP_SEEDS/spares-<profile>-<key>/<id>/...  private copies, one per start
//
// FABRIC_ACP_SEEDS unset or empty means os.UserCacheDir()/fabric/acp-seeds;
// "off" turns seeding off.
//
// A start never waits for a seed: it moves a spare copy into its home
// (takeSpare) or copies the seed's files (copyInto; directories come only
// with a spare), else it starts as an unseeded agent does. A seed is built
// only for a binary already started on this machine (a
// <profile>-<key>.started file records the first start), so a machine
// that starts one runtime never pays for it: the second start, once its
// runtime is ready, builds the seed in the background (the session's
// seedInBackground) by a scratch start of the agent (the runtime's own
// command, arguments and environment, pointed at a scratch home, killed
// once it answers initialize); its databases' WALs are folded in
// (foldWAL), the listed files copied into a temporary directory and
// renamed into place: a directory with that name is complete. One builder
// per seed (a lock file the kernel releases when its process dies); a
// failed build is not tried again for seedRetryAfter. After a seeded
// start, the background makes the next start's spare (prepareSpare).
const envSeeds = "FABRIC_ACP_SEEDS"

// seedsOff is the value of envSeeds that turns seeding off.
const seedsOff = "off"

// seedStale is the age after which a builder's leftovers of other seeds
// (a builder killed mid-way) are removed; the seed's own builder removes
// its seed's leftovers at once.
const seedStale = 10 * time.Minute

// seedBuildTimeout bounds a seed's scratch start.
const seedBuildTimeout = 30 * time.Second

// seedRetryAfter is how long a failed build keeps the seed from being
// tried again.
const seedRetryAfter = 10 * time.Minute

// homeSeed is the seed a runtime's private home may be filled from.
type homeSeed struct {
	cache string   // the seeds' directory
	name  string   // <profile>-<key>
	files []string // Profile.Seed
}

// seedsDir is the directory of seeds named by the environment (getenv):
// $FABRIC_ACP_SEEDS, else the user's cache directory's fabric/acp-seeds;
// "" when seeding is off or there is no cache directory.
func seedsDir(getenv func(string) string) string {
	switch v := getenv(envSeeds); v {
	case seedsOff:
		return ""
	case "":
		cache, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(cache, "fabric", "acp-seeds")
	default:
		return v
	}
}

// newHomeSeed returns the profile's seed for the agent binary bin, in the
// seeds' directory the host's environment names (seedsDir). ok is false
// when the profile has no seed or seeding is off.
func newHomeSeed(bin string, prof Profile) (homeSeed, bool, error) {
	if len(prof.Seed) == 0 {
		return homeSeed{}, false, nil
	}
	cache := seedsDir(os.Getenv)
	if cache == "" {
		return homeSeed{}, false, nil
	}
	key, err := seedKey(bin, prof.Seed)
	if err != nil {
		return homeSeed{}, false, err
	}
	return homeSeed{cache: cache, name: prof.Name + "-" + key, files: prof.Seed}, true, nil
}

// seedKey digests what the seeded files depend on: the agent binary (its
// resolved path, size and modification time, not its contents: a new
// version gets a new seed) and the list of files.
func seedKey(bin string, files []string) (string, error) {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return "", err
	}
	if real, err = filepath.Abs(real); err != nil {
		return "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, v := range append([]string{real, strconv.FormatInt(st.Size(), 10), strconv.FormatInt(st.ModTime().UnixNano(), 10)}, files...) {
		fmt.Fprintf(h, "%d:%s\n", len(v), v)
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// cleanRel reports whether rel is a clean slash-separated path inside a
// directory (no "..", not absolute).
func cleanRel(rel string) bool {
	return rel != "" && rel != "." && !strings.HasPrefix(rel, "/") && !strings.Contains(rel, "\\") &&
		rel == filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel))) && rel != ".." && !strings.HasPrefix(rel, "../")
}

func (s homeSeed) dir() string { return filepath.Join(s.cache, s.name) }

// exists reports whether the seed has been built.
func (s homeSeed) exists() bool {
	st, err := os.Stat(s.dir())
	return err == nil && st.IsDir()
}

// copyInto copies the seed's files into home (a file the seed lacks is
// skipped: the agent makes it; so is a directory). On failure it removes what it copied and
// returns the error: the runtime then starts unseeded.
func (s homeSeed) copyInto(home string) (n int, err error) {
	var made []string
	defer func() {
		if err != nil {
			for _, p := range made {
				_ = os.Remove(p)
			}
			n = 0
		}
	}()
	for _, rel := range s.files {
		src, dst := filepath.Join(s.dir(), filepath.FromSlash(rel)), filepath.Join(home, filepath.FromSlash(rel))
		if st, err := os.Lstat(src); err == nil && st.IsDir() {
			continue // only a spare brings a directory: copying one costs what the agent's making it does
		}
		ok, err := copyRegular(src, dst)
		if err != nil {
			return 0, fmt.Errorf("home seed %s: %w", s.name, err)
		}
		if ok {
			made = append(made, dst)
		}
	}
	return len(made), nil
}

// copyRegular copies the regular file src (never through a symlink) to
// dst, a new file (its directory made as needed, 0700). ok is false when
// src does not exist.
func copyRegular(src, dst string) (ok bool, err error) {
	lst, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !lst.Mode().IsRegular() {
		return false, fmt.Errorf("%s is not a regular file", src)
	}
	in, err := os.Open(src)
	if err != nil {
		return false, err
	}
	defer in.Close()
	if st, err := in.Stat(); err != nil || !os.SameFile(lst, st) {
		return false, fmt.Errorf("%s changed while being opened", src)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return false, err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		_ = os.Remove(dst)
		return false, err
	}
	if err := out.Close(); err != nil {
		_ = os.Remove(dst)
		return false, err
	}
	return true, nil
}

// copyTree copies src, a regular file or a directory of directories and
// regular files (never a symlink), to dst, which must not exist (made
// 0600 and 0700). ok is false when src does not exist.
func copyTree(ctx context.Context, src, dst string) (ok bool, err error) {
	st, err := os.Lstat(src)
	if err != nil || !st.IsDir() {
		return copyRegular(src, dst)
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return false, err
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return false, err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		if _, err := copyTree(ctx, filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return false, err
		}
	}
	return true, nil
}

// spares is the directory of the seed's spare homes: private, writable
// copies of the seed made ahead of a start (prepareSpare), each taken
// whole by one runtime (takeSpare), so that a start moves its seeded files
// into place with two renames instead of copying them.
func (s homeSeed) spares() string { return filepath.Join(s.cache, "spares-"+s.name) }

// prepareSpare makes a spare copy of the seed unless one is waiting
// (concurrent preparers may make a few; each is used once).
func (s homeSeed) prepareSpare(ctx context.Context) error {
	if ents, _ := os.ReadDir(s.spares()); len(ents) > 0 || !s.exists() {
		return nil
	}
	tmp, err := os.MkdirTemp(s.cache, ".prep-"+s.name+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, rel := range s.files {
		if _, err := copyTree(ctx, filepath.Join(s.dir(), filepath.FromSlash(rel)), filepath.Join(tmp, filepath.FromSlash(rel))); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(s.spares(), 0o700); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.spares(), filepath.Base(tmp)))
}

// takeSpare moves a spare copy of the seed into home: the spare is
// claimed by renaming it into home (one taker wins), then its top-level
// entries are renamed into place. It reports false when there is none or
// it cannot be moved (home already has an entry, another filesystem);
// what it moved is then removed again.
func (s homeSeed) takeSpare(home string) bool {
	ents, err := os.ReadDir(s.spares())
	if err != nil {
		return false
	}
	claim := filepath.Join(home, ".fabric-seed")
	for _, e := range ents {
		if os.Rename(filepath.Join(s.spares(), e.Name()), claim) == nil {
			break
		}
	}
	if _, err := os.Lstat(claim); err != nil {
		return false
	}
	defer os.RemoveAll(claim)
	top, err := os.ReadDir(claim)
	if err != nil {
		return false
	}
	var moved []string
	for _, e := range top {
		dst := filepath.Join(home, e.Name())
		if _, err := os.Lstat(dst); err == nil || os.Rename(filepath.Join(claim, e.Name()), dst) != nil {
			for _, p := range moved {
				_ = os.RemoveAll(p)
			}
			return false
		}
		moved = append(moved, dst)
	}
	return true
}

// noteStart records a start of the seed's binary on this machine and
// reports whether one was recorded before (the binary has been started
// more than once: a seed is worth building).
func (s homeSeed) noteStart() (again bool, err error) {
	if err := os.MkdirAll(s.cache, 0o700); err != nil {
		return false, err
	}
	f, err := os.OpenFile(filepath.Join(s.cache, s.name+".started"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return false, f.Close()
}

// failedLately reports whether a build of the seed failed less than
// seedRetryAfter ago.
func (s homeSeed) failedLately() bool {
	st, err := os.Stat(filepath.Join(s.cache, s.name+".failed"))
	return err == nil && time.Since(st.ModTime()) < seedRetryAfter
}

// errSeedBusy: another builder holds the seed's lock.
var errSeedBusy = errors.New("another builder is at work")

// buildOnce builds the seed unless it exists or another builder (of any
// process) is at work (errSeedBusy). It holds the seed's lock throughout,
// so the leftovers of the seed's earlier builders (killed mid-way) are
// removed first. A failure is recorded: failedLately reports it.
func (s homeSeed) buildOnce(ctx context.Context, scratch func(ctx context.Context, home string) error) error {
	if err := os.MkdirAll(s.cache, 0o700); err != nil {
		return err
	}
	unlock, err := lockFile(filepath.Join(s.cache, ".lock-"+s.name))
	if err != nil {
		return err
	}
	defer unlock()
	if s.exists() {
		return nil
	}
	if left, _ := filepath.Glob(filepath.Join(s.cache, ".build-"+s.name+"-*")); len(left) > 0 {
		for _, p := range left {
			_ = os.RemoveAll(p)
		}
	}
	failed := filepath.Join(s.cache, s.name+".failed")
	if err := s.build(ctx, scratch); err != nil {
		if ctx.Err() == nil { // a cancelled build (the host stopping) is no failure
			_ = os.WriteFile(failed, nil, 0o600)
			_ = os.Chtimes(failed, time.Now(), time.Now())
		}
		return err
	}
	_ = os.Remove(failed)
	return nil
}

// build makes the seed: scratch runs the agent once with HOME at the home
// it is given and returns once the agent has stopped; each listed SQLite
// database whose WAL is listed too has its WAL folded in (foldWAL: the
// seed then lacks the WAL); the seed's files the agent left (any of them
// may be missing: then the seed lacks it) are copied
// into a temporary directory, made read-only and renamed into place. A
// concurrent builder that renamed first wins; the loser's copy is
// discarded. Writing a seed removes the profile's seeds of other keys and
// leftovers of builders killed mid-way.
func (s homeSeed) build(ctx context.Context, scratch func(ctx context.Context, home string) error) error {
	if err := os.MkdirAll(s.cache, 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(s.cache, ".build-"+s.name+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	home := filepath.Join(tmp, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return err
	}
	if err := scratch(ctx, home); err != nil {
		return fmt.Errorf("scratch start: %w", err)
	}
	for _, rel := range s.files { // a database and its WAL: folded into one file
		if slices.Contains(s.files, rel+"-wal") {
			_ = foldWAL(filepath.Join(home, filepath.FromSlash(rel)), filepath.Join(home, filepath.FromSlash(rel+"-wal"))) // else both are copied
		}
	}
	out := filepath.Join(tmp, "seed")
	if err := os.Mkdir(out, 0o700); err != nil {
		return err
	}
	for _, rel := range s.files {
		if _, err := copyTree(ctx, filepath.Join(home, filepath.FromSlash(rel)), filepath.Join(out, filepath.FromSlash(rel))); err != nil {
			return err
		}
	}
	err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			err = os.Chmod(p, 0o400)
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := os.Rename(out, s.dir()); err != nil {
		if s.exists() {
			return nil // a concurrent builder won
		}
		return err
	}
	s.removeOthers()
	return nil
}

// removeOthers removes the profile's seeds of other keys (renamed aside
// first, so that a runtime copying from one finds it whole or not at all)
// with their spares, start, failure and lock files, and builders' and
// preparers' leftovers older than seedStale.
func (s homeSeed) removeOthers() {
	prefix := s.name[:strings.LastIndexByte(s.name, '-')+1]
	keyLen := len(s.name) - len(prefix)
	ents, err := os.ReadDir(s.cache)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		other := strings.TrimPrefix(strings.TrimPrefix(n, ".lock-"), "spares-")
		other = strings.TrimSuffix(strings.TrimSuffix(other, ".started"), ".failed")
		switch {
		case other == s.name:
		case strings.HasPrefix(n, ".build-") || strings.HasPrefix(n, ".old-") || strings.HasPrefix(n, ".prep-"):
			if fi, err := e.Info(); err == nil && e.IsDir() && time.Since(fi.ModTime()) > seedStale {
				_ = os.RemoveAll(filepath.Join(s.cache, n))
			}
		case !strings.HasPrefix(other, prefix) || len(other)-len(prefix) != keyLen || strings.Contains(other[len(prefix):], "-"):
		case !e.IsDir():
			_ = os.Remove(filepath.Join(s.cache, n))
		default:
			old, err := os.MkdirTemp(s.cache, ".old-")
			if err != nil {
				return
			}
			_ = os.Rename(filepath.Join(s.cache, n), filepath.Join(old, n))
			_ = os.RemoveAll(old)
		}
	}
}
