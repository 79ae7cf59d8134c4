package archcheck

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

// Every package under adapters/ exports only what exportAllow lists for it,
// and every such package has a list.
func TestAdapterExports(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join(repoRoot, "adapters"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(repoRoot, "adapters", d.Name())
		got, vars, ok, err := exported(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if !ok {
			continue // no Go package here
		}
		seen++
		allow, listed := exportAllow[d.Name()]
		if !listed {
			t.Errorf("adapters/%s exports %v but has no entry in exportAllow (exports_allow_test.go)", d.Name(), got)
			continue
		}
		for _, n := range got {
			if !slices.Contains(allow, n) {
				t.Errorf("adapters/%s exports %s: a user composes New, ID, descriptors, Settings and Packages; unexport it (or, if callers compose it, add it to exportAllow)", d.Name(), n)
			}
		}
		for _, n := range allow {
			if !slices.Contains(got, n) {
				t.Errorf("adapters/%s no longer exports %s: take it out of exportAllow", d.Name(), n)
			}
		}
		for _, n := range vars {
			t.Errorf("adapters/%s exports the variable %s, which any importer can change: make it a function or a constant", d.Name(), n)
		}
	}
	if seen < 8 {
		t.Fatalf("found %d Go packages under adapters/, want the bundled adapters", seen)
	}
}

// TestExported checks the lister on a package of its own making.
func TestExported(t *testing.T) {
	dir := t.TempDir()
	src := map[string]string{
		"a.go":      "package a\n\nconst (\n\tCodeX = \"x\"\n\tinner = 1\n)\n\nvar Descriptor, other []byte\n\ntype Settings struct{ Field int }\n\ntype hidden struct{}\n\nfunc New() {}\n\nfunc (Settings) Method() {}\n\nfunc helper() {}\n",
		"a_test.go": "package a\n\nconst TestOnly = 1\n",
		"never.go":  "//go:build fabric_never_built\n\npackage a\n\nconst NeverBuilt = 1\n",
	}
	for name, s := range src {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, vars, ok, err := exported(dir)
	if err != nil || !ok {
		t.Fatalf("exported: %v, %v", ok, err)
	}
	if want := []string{"CodeX", "Descriptor", "New", "Settings"}; !slices.Equal(got, want) {
		t.Errorf("exported = %v, want %v", got, want)
	}
	if want := []string{"Descriptor"}; !slices.Equal(vars, want) {
		t.Errorf("exported variables = %v, want %v", vars, want)
	}
	if _, _, ok, err := exported(t.TempDir()); ok || err != nil {
		t.Errorf("exported of an empty dir = %v, %v; want no package", ok, err)
	}
}

// exported lists the package-level exported identifiers of the non-test Go
// files in dir that build for this platform, sorted, and which of them are
// variables; ok is false when dir holds no Go package.
func exported(dir string) (names, vars []string, ok bool, err error) {
	bp, err := build.ImportDir(dir, 0)
	if _, none := err.(*build.NoGoError); none {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	fset := token.NewFileSet()
	for _, f := range bp.GoFiles {
		af, err := parser.ParseFile(fset, filepath.Join(dir, f), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, false, err
		}
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						if sp.Name.IsExported() {
							names = append(names, sp.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							if n.IsExported() {
								names = append(names, n.Name)
								if d.Tok == token.VAR {
									vars = append(vars, n.Name)
								}
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(names)
	sort.Strings(vars)
	return names, vars, true, nil
}
