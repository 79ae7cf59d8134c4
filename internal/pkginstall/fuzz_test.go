package pkginstall

import (
	"os"
	"testing"
)

// The lockfile parser takes a package's lockfile as given: it never
// panics, and what it accepts has only node_modules/ keys with versions.
func FuzzParseLockfile(f *testing.F) {
	if b, err := os.ReadFile("testdata/codex/npm/package-lock.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"lockfileVersion":3,"packages":{"":{},"node_modules/a":{"version":"1"}}}`))
	f.Add([]byte(`{"lockfileVersion":1}`))
	f.Add([]byte(`{"lockfileVersion":3,"packages":{"../x":{"version":"1"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := parseLockfile(data, "package-lock.json")
		if err != nil {
			return
		}
		for k, e := range l.Packages {
			if k != "" && !e.Link && (e.Version == "" || installedName(k) == "") {
				t.Fatalf("accepted %q: %+v", k, e)
			}
		}
	})
}

// sha512Of never panics and returns 64 bytes when it accepts.
func FuzzSHA512Of(f *testing.F) {
	f.Add("sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==")
	f.Add("sha1-x sha512-y")
	f.Add("00")
	f.Fuzz(func(t *testing.T, s string) {
		if b, err := sha512Of(s); err == nil && len(b) != 64 {
			t.Fatalf("sha512Of(%q) = %d bytes", s, len(b))
		}
	})
}

// install.json is read at every client start: a malformed one is an
// error, never a panic, and an accepted one keeps its bins and Node
// inside the install.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"_type":"fabric.install/v1alpha1","package":{"id":"a","version":"1"},"manifest":{"digest":"fm1:x","entries":[{"path":"x","type":"file","mode":420}]},"bins":[{"name":"x","path":"node_modules/.bin/x","resolved":"x","sha256":"0000000000000000000000000000000000000000000000000000000000000000"}],"artifacts":[],"package_digest":"","platform":""}`))
	f.Add([]byte(`{"_type":"fabric.install/v1alpha1","node":{"bin_dir":"/abs"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseRecord(data, "a@1")
		if err != nil {
			return
		}
		in := &Installed{Root: "/data/packages/a@1", Record: *r}
		for _, d := range in.BinDirs() {
			if !in.Contains(d) {
				t.Fatalf("bin dir %s outside the install", d)
			}
		}
	})
}

// A packages key must name the package it installs: after its last
// node_modules/, a name with no empty path segment.
func TestParseLockfileKeys(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want string // "" accepted
	}{
		{"node_modules/a", ""},
		{"node_modules/@s/n", ""},
		{"node_modules/a/node_modules/@s/n", ""},
		{"node_modules/", `packages key "node_modules/" names no package`},
		{"node_modules/a/", `packages key "node_modules/a/" names no package`},
		{"node_modules/@s//n", `packages key "node_modules/@s//n" names no package`},
		{"node_modules/a/node_modules/", `packages key "node_modules/a/node_modules/" names no package`},
		{"lib/a", `packages key "lib/a" is not under node_modules/`},
	} {
		data := []byte(`{"lockfileVersion":3,"packages":{"":{},"` + tc.key + `":{"version":"1"}}}`)
		_, err := parseLockfile(data, "package-lock.json")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.key, err)
		case tc.want != "" && (err == nil || err.Error() != "package-lock.json: "+tc.want):
			t.Errorf("%q: error %v, want %q", tc.key, err, tc.want)
		}
	}
}
