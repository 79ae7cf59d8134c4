//go:build linux

package acp_test

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // to read the seed's databases

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestLiveHomeSeed: by default (the seeds' directory is a temporary one
// here) codex-acp's first runtime on the machine only records the start;
// the second builds the home seed in the background once it is ready
// (its migrated databases, their WALs folded in, and its unpacked skills:
// no log row, no identity) and a spare copy of it; the third moves the
// spare in whole (0600 copies, not the seed's inodes) and leaves another,
// which the fourth takes. Every runtime answers turns.
func TestLiveHomeSeed(t *testing.T) {
	livetest.Short(t, "the real codex-acp from harnesses/acp")
	cache := t.TempDir()
	t.Setenv("FABRIC_ACP_SEEDS", cache)
	l := newLive(t, cases[0], &modelstub.Script{Default: &modelstub.Reply{Text: "SEEDED_OK"}})

	for i := range 4 {
		t0 := time.Now()
		rt := l.start(map[string]any{"permission_policy": "allow"})
		t.Logf("start %d: %s", i, time.Since(t0).Round(time.Millisecond))
		res := l.Invoke(t, rt, "hello")
		if res.Status != contract.StatusSucceeded || !strings.Contains(res.Output.(string), "SEEDED_OK") {
			t.Fatalf("runtime %d: %s %v %+v", i, res.Status, res.Output, res.Error)
		}
		found := runtimeFile(t, l.StateDir, "state_5.sqlite")
		st, err := os.Stat(found)
		if err != nil {
			t.Fatal(err)
		}
		seeded := st.Mode().Perm() == 0o600 // codex-acp makes its databases 0644
		if seeded != (i >= 2) {
			t.Errorf("runtime %d: %s is %v; want a seed's copy (0600) from the third start on", i, found, st.Mode().Perm())
		}
		// A spare brings the skills (0600 copies); unseeded, codex
		// unpacks them (0644).
		skill, err := os.Stat(filepath.Join(filepath.Dir(found), "skills", ".system", ".codex-system-skills.marker"))
		if err != nil || (skill.Mode().Perm() == 0o600) != (i >= 2) {
			t.Errorf("runtime %d: the skills' marker: %v %v; want a spare's copy from the third start on", i, skill, err)
		}
		if i >= 2 {
			if seed, err := os.Stat(filepath.Join(seedDirs(t, cache)[0], ".codex", "state_5.sqlite")); err != nil || os.SameFile(seed, st) {
				t.Errorf("runtime %d's state_5.sqlite is the seed's file (%v), not a copy", i, err)
			}
		}
		if _, err := rt.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if seeds := seedDirs(t, cache); len(seeds) != min(i, 1) {
			t.Fatalf("after runtime %d: seeds %v, want %d", i, seeds, min(i, 1))
		}
	}
	seed := seedDirs(t, cache)[0]
	var names []string
	ents, _ := os.ReadDir(filepath.Join(seed, ".codex"))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	t.Logf("seed %s: %v", filepath.Base(seed), names)
	for _, want := range []string{"state_5.sqlite", "goals_1.sqlite", "memories_1.sqlite", "logs_2.sqlite", "skills"} {
		if !slices.Contains(names, want) {
			t.Errorf("the seed lacks %s", want)
		}
	}
	for _, n := range names {
		if n != "skills" && (strings.HasSuffix(n, "-shm") || strings.HasSuffix(n, "-wal") || !strings.HasSuffix(n, ".sqlite")) {
			t.Errorf("the seed holds %s", n)
		}
	}
	if skills, _ := os.ReadDir(filepath.Join(seed, ".codex", "skills")); len(skills) != 1 || skills[0].Name() != ".system" {
		t.Errorf("the seed's skills: %v, want .system only", skills)
	}
	checkSeedEmpty(t, filepath.Join(seed, ".codex"))
}

// checkSeedEmpty: the seed's databases hold their schema and nothing a
// run writes: no row outside the migrations' bookkeeping (logs included),
// no AUTOINCREMENT counter past 0, and no file of the seed holds anything
// shaped like an identity (a UUID, which is what installation_id and
// codex's thread and process ids are).
func checkSeedEmpty(t *testing.T, dir string) {
	t.Helper()
	uuid := regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	work := t.TempDir() // SQLite writes beside a database it opens; the seed is read-only
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if m := uuid.Find(b); m != nil {
			t.Errorf("%s holds %q", p, m)
		}
		if filepath.Dir(p) != dir {
			return nil
		}
		return os.WriteFile(filepath.Join(work, d.Name()), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Bookkeeping rows each database may hold: its migrations, and
	// codex's backfill state (one row: no run has anything to backfill).
	allowed := map[string]int{"_sqlx_migrations": -1, "sqlite_sequence": -1, "backfill_state": 1}
	dbs, _ := filepath.Glob(filepath.Join(work, "*.sqlite"))
	for _, p := range dbs {
		db, err := sql.Open("sqlite", p)
		if err != nil {
			t.Fatal(err)
		}
		if check := queryStrings(t, db, "PRAGMA integrity_check"); !slices.Equal(check, []string{"ok"}) {
			t.Errorf("%s: integrity check: %v", filepath.Base(p), check)
		}
		tables := queryStrings(t, db, "SELECT name FROM sqlite_master WHERE type = 'table'")
		if len(tables) < 2 {
			t.Errorf("%s: tables %v: no migrated schema", filepath.Base(p), tables)
		}
		for _, tab := range tables {
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM "` + tab + `"`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if max, ok := allowed[tab]; n > 0 && (!ok || (max >= 0 && n > max)) {
				t.Errorf("%s: table %s holds %d rows", filepath.Base(p), tab, n)
			}
		}
		if slices.Contains(tables, "sqlite_sequence") {
			for _, seq := range queryStrings(t, db, "SELECT name || '=' || seq FROM sqlite_sequence") {
				if !strings.HasSuffix(seq, "=0") {
					t.Errorf("%s: sqlite_sequence %s: a row was inserted once", filepath.Base(p), seq)
				}
			}
		}
		db.Close()
	}
	if len(dbs) == 0 {
		t.Error("no database in the seed")
	}
}

func queryStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestLiveSeedBuilderKilled: the host is killed while its background
// build's scratch start runs (held there by a wrapper): the scratch agent
// dies with it, no seed is left half-made, and the next build (the next
// start) removes the killed one's leftovers and makes the seed.
func TestLiveSeedBuilderKilled(t *testing.T) {
	livetest.Short(t, "the real codex-acp from harnesses/acp")
	cache := t.TempDir()
	t.Setenv("FABRIC_ACP_SEEDS", cache)
	l := newLive(t, cases[0], &modelstub.Script{Default: &modelstub.Reply{Text: "OK"}})
	var agent string
	for _, d := range filepath.SplitList(harnessBin(t, "codex-acp")) {
		if p := filepath.Join(d, "codex-acp"); agent == "" {
			if _, err := os.Stat(p); err == nil {
				agent = p
			}
		}
	}
	dir := t.TempDir()
	hold := filepath.Join(dir, "hold")
	wrapper := filepath.Join(dir, "codex-acp")
	script := "#!/bin/sh\n" +
		"case \"$FABRIC_ACP_RUNTIME_HOME\" in */.build-*) [ -e '" + hold + "' ] && exec sleep 60;; esac\n" +
		"exec '" + agent + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := map[string]any{"permission_policy": "allow", "command": wrapper}

	rt := l.start(settings) // the first start: recorded, nothing built
	if _, err := rt.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hold, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rt = l.start(settings) // the second: builds in the background
	var scratch []int
	for deadline := time.Now().Add(20 * time.Second); len(scratch) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		scratch = agentPids(cache)
	}
	if len(scratch) == 0 {
		t.Fatal("no scratch start of the agent")
	}
	_ = syscall.Kill(-rt.HostPid(), syscall.SIGKILL)
	var left []int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if left = agentPids(cache); len(left) == 0 {
			break
		}
	}
	for _, p := range left {
		t.Errorf("left after the host was killed: pid %d", p)
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	if seeds := seedDirs(t, cache); len(seeds) != 0 {
		t.Errorf("a killed build left seeds %v", seeds)
	}
	builds, _ := filepath.Glob(filepath.Join(cache, ".build-*"))
	t.Logf("the killed build left %d build directories", len(builds))
	_, _ = rt.Stop(context.Background())

	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	rt = l.start(settings) // the third: builds again, to the end
	for deadline := time.Now().Add(30 * time.Second); len(seedDirs(t, cache)) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
	}
	if _, err := rt.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if seeds := seedDirs(t, cache); len(seeds) != 1 {
		t.Fatalf("seeds after a whole build: %v, want one", seeds)
	}
	if builds, _ := filepath.Glob(filepath.Join(cache, ".build-*")); len(builds) != 0 {
		t.Errorf("the killed build's leftovers are still there: %v", builds)
	}
	if left := agentPids(cache); len(left) != 0 {
		t.Errorf("processes left: %v", left)
	}
}

// seedDirs are the codex-acp seeds in cache.
func seedDirs(t *testing.T, cache string) []string {
	t.Helper()
	var out []string
	ents, _ := os.ReadDir(cache)
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "codex-acp-") {
			out = append(out, filepath.Join(cache, e.Name()))
		}
	}
	return out
}

// runtimeFile is the one file named name in a runtime home's .codex under
// the state directory.
func runtimeFile(t *testing.T, stateDir, name string) string {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(stateDir, "*", "*", "home", ".codex", name))
	if len(found) == 0 {
		found, _ = filepath.Glob(filepath.Join(stateDir, "*", "*", "*", "home", ".codex", name))
	}
	if len(found) != 1 {
		t.Fatalf("want one %s under the state directory, found %v", name, found)
	}
	return found[0]
}

// TestSeedsNeverInUserCache: no test of this package writes home seeds to
// the user's cache (the default): TestMain turns seeds off unless the
// environment names a directory, and newLive points them at the test's
// own. TestConformance, which starts codex-acp without newLive, once
// wrote ~/.cache/fabric/acp-seeds.
func TestSeedsNeverInUserCache(t *testing.T) {
	if v := os.Getenv("FABRIC_ACP_SEEDS"); v == "" {
		t.Fatal("FABRIC_ACP_SEEDS is unset in the test binary: a codex-acp runtime would seed the user's cache")
	}
}
