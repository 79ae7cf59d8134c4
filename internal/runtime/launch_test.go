package runtime

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/fabric-runtime/fabric/internal/hostproto"
)

func TestHostEnv(t *testing.T) {
	p := testPlan(t, scriptedV2, nil)
	kept := "KEPT=" + strings.Repeat("x", 3) // built at run time: its own string
	base := []string{"PATH=/usr/bin", kept, hostproto.EnvArtifacts + "=/stale", "NOVALUE", hostproto.EnvRuntimeID + "=other"}
	tests := []struct {
		name      string
		extraPath []string
		artifacts string
		want      []string // entries that must be present
		absent    []string // names that must not be
		path      string
	}{
		{name: "base", want: []string{kept, "FABRIC_RUNTIME_ID=rt", hostproto.EnvBundledAdapter + "=fabric.scripted"}, absent: []string{hostproto.EnvArtifacts, "NOVALUE"}, path: "/usr/bin"},
		{name: "toolchain first on PATH", extraPath: []string{"/tc/bin", "/tc/node"}, want: []string{"PATH=/tc/bin:/tc/node:/usr/bin"}, path: "/tc/bin:/tc/node:/usr/bin"},
		{name: "artifacts", artifacts: "/a", want: []string{hostproto.EnvArtifacts + "=/a", hostproto.EnvHome + "=/home"}, path: "/usr/bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, path := hostEnv(p, &Options{Env: base, ExtraPath: tt.extraPath}, "rt", "/home", tt.artifacts)
			if path != tt.path {
				t.Errorf("PATH %q, want %q", path, tt.path)
			}
			if !slices.IsSorted(env) {
				t.Errorf("not sorted: %q", env)
			}
			for _, w := range tt.want {
				if !slices.Contains(env, w) {
					t.Errorf("%q missing from %q", w, env)
				}
			}
			for _, name := range tt.absent {
				if slices.ContainsFunc(env, func(kv string) bool { return kv == name || strings.HasPrefix(kv, name+"=") }) {
					t.Errorf("%s in %q", name, env)
				}
			}
			// An entry the host's environment does not change is the
			// caller's string, not a copy per host.
			i := slices.Index(env, kept)
			if i < 0 || unsafe.StringData(env[i]) != unsafe.StringData(kept) {
				t.Errorf("%q was copied", kept)
			}
		})
	}
}
