package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// ruleCite is a parenthesized citation of interfaces-contract rules in a
// comment or a test's name: "(S2)", "(L2, T1)", "(S1-S9, L3, P1-P4)".
var ruleCite = regexp.MustCompile(`\(((?:[SLPTACQ][0-9]+(?:-[SLPTACQ][0-9]+)?)(?:, ?[SLPTACQ][0-9]+(?:-[SLPTACQ][0-9]+)?)*)\)`)

// ruleDef is how docs/design/interfaces.md defines a rule: a list item
// that starts with the id in bold.
var ruleDef = regexp.MustCompile(`(?m)^- \*\*([SLPTACQ][0-9]+)\*\* `)

// TestInterfaceRulesResolve: every interfaces-contract rule id Go source
// cites, in comments and strings, test files included (a range S1-S9
// cites each id in it), is defined in docs/design/interfaces.md, so
// a reader can look each one up; and the document defines no id twice.
func TestInterfaceRulesResolve(t *testing.T) {
	root := moduleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "design", "interfaces.md"))
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, m := range ruleDef.FindAllStringSubmatch(string(doc), -1) {
		if defined[m[1]] {
			t.Errorf("docs/design/interfaces.md defines %s twice", m[1])
		}
		defined[m[1]] = true
	}
	if len(defined) == 0 {
		t.Fatal("docs/design/interfaces.md defines no rule")
	}
	missing := map[string][]string{}
	cited := 0
	walk(t, root, func(p string) {
		if !strings.HasSuffix(p, ".go") {
			return
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
			return
		}
		rel, _ := filepath.Rel(root, p)
		for _, m := range ruleCite.FindAllStringSubmatch(string(src), -1) {
			for _, cite := range strings.Split(m[1], ",") {
				for _, id := range expand(strings.TrimSpace(cite)) {
					cited++
					if !defined[id] && !slices.Contains(missing[id], rel) {
						missing[id] = append(missing[id], rel)
					}
				}
			}
		}
	})
	if cited == 0 {
		t.Fatal("no comment cites a rule: the pattern is broken")
	}
	ids := make([]string, 0, len(missing))
	for id := range missing {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t.Errorf("rule %s is cited in %s but not defined in docs/design/interfaces.md", id, strings.Join(missing[id], ", "))
	}
}

// expand is the ids a citation names: "L3" is L3, "S1-S9" is S1 to S9.
func expand(cite string) []string {
	from, to, isRange := strings.Cut(cite, "-")
	if !isRange || from[0] != to[0] {
		return []string{cite}
	}
	a, err1 := strconv.Atoi(from[1:])
	b, err2 := strconv.Atoi(to[1:])
	if err1 != nil || err2 != nil || a > b {
		return []string{cite}
	}
	var out []string
	for i := a; i <= b; i++ {
		out = append(out, from[:1]+strconv.Itoa(i))
	}
	return out
}
