package archcheck

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

const fixture = "testdata/tree"

// copyTree copies the fixture tree into a fresh directory, so that a case
// can add and remove files.
func copyTree(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func readBudgetFile(t *testing.T, file string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadBudget(data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func countTree(t *testing.T, root string) map[string][]Mention {
	t.Helper()
	names, err := Names(root)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := Count(root, names)
	if err != nil {
		t.Fatal(err)
	}
	return counts
}

// The fixture tree's counts: literals and camelCase-split identifiers
// (package clauses included), never comments, test files or testdata;
// adapters/x, bench/h and the API families in API code are free; the
// descriptor's adapter id and harness and the package id are names.
func TestCountFixture(t *testing.T) {
	counts := countTree(t, fixture)
	got := map[string]int{}
	for dir, found := range counts {
		got[dir] = len(found)
	}
	want := readBudgetFile(t, filepath.Join(fixture, filepath.FromSlash(BudgetFile)))
	if !maps.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	var texts []string
	for _, m := range counts["internal/camel"] {
		texts = append(texts, m.Text)
	}
	if want := []string{"codexHome", "piHost"}; !slices.Equal(texts, want) {
		t.Errorf("internal/camel mentions %q, want %q", texts, want)
	}
}

// Table of ratchet cases over the fixture tree: each edits a copy of the
// tree and its budget, then runs Check and, against the fixture merge-base
// budget (testdata/base-budget.json, given directly), CompareBase.
func TestRatchetFixtures(t *testing.T) {
	base := readBudgetFile(t, "testdata/base-budget.json")
	cases := []struct {
		name   string
		add    map[string]string // files written into the tree
		remove []string          // paths removed from the tree
		budget map[string]int    // entries set in the budget (-1 deletes)
		want   []string          // substrings of the problems, in order; none means it passes
	}{
		{name: "as committed"},
		{
			name: "new literal in a budgeted directory",
			add:  map[string]string{"internal/core/more.go": "package core\n\nconst More = \"claude\"\n"},
			want: []string{"internal/core: 3 harness-name mentions, over its budget of 2", "internal/core/more.go:3: \"claude\" (claude)"},
		},
		{
			name: "camelCase identifier is counted",
			add:  map[string]string{"internal/core/home.go": "package core\n\nvar claudeHome = 1\n"},
			want: []string{"over its budget of 2", "internal/core/home.go:3: \"claudeHome\" (claude)"},
		},
		{
			name: "removal without lowering the budget",
			add:  map[string]string{"internal/core/core.go": "package core\n\nconst Name = \"codex\"\n"},
			want: []string{"internal/core: 1 harness-name mentions, below its budget of 2: lower internal/core to 1"},
		},
		{
			name:   "last mention removed",
			remove: []string{"internal/client/client.go"},
			want:   []string{"internal/client: no harness-name mentions left, budget 1: lower internal/client to 0"},
		},
		{
			name:   "budgeted directory gone",
			remove: []string{"internal/client"},
			want:   []string{"internal/client: budget names a directory that is gone"},
		},
		{
			name: "comment-only mention passes",
			add:  map[string]string{"internal/fresh/fresh.go": "// Package fresh names codex and claude only here.\npackage fresh\n\n// pi too.\nconst x = 1\n"},
		},
		{
			name: "mention in adapters/x passes",
			add:  map[string]string{"adapters/x/more.go": "package x\n\nvar claudeHome = \"nvidia.fabric.x\"\n"},
		},
		{
			name: "mention in a test file passes",
			add:  map[string]string{"internal/fresh/fresh_test.go": "package fresh\n\nconst x = \"codex\"\n"},
		},
		{
			name: "new directory with a mention",
			add:  map[string]string{"internal/fresh/fresh.go": "package fresh\n\nconst x = \"codex\"\n"},
			want: []string{"internal/fresh: 1 harness-name mentions in a directory with no budget", "internal/fresh/fresh.go:3"},
		},
		{
			name: "API family outside API code counts",
			add:  map[string]string{"internal/client/more.go": "package client\n\nconst anthropicURL = \"\"\n"},
			want: []string{"internal/client: 2 harness-name mentions, over its budget of 1"},
		},
		{
			name: "API family in inference code is free",
			add:  map[string]string{"internal/inference/i.go": "package inference\n\nconst anthropicURL, geminiURL = \"\", \"\"\n"},
		},
		{
			name: "budget raised above the merge base",
			add: map[string]string{
				"internal/core/more.go": "package core\n\nconst More, Other = \"claude\", \"pi\"\n",
			},
			budget: map[string]int{"internal/core": 4},
			want:   []string{"internal/core: budget 4 is above 3 at the merge base"},
		},
		{
			name:   "budget for a directory the merge base has none for",
			add:    map[string]string{"internal/fresh/fresh.go": "package fresh\n\nconst x = \"codex\"\n"},
			budget: map[string]int{"internal/fresh": 1},
			want:   []string{"internal/fresh: budget 1 is new; the merge base has none for it"},
		},
		{
			name:   "budget for a free location",
			budget: map[string]int{"adapters/x": 1},
			want:   []string{"adapters/x: is a free location and needs no budget", "adapters/x: budget 1 is new"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := copyTree(t)
			for rel, src := range c.add {
				p := filepath.Join(root, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, rel := range c.remove {
				if err := os.RemoveAll(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
					t.Fatal(err)
				}
			}
			budget := readBudgetFile(t, filepath.Join(root, filepath.FromSlash(BudgetFile)))
			for dir, n := range c.budget {
				budget[dir] = n
			}
			problems := append(Check(root, countTree(t, root), budget), CompareBase(budget, base)...)
			if len(c.want) == 0 {
				for _, p := range problems {
					t.Errorf("unexpected problem: %s", p)
				}
				return
			}
			all := strings.Join(problems, "\n")
			rest := all
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("problems do not say %q (in this order):\n%s", w, all)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// -update's Lower keeps what the counts allow and refuses to raise.
func TestLower(t *testing.T) {
	counts := countTree(t, fixture)
	budget := readBudgetFile(t, filepath.Join(fixture, filepath.FromSlash(BudgetFile)))
	budget["internal/core"] = 5
	budget["internal/gone"] = 2
	lowered, refused := Lower(budget, counts)
	if refused != nil {
		t.Fatalf("refused %q", refused)
	}
	if lowered["internal/core"] != 2 || len(lowered) != len(budget)-1 {
		t.Errorf("lowered to %v", lowered)
	}
	budget["internal/core"] = 1
	delete(budget, "internal/client")
	lowered, refused = Lower(budget, counts)
	want := []string{
		"internal/client: 1 mentions, budget 0: -update only lowers budgets",
		"internal/core: 2 mentions, budget 1: -update only lowers budgets",
	}
	if lowered != nil || !slices.Equal(refused, want) {
		t.Errorf("Lower raising = %v, %q; want nil, %q", lowered, refused, want)
	}
}

func TestSplitWords(t *testing.T) {
	for in, want := range map[string]string{
		"codexHome":           "codex home",
		"HTTPServer":          "http server",
		"pi-rpc":              "pi rpc",
		"apiKey":              "api key",
		"fabric.scripted.v1":  "fabric scripted v 1",
		"InferenceOpenAIChat": "inference open ai chat",
		"mini_swe":            "mini swe",
		"--":                  "",
	} {
		if got := strings.Join(splitWords(in), " "); got != want {
			t.Errorf("splitWords(%q) = %q, want %q", in, got, want)
		}
	}
}

// The fixed list is read from scripts/check-core-neutral itself.
func TestNeutralNames(t *testing.T) {
	names, err := NeutralNames(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	var words, subs []string
	for _, n := range names {
		if n.Word {
			words = append(words, n.Text)
		} else {
			subs = append(subs, n.Text)
		}
	}
	if want := []string{"cline", "kilo", "pi", "pi-coding"}; !slices.Equal(words, want) {
		t.Errorf("whole-word names %q, want %q", words, want)
	}
	for _, s := range []string{"codex", "scripted", "mini-swe", "nvidia.fabric."} {
		if !slices.Contains(subs, s) {
			t.Errorf("substring names %q lack %q", subs, s)
		}
	}
	for _, bad := range []string{"names='(codex|cla.*de)'\n", "names='\\b(pi)'\n", "names=(codex)\n"} {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "scripts"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(NeutralScript)), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := NeutralNames(root); err == nil {
			t.Errorf("NeutralNames accepted %q", bad)
		}
	}
}

// MergeBase and BudgetAt against a throwaway repository: a branch's base
// is where it left main; a commit before the budget file has none; no main
// and no ref, or a main with no common commit, means nothing to compare,
// while a named ref that gives no merge base fails.
func TestMergeBase(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		livetest.Missing(t, "git", "apt-get install git", err)
	}
	ctx := context.Background()
	root := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		out, err := git(ctx, root, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	commit := func(budget string) string {
		t.Helper()
		if budget != "" {
			p := filepath.Join(root, filepath.FromSlash(BudgetFile))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(budget), 0o644); err != nil {
				t.Fatal(err)
			}
			run("add", BudgetFile)
		}
		run("-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "commit", "--allow-empty", "-q", "-m", "c")
		return run("rev-parse", "HEAD")
	}
	run("init", "-q", "-b", "trunk")
	if _, _, err := MergeBase(ctx, root, ""); !errors.Is(err, ErrNoBase) {
		t.Fatalf("no commit: %v, want ErrNoBase", err)
	}
	before := commit("")
	if _, found, err := BudgetAt(ctx, root, before); found || err != nil {
		t.Errorf("BudgetAt before the file = %v, %v", found, err)
	}
	if _, _, err := MergeBase(ctx, root, ""); !errors.Is(err, ErrNoBase) {
		t.Errorf("no main: %v, want ErrNoBase", err)
	}
	if _, _, err := MergeBase(ctx, root, "no-such-ref"); err == nil || errors.Is(err, ErrNoBase) {
		t.Errorf("a named ref that does not resolve: %v, want a failure", err)
	}
	onMain := commit(`{"a": 2}`)
	run("branch", "main")
	run("checkout", "-q", "-b", "work")
	commit(`{"a": 3}`)
	got, ref, err := MergeBase(ctx, root, "")
	if err != nil || got != onMain || ref != "main" {
		t.Fatalf("MergeBase = %s, %s, %v; want %s from main", got, ref, err, onMain)
	}
	b, found, err := BudgetAt(ctx, root, got)
	if err != nil || !found || b["a"] != 2 {
		t.Errorf("BudgetAt merge base = %v, %v, %v", b, found, err)
	}
	if got, ref, err := MergeBase(ctx, root, "HEAD~2"); err != nil || got != before || ref != "HEAD~2" {
		t.Errorf("MergeBase with %s=HEAD~2 = %s, %s, %v; want %s", EnvBase, got, ref, err, before)
	}
	run("checkout", "-q", "--orphan", "lone")
	commit("")
	if _, _, err := MergeBase(ctx, root, ""); !errors.Is(err, ErrNoBase) {
		t.Errorf("main shares no commit with HEAD: %v, want ErrNoBase", err)
	}
	if _, _, err := MergeBase(ctx, root, "main"); err == nil || errors.Is(err, ErrNoBase) {
		t.Errorf("%s=main sharing no commit with HEAD: %v, want a failure", EnvBase, err)
	}
}
