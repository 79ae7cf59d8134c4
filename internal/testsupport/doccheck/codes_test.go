package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// codeName is how a constant holding a reported code is named: CodeX,
// codeX (a code an unexported constant reports), ReasonX, IssueX.
var codeName = regexp.MustCompile(`^(Code|code|Reason|reason|Issue)[A-Z]`)

// skipped are directories with no code of this module's own: installed
// npm packages, test data, nested modules.
var skipped = map[string]bool{"harnesses": true, "node_modules": true, ".git": true, "testdata": true, ".cache": true, "tests": true}

func moduleRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(file))))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root %s: %v", root, err)
	}
	return root
}

func walk(t *testing.T, root string, fn func(path string)) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && skipped[d.Name()] {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			fn(p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEveryCodeIsDocumented: each string constant named like a code, in
// the module's non-test Go files, appears in backticks in some Markdown
// file of the repository (docs/errors.md and the pages it links, an
// adapter's README). A code nobody can look up is a bug.
func TestEveryCodeIsDocumented(t *testing.T) {
	root := moduleRoot(t)
	var docs strings.Builder
	type code struct{ file, name, value string }
	var codes []code
	walk(t, root, func(p string) {
		switch {
		case strings.HasSuffix(p, ".md"):
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			docs.Write(b)
		case strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go"):
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, p)
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if !codeName.MatchString(n.Name) || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						v, err := strconv.Unquote(lit.Value)
						if err == nil && v != "" {
							codes = append(codes, code{rel, n.Name, v})
						}
					}
				}
			}
		}
	})
	if len(codes) < 100 {
		t.Fatalf("found only %d codes: the scan is broken", len(codes))
	}
	all := docs.String()
	var missing []string
	for _, c := range codes {
		if !strings.Contains(all, "`"+c.value+"`") {
			missing = append(missing, c.file+": "+c.name+" = "+strconv.Quote(c.value))
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d of %d codes are in no Markdown file (document them, in backticks, in docs/errors.md or the page it links):\n%s", len(missing), len(codes), strings.Join(missing, "\n"))
	}
	t.Logf("%d codes, every one documented", len(codes))
}
