package acp

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSeedKey(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "agent")
	writeFile(t, bin, "v1")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	key := func(bin string, files ...string) string {
		t.Helper()
		k, err := seedKey(bin, files)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key(bin, "a")
	if k := key(link, "a"); k != base {
		t.Error("a symlink to the binary has another key")
	}
	if k := key(bin, "a", "b"); k == base {
		t.Error("another file list has the same key")
	}
	writeFile(t, bin, "v22") // another size
	if k := key(bin, "a"); k == base {
		t.Error("another binary size has the same key")
	}
	sized := key(bin, "a")
	if err := os.Chtimes(bin, time.Now(), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if k := key(bin, "a"); k == sized {
		t.Error("another modification time has the same key")
	}
	if _, err := seedKey(filepath.Join(dir, "missing"), nil); err == nil {
		t.Error("a missing binary has a key")
	}
}

// testSeed is a seed in a temporary cache for a profile that seeds
// .a/db and .a/db-wal.
func testSeed(t *testing.T) homeSeed {
	t.Helper()
	return homeSeed{cache: filepath.Join(t.TempDir(), "seeds"), name: "agent-0123456789abcdef0123", files: []string{".a/db", ".a/db-wal"}}
}

// scratchWriting is a scratch start that leaves files (relative path ->
// content) in its home.
func scratchWriting(t *testing.T, files map[string]string) func(context.Context, string) error {
	return func(_ context.Context, home string) error {
		for rel, data := range files {
			writeFile(t, filepath.Join(home, rel), data)
		}
		return nil
	}
}

func TestSeedBuildAndCopy(t *testing.T) {
	s := testSeed(t)
	if s.exists() {
		t.Fatal("a seed before any build")
	}
	// .a/db-wal is not made: the seed lacks it. Unlisted files stay out.
	if err := s.build(context.Background(), scratchWriting(t, map[string]string{".a/db": "DB", ".a/log": "LOG", "id": "ID"})); err != nil {
		t.Fatal(err)
	}
	if !s.exists() {
		t.Fatal("no seed after a build")
	}
	var got []string
	_ = filepath.WalkDir(s.cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(s.cache, p)
			got = append(got, rel)
			if st, _ := os.Stat(p); st.Mode().Perm() != 0o400 {
				t.Errorf("%s is %v, want read-only", rel, st.Mode().Perm())
			}
		}
		return nil
	})
	if want := []string{filepath.Join(s.name, ".a", "db")}; !slices.Equal(got, want) {
		t.Errorf("the cache holds %v, want %v", got, want)
	}

	home := t.TempDir()
	n, err := s.copyInto(home)
	if err != nil || n != 1 {
		t.Fatalf("copyInto: %d, %v", n, err)
	}
	dst := filepath.Join(home, ".a", "db")
	b, err := os.ReadFile(dst)
	if err != nil || string(b) != "DB" {
		t.Fatalf("the copy: %q, %v", b, err)
	}
	st, _ := os.Stat(dst)
	src, _ := os.Stat(filepath.Join(s.dir(), ".a", "db"))
	if st.Mode().Perm() != 0o600 || os.SameFile(st, src) {
		t.Errorf("the copy is %v, inode shared %v: want a private 0600 copy", st.Mode().Perm(), os.SameFile(st, src))
	}
	if err := os.WriteFile(dst, []byte("CHANGED"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(s.dir(), ".a", "db")); string(b) != "DB" {
		t.Error("writing a runtime's copy changed the seed")
	}
}

func TestSeedCopyFailsWhole(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, s homeSeed, home string)
	}{
		{"a symlink in the seed", func(t *testing.T, s homeSeed, _ string) {
			p := filepath.Join(s.dir(), ".a", "db-wal")
			if err := os.Symlink("/etc/passwd", p); err != nil {
				t.Fatal(err)
			}
		}},
		{"a file already in the home", func(t *testing.T, s homeSeed, home string) {
			writeFile(t, filepath.Join(home, ".a", "db-wal"), "mine")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSeed(t)
			files := map[string]string{".a/db": "DB", ".a/db-wal": "WAL"}
			if tc.name == "a symlink in the seed" {
				delete(files, ".a/db-wal")
			}
			if err := s.build(context.Background(), scratchWriting(t, files)); err != nil {
				t.Fatal(err)
			}
			home := t.TempDir()
			tc.spoil(t, s, home)
			if n, err := s.copyInto(home); err == nil {
				t.Fatalf("copyInto: %d files, no error", n)
			}
			if _, err := os.Stat(filepath.Join(home, ".a", "db")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed copy left .a/db (%v)", err)
			}
		})
	}
}

func TestSeedBuildFails(t *testing.T) {
	s := testSeed(t)
	err := s.build(context.Background(), func(ctx context.Context, home string) error {
		writeFile(t, filepath.Join(home, ".a", "db"), "DB")
		return errors.New("agent exited")
	})
	if err == nil || !strings.Contains(err.Error(), "agent exited") {
		t.Fatalf("build: %v", err)
	}
	if ents, _ := os.ReadDir(s.cache); len(ents) != 0 || s.exists() {
		t.Errorf("a failed build left %v", ents)
	}
}

func TestSeedConcurrentBuilds(t *testing.T) {
	s := testSeed(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.build(context.Background(), scratchWriting(t, map[string]string{".a/db": "DB", ".a/db-wal": "WAL"}))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("builder %d: %v", i, err)
		}
	}
	ents, _ := os.ReadDir(s.cache)
	if len(ents) != 1 || ents[0].Name() != s.name {
		t.Errorf("the cache holds %v, want the seed only", ents)
	}
	if n, err := s.copyInto(t.TempDir()); n != 2 || err != nil {
		t.Errorf("copyInto: %d, %v", n, err)
	}
}

func TestSeedRemovesOthers(t *testing.T) {
	s := testSeed(t)
	keep := []string{"agent-x-0123456789abcdef0123", "other-0123456789abcdef0123", ".build-fresh",
		s.name + ".started", "other-0123456789abcdef0123.started", ".lock-other-0123456789abcdef0123"}
	keep = append(keep, "spares-"+s.name)
	gone := []string{"agent-ffffffffffffffffffff", ".build-stale", ".old-stale", ".prep-stale", "spares-agent-ffffffffffffffffffff",
		"agent-ffffffffffffffffffff.started", "agent-ffffffffffffffffffff.failed", ".lock-agent-ffffffffffffffffffff"}
	for _, n := range append(slices.Clone(keep), gone...) {
		if strings.Contains(n, ".started") || strings.Contains(n, ".failed") || strings.HasPrefix(n, ".lock-") {
			writeFile(t, filepath.Join(s.cache, n), "")
			continue
		}
		writeFile(t, filepath.Join(s.cache, n, "f"), "x")
	}
	old := time.Now().Add(-2 * seedStale)
	for _, n := range []string{".build-stale", ".old-stale", ".prep-stale"} {
		if err := os.Chtimes(filepath.Join(s.cache, n), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.build(context.Background(), scratchWriting(t, map[string]string{".a/db": "DB"})); err != nil {
		t.Fatal(err)
	}
	var got []string
	ents, _ := os.ReadDir(s.cache)
	for _, e := range ents {
		got = append(got, e.Name())
	}
	want := append(slices.Clone(keep), s.name)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the cache holds %v, want %v", got, want)
	}
}

func TestNewHomeSeed(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "agent")
	writeFile(t, bin, "#!/bin/sh\n")
	prof, _ := bundledProfile(ProfileCodexACP)
	t.Setenv(envSeeds, filepath.Join(t.TempDir(), "seeds"))
	s, ok, err := newHomeSeed(bin, prof)
	if err != nil || !ok || !strings.HasPrefix(s.dir(), filepath.Join(os.Getenv(envSeeds), "codex-acp-")) {
		t.Fatalf("newHomeSeed: %+v %v %v", s, ok, err)
	}
	for _, f := range prof.Seed {
		base := filepath.Base(f)
		if base == "installation_id" || strings.HasSuffix(base, "-shm") || strings.Contains(f, "shell_snapshots") {
			t.Errorf("codex-acp's seed lists %s", f)
		}
	}
	if _, ok, _ := newHomeSeed(bin, Profile{Name: "x"}); ok {
		t.Error("a profile without Seed has a seed")
	}
	t.Setenv(envSeeds, seedsOff)
	if _, ok, err := newHomeSeed(bin, prof); ok || err != nil {
		t.Errorf("seeding off: ok %v, err %v; want no seed and no error", ok, err)
	}
}

func TestSeedsDir(t *testing.T) {
	cache := t.TempDir()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"unset: the user's cache", map[string]string{"XDG_CACHE_HOME": cache, "HOME": "/h"}, filepath.Join(cache, "fabric", "acp-seeds")},
		{"unset: HOME's .cache", map[string]string{"HOME": "/h"}, "/h/.cache/fabric/acp-seeds"},
		{"named", map[string]string{envSeeds: "/seeds", "XDG_CACHE_HOME": cache}, "/seeds"},
		{"off", map[string]string{envSeeds: "off", "XDG_CACHE_HOME": cache}, ""},
		{"no cache directory", map[string]string{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"XDG_CACHE_HOME", "HOME"} {
				t.Setenv(k, tc.env[k]) // os.UserCacheDir reads the process's environment
			}
			if got := seedsDir(func(k string) string { return tc.env[k] }); got != tc.want {
				t.Errorf("seedsDir = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSeedNoteStart(t *testing.T) {
	s := testSeed(t)
	for i, want := range []bool{false, true, true} {
		again, err := s.noteStart()
		if err != nil || again != want {
			t.Fatalf("start %d: noteStart = %v, %v; want %v", i+1, again, err, want)
		}
	}
	if st, err := os.Stat(s.cache); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the seeds' directory: %v, %v; want 0700", st, err)
	}
}

func TestSeedBuildOnce(t *testing.T) {
	never := func(context.Context, string) error { return errors.New("scratch started") }
	files := map[string]string{".a/db": "DB"}

	t.Run("another builder holds the lock", func(t *testing.T) {
		s := testSeed(t)
		if err := os.MkdirAll(s.cache, 0o700); err != nil {
			t.Fatal(err)
		}
		unlock, err := lockFile(filepath.Join(s.cache, ".lock-"+s.name))
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		if err := s.buildOnce(context.Background(), never); !errors.Is(err, errSeedBusy) {
			t.Errorf("buildOnce: %v, want errSeedBusy", err)
		}
		if s.exists() || s.failedLately() {
			t.Error("a busy seed was built or marked failed")
		}
	})
	t.Run("built once", func(t *testing.T) {
		s := testSeed(t)
		if err := s.buildOnce(context.Background(), scratchWriting(t, files)); err != nil || !s.exists() {
			t.Fatalf("buildOnce: %v, exists %v", err, s.exists())
		}
		if err := s.buildOnce(context.Background(), never); err != nil {
			t.Errorf("a second buildOnce started a scratch: %v", err)
		}
	})
	t.Run("a dead builder's leftovers", func(t *testing.T) {
		s := testSeed(t)
		mine := filepath.Join(s.cache, ".build-"+s.name+"-123")
		theirs := filepath.Join(s.cache, ".build-other-0123456789abcdef0123-456")
		writeFile(t, filepath.Join(mine, "home", ".a", "db"), "HALF")
		writeFile(t, filepath.Join(theirs, "home", "x"), "LIVE")
		if err := s.buildOnce(context.Background(), scratchWriting(t, files)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(mine); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the seed's leftover is still there (%v)", err)
		}
		if _, err := os.Stat(theirs); err != nil {
			t.Errorf("another seed's fresh build was removed: %v", err)
		}
	})
	t.Run("a failure waits seedRetryAfter", func(t *testing.T) {
		s := testSeed(t)
		if err := s.buildOnce(context.Background(), never); err == nil {
			t.Fatal("buildOnce succeeded")
		}
		if !s.failedLately() {
			t.Fatal("a failed build is not recorded")
		}
		old := time.Now().Add(-seedRetryAfter - time.Minute)
		if err := os.Chtimes(filepath.Join(s.cache, s.name+".failed"), old, old); err != nil {
			t.Fatal(err)
		}
		if s.failedLately() {
			t.Error("a failure older than seedRetryAfter still counts")
		}
		if err := s.buildOnce(context.Background(), scratchWriting(t, files)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(s.cache, s.name+".failed")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a built seed keeps its failure record (%v)", err)
		}
	})
	t.Run("a cancelled build is no failure", func(t *testing.T) {
		s := testSeed(t)
		ctx, cancel := context.WithCancel(context.Background())
		err := s.buildOnce(ctx, func(ctx context.Context, home string) error {
			writeFile(t, filepath.Join(home, ".a", "db"), "HALF")
			cancel()
			return ctx.Err()
		})
		if err == nil || s.exists() || s.failedLately() {
			t.Errorf("cancelled: err %v, exists %v, failed %v; want an error, no seed, no failure", err, s.exists(), s.failedLately())
		}
		if left, _ := filepath.Glob(filepath.Join(s.cache, ".build-*")); len(left) != 0 {
			t.Errorf("a cancelled build left %v", left)
		}
	})
}

// TestSeedHome: the first start of a binary on the machine records it and
// builds nothing; the next one asks for a build; a built seed's files are
// copied (its directories are not) and a spare is asked for; a spare is
// moved in whole; a recent failure asks for no build; off is off.
func TestSeedHome(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "agent")
	writeFile(t, bin, "#!/bin/sh\n")
	t.Setenv(envSeeds, filepath.Join(t.TempDir(), "seeds"))
	s := &session{prof: Profile{Name: "agent", Seed: []string{".a/db", ".a/skills"}}}
	log := slog.New(slog.DiscardHandler)
	start := func(want seedWork) (homeSeed, string) {
		t.Helper()
		s.dirs.Home = t.TempDir()
		seed, work := s.seedHome(log, bin)
		if work != want {
			t.Fatalf("seedHome: work %d, want %d", work, want)
		}
		return seed, s.dirs.Home
	}
	start(seedNothing)
	seed, _ := start(seedBuild)
	if err := seed.buildOnce(context.Background(), scratchWriting(t, map[string]string{".a/db": "DB", ".a/skills/s/SKILL.md": "S"})); err != nil {
		t.Fatal(err)
	}
	_, h := start(seedRefill) // no spare yet: the files are copied
	if b, err := os.ReadFile(filepath.Join(h, ".a", "db")); err != nil || string(b) != "DB" {
		t.Errorf("the seeded home's file: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(h, ".a", "skills")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a copied seed brought a directory (%v)", err)
	}
	if err := seed.prepareSpare(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, h = start(seedRefill) // the spare is moved in
	if b, err := os.ReadFile(filepath.Join(h, ".a", "skills", "s", "SKILL.md")); err != nil || string(b) != "S" {
		t.Errorf("the spare's directory: %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(h); len(ents) != 1 || ents[0].Name() != ".a" {
		t.Errorf("the home holds %v, want .a only", ents)
	}

	if err := os.RemoveAll(seed.dir()); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(seed.cache, seed.name+".failed"), "")
	start(seedNothing) // right after a failed build
	t.Setenv(envSeeds, seedsOff)
	if _, h := start(seedNothing); h != "" {
		if ents, _ := os.ReadDir(h); len(ents) != 0 {
			t.Errorf("seeding off filled the home: %v", ents)
		}
	}
}

// TestSeedSpare: a spare is a private, writable copy of the whole seed,
// made once while one waits, taken whole by one runtime; a home that
// already has one of its entries takes none and keeps its own.
func TestSeedSpare(t *testing.T) {
	s := testSeed(t)
	s.files = append(s.files, ".a/skills")
	if err := s.prepareSpare(context.Background()); err != nil || s.exists() {
		t.Fatalf("a spare without a seed: %v", err)
	}
	if err := s.build(context.Background(), scratchWriting(t, map[string]string{".a/db": "DB", ".a/skills/s/SKILL.md": "S"})); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.prepareSpare(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if ents, _ := os.ReadDir(s.spares()); len(ents) != 1 {
		t.Fatalf("spares: %d, want 1", len(ents))
	}
	home := t.TempDir()
	if !s.takeSpare(home) {
		t.Fatal("no spare taken")
	}
	for _, rel := range []string{".a/db", ".a/skills/s/SKILL.md"} {
		p := filepath.Join(home, filepath.FromSlash(rel))
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := os.Stat(filepath.Join(s.dir(), filepath.FromSlash(rel)))
		if st.Mode().Perm() != 0o600 || os.SameFile(st, src) {
			t.Errorf("%s is %v, the seed's inode %v: want a private 0600 copy", rel, st.Mode().Perm(), os.SameFile(st, src))
		}
	}
	if ents, _ := os.ReadDir(home); len(ents) != 1 {
		t.Errorf("the home holds %v, want .a only", ents)
	}
	if s.takeSpare(t.TempDir()) {
		t.Error("one spare taken twice")
	}

	if err := s.prepareSpare(context.Background()); err != nil {
		t.Fatal(err)
	}
	home = t.TempDir()
	writeFile(t, filepath.Join(home, ".a", "mine"), "MINE")
	if s.takeSpare(home) {
		t.Error("a spare taken into a home that has .a")
	}
	if ents, _ := os.ReadDir(filepath.Join(home, ".a")); len(ents) != 1 || ents[0].Name() != "mine" {
		t.Errorf("the home's .a holds %v, want its own file only", ents)
	}
	if ents, _ := os.ReadDir(home); len(ents) != 1 {
		t.Errorf("a refused spare left %v", ents)
	}
}

// TestSeedBuildStop: Stop lets a background build finish, or cancels it
// after seedStopWait and waits for it to end; either way no build is left
// running and no half-made seed stays.
func TestSeedBuildStop(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	t.Run("finishes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			seed := testSeed(t)
			s := &session{}
			release := make(chan struct{})
			s.seedInBackground(log, seed, seedBuild, func(ctx context.Context, home string) error {
				<-release
				writeFile(t, filepath.Join(home, ".a", "db"), "DB")
				return nil
			})
			go func() { time.Sleep(seedStopWait / 2); close(release) }()
			s.stopSeedWork(context.Background())
			if !seed.exists() {
				t.Error("Stop did not let the build finish")
			}
		})
	})
	t.Run("cancelled", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			seed := testSeed(t)
			s := &session{}
			s.seedInBackground(log, seed, seedBuild, func(ctx context.Context, home string) error {
				writeFile(t, filepath.Join(home, ".a", "db"), "HALF")
				<-ctx.Done()
				return ctx.Err()
			})
			t0 := time.Now()
			s.stopSeedWork(context.Background())
			if waited := time.Since(t0); waited != seedStopWait {
				t.Errorf("Stop waited %s, want %s", waited, seedStopWait)
			}
			if seed.exists() || seed.failedLately() {
				t.Error("a cancelled build left a seed or a failure")
			}
			if left, _ := filepath.Glob(filepath.Join(seed.cache, ".build-*")); len(left) != 0 {
				t.Errorf("a cancelled build left %v", left)
			}
		})
	})
}

func TestProfileSeedPaths(t *testing.T) {
	for _, rel := range []string{"", ".", "..", "../x", "/abs", "a/../b", "a//b", "a/"} {
		if err := (Profile{Seed: []string{rel}}).check(); err == nil {
			t.Errorf("seed %q passed the check", rel)
		}
	}
	if err := (Profile{Seed: []string{".codex/state_5.sqlite"}}).check(); err != nil {
		t.Error(err)
	}
}
