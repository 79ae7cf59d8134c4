package deptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Module is this module's path; InitWork checks only its packages.
const Module = "github.com/fabric-runtime/fabric"

// goList runs `go list -deps -json pkg` and returns every dependency's
// import path with the module it belongs to ("" for the standard library).
func goList(t testing.TB, pkg string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Module,Standard", pkg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr.Bytes())
	}
	deps := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath string
			Standard   bool
			Module     *struct{ Path string }
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		mod := ""
		if p.Module != nil {
			mod = p.Module.Path
		}
		deps[p.ImportPath] = mod
	}
	return deps
}

// BadDeps fails t for every package pkg links transitively whose import
// path equals a key of bad or lies below it (key "go.yaml.in/yaml/v4"
// matches its internal packages too); a key ending in "$" matches its
// path alone (Module+"$" is the root package, not the whole module). The
// value says why it is banned. It returns the dependencies it walked, for
// further checks.
func BadDeps(t testing.TB, pkg string, bad map[string]string) map[string]string {
	t.Helper()
	deps := goList(t, pkg)
	if len(deps) == 0 {
		t.Fatalf("go list -deps %s: no packages", pkg)
	}
	found := map[string][]string{} // banned prefix -> packages linked under it
	for dep := range deps {
		for prefix := range bad {
			if exact, ok := strings.CutSuffix(prefix, "$"); ok && dep == exact ||
				!ok && (dep == prefix || strings.HasPrefix(dep, prefix+"/")) {
				found[prefix] = append(found[prefix], dep)
			}
		}
	}
	prefixes := make([]string, 0, len(found))
	for prefix := range found {
		prefixes = append(prefixes, prefix)
	}
	sort.Strings(prefixes)
	for _, prefix := range prefixes {
		linked := found[prefix]
		sort.Strings(linked)
		t.Errorf("%s must not link %s (%s): %d package(s), first %s", pkg, prefix, bad[prefix], len(linked), linked[0])
	}
	return deps
}

// Build builds the command pkg into a temporary directory and returns the
// binary's path.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "prog")
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// InitAllocs is one package's allocations at init.
type InitAllocs struct {
	Package string
	Allocs  int
}

var initLine = regexp.MustCompile(`^init (\S+) @.* (\d+) allocs$`)

// Inits runs bin with args and GODEBUG=inittrace=1 and returns the
// allocations of every package initialized, in order. The exit status is
// not looked at: the trace is complete before main runs.
func Inits(t testing.TB, bin string, env []string, args ...string) []InitAllocs {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), env...), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run()
	var inits []InitAllocs
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		m := initLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		inits = append(inits, InitAllocs{Package: m[1], Allocs: n})
	}
	if len(inits) == 0 {
		t.Fatalf("%s printed no init trace:\n%s", bin, stderr.Bytes())
	}
	return inits
}

// InitAllowance is how many allocations a package of this module may make
// at init: a handful of errors.New and sync.OnceValue closures, not a
// regexp compiled or a document parsed (each of those is tens to hundreds).
const InitAllowance = 16

// InitWork runs the built command bin once and fails t for every package
// of this module that allocates more than InitAllowance times at init:
// such work is paid by every process that links the package, whether or
// not it uses it, and belongs behind a sync.OnceValue at first use.
// known names packages whose init work is known and owned elsewhere (the
// value says where); they are logged, not failed.
func InitWork(t testing.TB, known map[string]string, bin string, env []string, args ...string) {
	t.Helper()
	for _, in := range Inits(t, bin, env, args...) {
		if strings.HasPrefix(in.Package, Module+"/") || in.Package == Module {
			if why, ok := known[in.Package]; ok && in.Allocs > InitAllowance {
				t.Logf("%s: %d allocations at init, known: %s", in.Package, in.Allocs, why)
				continue
			}
			if in.Allocs > InitAllowance {
				t.Errorf("%s: %d allocations at init (allowed %d): make the work lazy (sync.OnceValue at first use)", in.Package, in.Allocs, InitAllowance)
			}
		}
	}
}
