package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

// Every state path resolveStatePaths accepts stays inside the home,
// whatever a package declares.
func FuzzResolveStatePaths(f *testing.F) {
	f.Add("c", "~/x/../y", "s", "sessions")
	f.Add("c", "../etc", "c", "x")
	f.Add("a", "/abs", "b", "~/")
	home := "/runtime/home"
	f.Fuzz(func(t *testing.T, id1, p1, id2, p2 string) {
		paths, err := resolveStatePaths([]contract.PackageStatePath{{ID: id1, Path: p1}, {ID: id2, Path: p2}}, home)
		if err != nil {
			return
		}
		for id, p := range paths {
			if p == home || !strings.HasPrefix(p, home+string(filepath.Separator)) {
				t.Fatalf("state path %q resolved to %q, outside %s", id, p, home)
			}
		}
	})
}

func TestResolveStatePaths(t *testing.T) {
	d := contract.PackageDescriptor{StatePaths: []contract.PackageStatePath{{ID: "c", Path: "~/.app/config.json"}, {ID: "s", Path: "sessions"}}}
	got, err := resolveStatePaths(d.StatePaths, "/h")
	if err != nil || got["c"] != "/h/.app/config.json" || got["s"] != "/h/sessions" {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"../x", "/etc", "~/../x", "", "~/", "a/../../b", ".", "~/.", "x/.."} {
		d.StatePaths[0].Path = bad
		if _, err := resolveStatePaths(d.StatePaths, "/h"); err == nil || !strings.Contains(err.Error(), "state_paths[0].path") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	d.StatePaths[0].Path, d.StatePaths[1].ID = "x", "c"
	if _, err := resolveStatePaths(d.StatePaths, "/h"); err == nil || !strings.Contains(err.Error(), "declared twice") {
		t.Errorf("duplicate id: %v", err)
	}
}
