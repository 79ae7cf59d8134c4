//go:build linux

package acp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestLiveHomeSeed: codex-acp's first runtime builds the home seed (its
// migrated databases, no log, identity or skills) in $FABRIC_ACP_SEEDS;
// that runtime and the next start from their own copies of
// it (0600 files the adapter wrote, no inode shared with the seed or
// each other) and answer turns; the next start is timed against the
// first.
func TestLiveHomeSeed(t *testing.T) {
	livetest.Short(t, "the real codex-acp from harnesses/acp")
	cache := t.TempDir()
	t.Setenv("FABRIC_ACP_SEEDS", cache)
	l := newLive(t, cases[0], &modelstub.Script{Default: &modelstub.Reply{Text: "SEEDED_OK"}})

	var homes []string
	for i := range 2 {
		t0 := time.Now()
		rt := l.start(map[string]any{"permission_policy": "allow"})
		t.Logf("start %d: %s", i, time.Since(t0).Round(time.Millisecond))
		res := l.Invoke(t, rt, "hello")
		if res.Status != contract.StatusSucceeded || !strings.Contains(res.Output.(string), "SEEDED_OK") {
			t.Fatalf("runtime %d: %s %v %+v", i, res.Status, res.Output, res.Error)
		}
		found, _ := filepath.Glob(filepath.Join(l.StateDir, "*", "*", "home", ".codex", "state_5.sqlite"))
		if len(found) == 0 {
			found, _ = filepath.Glob(filepath.Join(l.StateDir, "*", "*", "*", "home", ".codex", "state_5.sqlite"))
		}
		if len(found) != 1 {
			t.Fatalf("runtime %d: want one state_5.sqlite under the state directory, found %v", i, found)
		}
		homes = append(homes, found[0])
		st, err := os.Stat(found[0])
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 { // codex-acp makes its databases 0644
			t.Errorf("runtime %d: %s is %v: not the seed's copy", i, found[0], st.Mode().Perm())
		}
		seeds, _ := filepath.Glob(filepath.Join(cache, "codex-acp-*"))
		if len(seeds) != 1 {
			t.Fatalf("seeds: %v, want one", seeds)
		}
		var names []string
		ents, _ := os.ReadDir(filepath.Join(seeds[0], ".codex"))
		for _, e := range ents {
			names = append(names, e.Name())
			if strings.HasPrefix(e.Name(), "logs_") || e.Name() == "installation_id" || e.Name() == "skills" || strings.HasSuffix(e.Name(), "-shm") {
				t.Errorf("the seed holds %s", e.Name())
			}
		}
		if i == 0 {
			t.Logf("seed %s: %v", filepath.Base(seeds[0]), names)
		}
		if !sameInode(t, filepath.Join(seeds[0], ".codex", "state_5.sqlite"), found[0], homes[0]) {
			t.Errorf("runtime %d's state_5.sqlite shares an inode with the seed or the other runtime", i)
		}
		if _, err := rt.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 1 {
		t.Errorf("the seeds' directory holds %d entries, want the seed only", len(ents))
	}
}

// sameInode reports false when home's file shares no inode with the
// seed's or (another runtime's) other.
func sameInode(t *testing.T, seed, home, other string) bool {
	t.Helper()
	ino := func(p string) uint64 {
		st, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return st.Sys().(*syscall.Stat_t).Ino
	}
	h := ino(home)
	if h == 0 || h == ino(seed) {
		return false
	}
	return home == other || h != ino(other)
}
