package adapterkit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

func TestWorkspace(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	ptr := func(s string) *string { return &s }
	cases := []struct {
		name string
		ws   *string
		want string
		bad  bool
	}{
		{"given", ptr(dir), dir, false},
		{"unset means the working directory", nil, dir, false},
		{"empty means the working directory", ptr(""), dir, false},
		{"relative becomes absolute", ptr("."), dir, false},
		{"missing", ptr(filepath.Join(dir, "missing")), "", true},
		{"a file", ptr(file), "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var in StartInput
			in.RuntimeContext.Environment = contract.EnvironmentHandle{Workspace: c.ws}
			got, err := Workspace(in)
			if c.bad {
				if err == nil {
					t.Fatalf("Workspace = %q, want an error", got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Workspace = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}
