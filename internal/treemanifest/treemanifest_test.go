package treemanifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, body := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func digest(t *testing.T, root string) string {
	t.Helper()
	m, err := Take(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m.Digest()
}

func TestDigestIsStableAndSensitive(t *testing.T) {
	files := map[string]string{"a.json": "{}", "bin/run": "#!/bin/sh\n", "docs/x.md": "x"}
	root := tree(t, files)
	base := digest(t, root)
	if !strings.HasPrefix(base, Prefix) || len(base) != len(Prefix)+64 {
		t.Fatalf("digest %q", base)
	}
	// Another tree written in another order, with other mtimes: the same.
	other := t.TempDir()
	for _, p := range []string{"docs/x.md", "bin/run", "a.json"} {
		full := filepath.Join(other, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(files[p]), 0o644)
		old := time.Now().Add(-time.Hour)
		os.Chtimes(full, old, old)
	}
	if d := digest(t, other); d != base {
		t.Errorf("same content, other order and mtimes: %s != %s", d, base)
	}

	edits := []struct {
		name string
		edit func(root string)
	}{
		{"content", func(r string) { os.WriteFile(filepath.Join(r, "a.json"), []byte("{ }"), 0o644) }},
		{"mode", func(r string) { os.Chmod(filepath.Join(r, "bin/run"), 0o755) }},
		{"new file", func(r string) { os.WriteFile(filepath.Join(r, "b"), nil, 0o644) }},
		{"removed file", func(r string) { os.Remove(filepath.Join(r, "docs/x.md")) }},
		{"symlink", func(r string) { os.Symlink("a.json", filepath.Join(r, "link")) }},
	}
	for _, tc := range edits {
		t.Run(tc.name, func(t *testing.T) {
			r := tree(t, files)
			tc.edit(r)
			if d := digest(t, r); d == base {
				t.Errorf("%s changed nothing in the digest", tc.name)
			}
		})
	}

	// A symlink's target is part of the digest.
	r1, r2 := tree(t, files), tree(t, files)
	os.Symlink("a.json", filepath.Join(r1, "link"))
	os.Symlink("docs/x.md", filepath.Join(r2, "link"))
	if digest(t, r1) == digest(t, r2) {
		t.Error("re-pointing a symlink changed nothing")
	}
}

func TestIgnoreFile(t *testing.T) {
	files := map[string]string{"a.json": "{}", IgnoreFile: "# local state\nnode_modules/\nlog.txt\n"}
	root := tree(t, files)
	base := digest(t, root)
	os.MkdirAll(filepath.Join(root, "node_modules", "x"), 0o755)
	os.WriteFile(filepath.Join(root, "node_modules", "x", "i.js"), []byte("1"), 0o644)
	os.WriteFile(filepath.Join(root, "log.txt"), []byte("1"), 0o644)
	if d := digest(t, root); d != base {
		t.Errorf("ignored paths changed the digest")
	}
	os.WriteFile(filepath.Join(root, IgnoreFile), []byte("node_modules/\n"), 0o644)
	if d := digest(t, root); d == base {
		t.Errorf("editing the ignore file changed nothing")
	}
}

func TestDiff(t *testing.T) {
	root := tree(t, map[string]string{"keep": "1", "change": "1", "drop": "1"})
	before, _ := Take(root, Options{})
	os.WriteFile(filepath.Join(root, "change"), []byte("2"), 0o644)
	os.Remove(filepath.Join(root, "drop"))
	os.WriteFile(filepath.Join(root, "new"), nil, 0o600)
	after, _ := Take(root, Options{})
	var got []string
	for _, c := range Diff(before, after) {
		got = append(got, c.String())
	}
	want := "modified change,removed drop,added new"
	if strings.Join(got, ",") != want {
		t.Errorf("diff = %v, want %s", got, want)
	}
	if len(Diff(after, after)) != 0 {
		t.Error("a manifest differs from itself")
	}
}

func TestNotADirectory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	os.WriteFile(f, nil, 0o644)
	if _, err := Take(f, Options{}); err == nil {
		t.Error("a file was taken as a tree")
	}
}

func TestTakeFSWithCanonicalModesMatchesDisk(t *testing.T) {
	files := map[string]string{"a.json": "{}", "bin/run": "#!/bin/sh\n", "docs/x.md": "x", IgnoreFile: "scratch\n", "scratch/tmp": "t"}
	root := tree(t, files)
	// Modes on disk that an embedded tree does not carry.
	if err := os.Chmod(filepath.Join(root, "bin/run"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "docs"), 0o700); err != nil {
		t.Fatal(err)
	}
	mapfs := fstest.MapFS{}
	for p, body := range files {
		mapfs[p] = &fstest.MapFile{Data: []byte(body), Mode: 0o444}
	}
	canon := Options{CanonicalModes: true}
	disk, err := Take(root, canon)
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := TakeFS(mapfs, canon)
	if err != nil {
		t.Fatal(err)
	}
	if disk.Digest() != embedded.Digest() {
		t.Errorf("canonical modes: disk %s != fs %s\n%s---\n%s", disk.Digest(), embedded.Digest(), disk.Lines(), embedded.Lines())
	}
	if strings.Contains(disk.Lines(), "scratch") {
		t.Errorf("the ignore file was not honoured:\n%s", disk.Lines())
	}
	plainDisk, err := Take(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	plainFS, err := TakeFS(mapfs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if plainDisk.Digest() == plainFS.Digest() {
		t.Error("without canonical modes the modes were not recorded")
	}
	// Canonical modes still see content.
	mapfs["docs/x.md"] = &fstest.MapFile{Data: []byte("y")}
	changed, err := TakeFS(mapfs, canon)
	if err != nil {
		t.Fatal(err)
	}
	if changed.Digest() == embedded.Digest() {
		t.Error("a content change under canonical modes changed nothing")
	}
}
