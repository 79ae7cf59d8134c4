package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// The local descriptor reader never panics, and every state path it
// resolves stays inside the home.
func FuzzDecodeDescriptor(f *testing.F) {
	f.Add([]byte(`{"contract_version":"fabric.package/v1alpha1","package":{"id":"a","version":"1","publisher":"p"},"state_paths":[{"id":"c","path":"~/x/../y","class":"config"}],"operations":[{"id":"o","mode":"read","argv":["true"]}]}`))
	f.Add([]byte(`{"contract_version":"fabric.package/v1alpha1","package":{"id":"a"},"state_paths":[{"id":"c","path":"../etc"}]}`))
	f.Add([]byte(`{"contract_version":"x"} {}`))
	f.Add([]byte(`{"unknown":1}`))
	home := "/runtime/home"
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := decodeDescriptor(data)
		if err != nil {
			return
		}
		paths, err := resolveStatePaths(d.StatePaths, home)
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
	d, err := decodeDescriptor([]byte(`{"contract_version":"fabric.package/v1alpha1","package":{"id":"a"},"state_paths":[{"id":"c","path":"~/.app/config.json"},{"id":"s","path":"sessions"}]}`))
	if err != nil {
		t.Fatal(err)
	}
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
