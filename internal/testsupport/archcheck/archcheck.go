package archcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// BudgetFile is where the budgets live, relative to the repository root.
const BudgetFile = "scripts/harness-name-budget.json"

// A Name is one name the ratchet counts.
type Name struct {
	// Text is the name as listed: "codex", "pi-coding", "nvidia.fabric.".
	Text string
	// Word makes it match only whole words (split on camelCase, digits and
	// punctuation), so "pi" matches piHome and "pi-rpc" but not apiKey.
	// Otherwise it matches as a substring of the letters and digits, as
	// scripts/check-core-neutral's grep does (codex matches codexHome).
	Word bool
	// API marks an inference API family rather than a harness or package.
	API bool
}

// apiFamilies are the inference API families: free in API code (see
// APIAllowed), counted like harness names everywhere else. "gemini" is on
// both lists: it is the Gemini CLI harness and Google's API family, and the
// two cannot be told apart by the word, so it is free in API code and a
// harness name everywhere else.
var apiFamilies = []Name{
	{Text: "gemini", API: true}, {Text: "anthropic", API: true}, {Text: "openai", API: true},
}

// Names returns the names counted in the repository at root: NeutralScript's,
// the API families, and every adapter id and harness named by the bundled
// descriptors (adapters/*/*.fabric-adapter.json) and every package id
// (packages/*/fabric-package.json, when packages/ exists), so that a new
// adapter or package joins the list by being added. Names read from files
// match as whole words.
func Names(root string) ([]Name, error) {
	fixed, err := NeutralNames(root)
	if err != nil {
		return nil, err
	}
	names := slices.Clone(apiFamilies)
	seen := map[string]bool{}
	for _, n := range apiFamilies {
		seen[n.Text] = true
	}
	for _, n := range fixed {
		if !seen[n.Text] { // gemini is both: it stays an API family
			seen[n.Text] = true
			names = append(names, n)
		}
	}
	add := func(text string) {
		text = strings.ToLower(strings.TrimSpace(text))
		if text == "" || seen[text] || len(splitWords(text)) == 0 {
			return
		}
		seen[text] = true
		names = append(names, Name{Text: text, Word: true})
	}
	adapters, err := filepath.Glob(filepath.Join(root, "adapters", "*", "*.fabric-adapter.json"))
	if err != nil {
		return nil, err
	}
	for _, file := range adapters {
		var d struct {
			AdapterID string `json:"adapter_id"`
			Harness   string `json:"harness"`
		}
		if err := readJSON(file, &d); err != nil {
			return nil, err
		}
		if d.AdapterID == "" {
			return nil, fmt.Errorf("%s: no adapter_id", file)
		}
		add(d.AdapterID)
		add(d.Harness)
	}
	packages, err := filepath.Glob(filepath.Join(root, "packages", "*", "fabric-package.json"))
	if err != nil {
		return nil, err
	}
	for _, file := range packages {
		var p struct {
			Package struct {
				ID string `json:"id"`
			} `json:"package"`
		}
		if err := readJSON(file, &p); err != nil {
			return nil, err
		}
		if p.Package.ID == "" {
			return nil, fmt.Errorf("%s: no package.id", file)
		}
		add(p.Package.ID)
	}
	return names, nil
}

// NeutralScript is the core's zero-tolerance check, whose name list the
// ratchet reads so that the two never disagree.
const NeutralScript = "scripts/check-core-neutral"

// NeutralNames returns the names in NeutralScript's `names='...'` pattern:
// an alternative "(a|b)" lists substring names, `\b(a|b)\b` whole-word
// names, and a bare one (`nvidia\.fabric\.`) is a substring. Any other shape
// is an error, so that the script cannot drift from what is read here.
func NeutralNames(root string) ([]Name, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(NeutralScript)))
	if err != nil {
		return nil, err
	}
	var pattern string
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "names='"); ok {
			pattern, ok = strings.CutSuffix(rest, "'")
			if !ok {
				return nil, fmt.Errorf("%s: names= is not one quoted line", NeutralScript)
			}
			break
		}
	}
	if pattern == "" {
		return nil, fmt.Errorf("%s: no names='...' line", NeutralScript)
	}
	var names []Name
	for _, alt := range splitTop(pattern) {
		word := false
		if inner, ok := strings.CutPrefix(alt, `\b`); ok {
			if alt, ok = strings.CutSuffix(inner, `\b`); !ok {
				return nil, fmt.Errorf("%s: unbalanced \\b in %q", NeutralScript, alt)
			}
			word = true
		}
		list := []string{alt}
		if inner, ok := strings.CutPrefix(alt, "("); ok {
			if inner, ok = strings.CutSuffix(inner, ")"); !ok {
				return nil, fmt.Errorf("%s: unbalanced group %q", NeutralScript, alt)
			}
			list = strings.Split(inner, "|")
		}
		for _, n := range list {
			n = strings.ReplaceAll(n, `\.`, ".")
			if n == "" || strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789.-") != "" {
				return nil, fmt.Errorf("%s: %q is not a plain name", NeutralScript, n)
			}
			names = append(names, Name{Text: n, Word: word})
		}
	}
	return names, nil
}

// splitTop splits a pattern at every "|" outside parentheses.
func splitTop(pattern string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range pattern {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case '|':
			if depth == 0 {
				out = append(out, pattern[start:i])
				start = i + 1
			}
		}
	}
	return append(out, pattern[start:])
}

func readJSON(file string, v any) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// Free reports whether dir (slash-separated, relative to the root, "." for
// the root) is a location where names are allowed without a budget: an
// adapter's own tree (adapters/<name>/...), packages/, catalog/,
// conformance/profiles/, harnesses/, a benchmark of one harness
// (bench/<name>/...), docs/ and any testdata/. Test files are free
// everywhere and never counted.
func Free(dir string) bool {
	parts := strings.Split(dir, "/")
	if slices.Contains(parts, "testdata") {
		return true
	}
	switch parts[0] {
	case "packages", "catalog", "harnesses", "docs":
		return true
	case "adapters", "bench":
		return len(parts) > 1
	case "conformance":
		return len(parts) > 1 && parts[1] == "profiles"
	}
	return false
}

// APIAllowed reports whether dir is inference API code, where the API
// families (gemini, anthropic, openai) are free: modelstub/ and any
// directory whose path contains "inference" or "modelproxy".
func APIAllowed(dir string) bool {
	return dir == "modelstub" || strings.HasPrefix(dir, "modelstub/") ||
		strings.Contains(dir, "inference") || strings.Contains(dir, "modelproxy")
}

// A Mention is one string literal or identifier that names at least one
// counted name.
type Mention struct {
	File  string   // slash-separated, relative to the root
	Line  int      // 1-based
	Text  string   // the literal's value or the identifier
	Names []string // the names it matched
}

func (m Mention) String() string {
	return fmt.Sprintf("%s:%d: %s (%s)", m.File, m.Line, strconv.Quote(m.Text), strings.Join(m.Names, ", "))
}

type matcher struct {
	name     Name
	words    []string
	squashed string
}

func compile(names []Name) []matcher {
	ms := make([]matcher, 0, len(names))
	for _, n := range names {
		ms = append(ms, matcher{name: n, words: splitWords(n.Text), squashed: squash(n.Text)})
	}
	return ms
}

// match returns the names text mentions, leaving out the API families
// (gemini included) where api is true.
func match(ms []matcher, text string, api bool) []string {
	var ws []string
	var sq string
	var out []string
	for _, m := range ms {
		if api && m.name.API {
			continue
		}
		var hit bool
		if m.name.Word {
			if ws == nil {
				ws = splitWords(text)
			}
			hit = containsRun(ws, m.words)
		} else {
			if sq == "" {
				sq = squash(text)
			}
			hit = m.squashed != "" && strings.Contains(sq, m.squashed)
		}
		if hit && !slices.Contains(out, m.name.Text) {
			out = append(out, m.name.Text)
		}
	}
	return out
}

// splitWords splits s into lower-case words at every character that is
// neither a letter nor a digit, at camelCase boundaries (codexHome, HTTPServer)
// and between letters and digits.
func splitWords(s string) []string {
	var out []string
	rs := []rune(s)
	start := -1
	flush := func(i int) {
		if start >= 0 {
			out = append(out, strings.ToLower(string(rs[start:i])))
			start = -1
		}
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start >= 0 {
			prev := rs[i-1]
			switch {
			case unicode.IsLower(prev) && unicode.IsUpper(r),
				unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]),
				unicode.IsDigit(prev) != unicode.IsDigit(r):
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(rs))
	return out
}

// squash lowers s and keeps only its letters and digits.
func squash(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

func containsRun(ws, run []string) bool {
	if len(run) == 0 {
		return false
	}
	for i := 0; i+len(run) <= len(ws); i++ {
		if slices.Equal(ws[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// Count parses every non-test .go file under root outside the free
// locations and returns, per directory (slash-separated, "." for the root),
// the string literals and identifiers that mention a name; comments are
// never counted. It skips vendor/, node_modules/, testdata/, directories
// whose name starts with "." or "_" (as the go command does) and other git
// checkouts inside root. Nested modules (scale/temporal) are directories
// like any other.
func Count(root string, names []Name) (map[string][]Mention, error) {
	ms := compile(names)
	counts := map[string][]Mention{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			switch n := d.Name(); {
			case n == "vendor" || n == "node_modules" || n == "testdata",
				strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_"),
				Free(rel):
				return filepath.SkipDir
			}
			if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		dir := path.Dir(rel)
		found, err := countFile(fset, p, rel, ms, APIAllowed(dir))
		if err != nil {
			return err
		}
		if len(found) > 0 {
			counts[dir] = append(counts[dir], found...)
		}
		return nil
	})
	return counts, err
}

func countFile(fset *token.FileSet, file, rel string, ms []matcher, api bool) ([]Mention, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", rel, err)
	}
	var found []Mention
	ast.Inspect(f, func(n ast.Node) bool {
		var text string
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind != token.STRING && n.Kind != token.CHAR {
				return true
			}
			text = n.Value
			if v, err := strconv.Unquote(n.Value); err == nil {
				text = v
			}
		case *ast.Ident:
			text = n.Name
		default:
			return true
		}
		if hit := match(ms, text, api); len(hit) > 0 {
			found = append(found, Mention{File: rel, Line: fset.Position(n.Pos()).Line, Text: text, Names: hit})
		}
		return true
	})
	return found, nil
}

// ReadBudget decodes a budget file: a JSON object from directory to count.
func ReadBudget(data []byte) (map[string]int, error) {
	var b map[string]int
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("budget: %w", err)
	}
	if b == nil {
		return nil, errors.New("budget: not a JSON object")
	}
	return b, nil
}

// FormatBudget encodes a budget as the committed file holds it: sorted keys,
// two-space indent, a final newline.
func FormatBudget(b map[string]int) []byte {
	if b == nil {
		b = map[string]int{}
	}
	data, _ := json.MarshalIndent(b, "", "  ") // a map[string]int always encodes
	return append(data, '\n')
}

const lowerHow = "go test ./internal/testsupport/archcheck -run TestHarnessNameBudget -update"

// Check compares the counts with the budget and returns every problem,
// sorted: a directory above its budget (with each mention's file:line), a
// directory with mentions and no budget, a directory below its budget
// ("lower <dir> to N"), and a budget for a directory that is gone, has no
// mentions left, or is free. root is where the directories are looked up.
func Check(root string, counts map[string][]Mention, budget map[string]int) []string {
	var problems []string
	for dir, found := range counts {
		if Free(dir) {
			continue
		}
		n := len(found)
		limit, ok := budget[dir]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: %d harness-name mentions in a directory with no budget (move them under adapters/<name>/ or remove them):%s",
				dir, n, list(found)))
		case n > limit:
			problems = append(problems, fmt.Sprintf("%s: %d harness-name mentions, over its budget of %d in %s (move them under adapters/<name>/ or remove them):%s",
				dir, n, limit, BudgetFile, list(found)))
		case n < limit:
			problems = append(problems, fmt.Sprintf("%s: %d harness-name mentions, below its budget of %d: lower %s to %d in %s (%s)",
				dir, n, limit, dir, n, BudgetFile, lowerHow))
		}
	}
	for dir, limit := range budget {
		switch {
		case limit < 0:
			problems = append(problems, fmt.Sprintf("%s: budget %d is negative", dir, limit))
		case Free(dir):
			problems = append(problems, fmt.Sprintf("%s: is a free location and needs no budget: remove it from %s", dir, BudgetFile))
		case len(counts[dir]) > 0:
		case !isDir(filepath.Join(root, filepath.FromSlash(dir))):
			problems = append(problems, fmt.Sprintf("%s: budget names a directory that is gone: remove it from %s (%s)", dir, BudgetFile, lowerHow))
		default:
			problems = append(problems, fmt.Sprintf("%s: no harness-name mentions left, budget %d: lower %s to 0, that is remove it from %s (%s)",
				dir, limit, dir, BudgetFile, lowerHow))
		}
	}
	sort.Strings(problems)
	return problems
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func list(found []Mention) string {
	var b strings.Builder
	for _, m := range found {
		b.WriteString("\n\t")
		b.WriteString(m.String())
	}
	return b.String()
}

// Lower returns the budget lowered to the counts: every budgeted directory
// with mentions gets its count, every other entry goes. It refuses (and
// returns the reasons, with no budget) when a count is above its budget or
// a directory with mentions has none: budgets are raised only by hand, as a
// reviewed change.
func Lower(budget map[string]int, counts map[string][]Mention) (map[string]int, []string) {
	lowered := map[string]int{}
	var refused []string
	for dir, found := range counts {
		if Free(dir) {
			continue
		}
		n := len(found)
		if limit, ok := budget[dir]; !ok || n > limit {
			refused = append(refused, fmt.Sprintf("%s: %d mentions, budget %d: -update only lowers budgets", dir, n, limit))
			continue
		}
		lowered[dir] = n
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		return nil, refused
	}
	return lowered, nil
}

// CompareBase returns a problem for every budget above the one at the merge
// base, including a directory the base has no budget for: a branch can lower
// budgets, never raise them.
func CompareBase(budget, base map[string]int) []string {
	var problems []string
	for dir, limit := range budget {
		old, ok := base[dir]
		switch {
		case limit <= old:
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: budget %d is new; the merge base has none for it (budgets only go down)", dir, limit))
		default:
			problems = append(problems, fmt.Sprintf("%s: budget %d is above %d at the merge base (budgets only go down)", dir, limit, old))
		}
	}
	sort.Strings(problems)
	return problems
}
