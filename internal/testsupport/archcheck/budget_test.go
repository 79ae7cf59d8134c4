package archcheck

import (
	"context"
	"errors"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "lower "+BudgetFile+" to today's counts (never raises a budget)")

// repoRoot is this module's root: the test runs in internal/testsupport/archcheck.
const repoRoot = "../../.."

// The repository's harness-name mentions stay within their budgets, every
// budget is as low as the counts allow, and no budget is above the one at
// the merge base (see MergeBase for which base).
func TestHarnessNameBudget(t *testing.T) {
	counts := countTree(t, repoRoot)
	logCounts(t, counts)
	file := filepath.Join(repoRoot, filepath.FromSlash(BudgetFile))
	budget := readBudgetFile(t, file)
	if *update {
		lowered, refused := Lower(budget, counts)
		if refused != nil {
			t.Fatalf("-update refuses to raise a budget; raise it by hand, as a reviewed change:\n%s", strings.Join(refused, "\n"))
		}
		if !maps.Equal(lowered, budget) {
			if err := os.WriteFile(file, FormatBudget(lowered), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("lowered %s", BudgetFile)
		}
		budget = lowered
	}
	for _, p := range Check(repoRoot, counts, budget) {
		t.Error(p)
	}

	ctx := context.Background()
	commit, ref, err := MergeBase(ctx, repoRoot, os.Getenv(EnvBase))
	if errors.Is(err, ErrNoBase) {
		t.Logf("could not compare %s with a merge base: %v (the count checks above still ran)", BudgetFile, err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	base, found, err := BudgetAt(ctx, repoRoot, commit)
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Logf("%s is not at the merge base %.12s with %s: nothing to compare with yet", BudgetFile, commit, ref)
		return
	}
	for _, p := range CompareBase(budget, base) {
		t.Errorf("%s (merge base %.12s with %s)", p, commit, ref)
	}
}

// logCounts lists the counts per directory under -v.
func logCounts(t *testing.T, counts map[string][]Mention) {
	t.Helper()
	if !testing.Verbose() {
		return
	}
	dirs := make([]string, 0, len(counts))
	for dir := range counts {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		t.Logf("%s: %d", dir, len(counts[dir]))
	}
}
