// Package treemanifest takes a manifest of a directory tree: one entry per
// file, directory and symlink, with its type, mode, size and sha256 (or
// link target), sorted by path. Its digest, "fm1:" and the hex sha256 of
// the manifest's lines, is the one tree digest Fabric uses: a package's
// digest, and the before/after record of a read-only operation. It does
// not depend on file order or modification times; it changes with any
// content, mode, type or link target.
package treemanifest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Prefix starts every digest this package makes.
const Prefix = "fm1:"

// IgnoreFile, in a tree's root, lists paths (one per line, slash
// separated, relative to the root; "dir/" or "dir" for a whole directory;
// "#" starts a comment) left out of the manifest. The file itself is in
// the manifest.
const IgnoreFile = ".fabric-package-ignore"

// Entry is one path of a tree.
type Entry struct {
	Path   string      `json:"path"` // slash separated, relative to the root; "." is not listed
	Type   string      `json:"type"` // file | dir | symlink
	Mode   fs.FileMode `json:"mode"` // permission bits only
	Size   int64       `json:"size,omitempty"`
	SHA256 string      `json:"sha256,omitempty"` // files
	Link   string      `json:"link,omitempty"`   // symlinks: the target as written
}

// line is the entry as hashed: fields separated by spaces, the path last
// and quoted so that any name is one unambiguous line.
func (e Entry) line() string {
	v := e.SHA256
	if e.Type == "symlink" {
		v = strconv.Quote(e.Link)
	}
	if v == "" {
		v = "-"
	}
	return fmt.Sprintf("%s %04o %d %s %s", e.Type, uint32(e.Mode), e.Size, v, strconv.Quote(e.Path))
}

// Manifest is a tree's entries, sorted by path.
type Manifest struct {
	Entries []Entry `json:"entries"`
}

// Options tune Take and TakeFS.
type Options struct {
	// Ignore lists more paths to leave out, as in IgnoreFile.
	Ignore []string
	// NoIgnoreFile does not read the root's IgnoreFile.
	NoIgnoreFile bool
	// CanonicalModes records every file as 0644, every directory as 0755
	// and every symlink as 0777 instead of their permission bits, so that
	// a tree embedded in a binary (whose files carry no modes) has the
	// digest of the same tree on disk. A package digest uses it.
	CanonicalModes bool
}

// Canonical modes (Options.CanonicalModes).
const (
	CanonicalFileMode    fs.FileMode = 0o644
	CanonicalDirMode     fs.FileMode = 0o755
	CanonicalSymlinkMode fs.FileMode = 0o777
)

// Take walks root (which must be a directory; symlinks below it are
// recorded, not followed) and returns its manifest. Anything that is not a
// regular file, directory or symlink is an error naming it.
func Take(root string, opts Options) (*Manifest, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("treemanifest: %s is not a directory", root)
	}
	return take(os.DirFS(root), root, opts)
}

// TakeFS is Take over the root of fsys (an embedded tree, say). A symlink
// is recorded when fsys reports one and implements fs.ReadLinkFS.
func TakeFS(fsys fs.FS, opts Options) (*Manifest, error) {
	return take(fsys, "", opts)
}

// take walks fsys; root names it in errors.
func take(fsys fs.FS, root string, opts Options) (*Manifest, error) {
	ignore := slices.Clone(opts.Ignore)
	if !opts.NoIgnoreFile {
		more, err := readIgnore(fsys)
		if err != nil {
			return nil, err
		}
		ignore = append(ignore, more...)
	}
	skip := map[string]bool{}
	for _, p := range ignore {
		skip[path.Clean(strings.TrimSuffix(p, "/"))] = true
	}
	named := func(rel string) string {
		if root == "" {
			return rel
		}
		return filepath.Join(root, filepath.FromSlash(rel))
	}
	m := &Manifest{}
	hs := newHasher()
	err := fs.WalkDir(fsys, ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel == "." {
			if !d.IsDir() {
				return fmt.Errorf("treemanifest: %s is not a directory", named(rel))
			}
			return nil
		}
		if skip[rel] {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e, err := describe(rel, info, opts, func() (string, error) { return hs.file(fsys, rel) }, func() (string, error) { return fs.ReadLink(fsys, rel) })
		if err != nil {
			return fmt.Errorf("treemanifest: %s: %w", named(rel), err)
		}
		m.Entries = append(m.Entries, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(m.Entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return m, nil
}

func readIgnore(fsys fs.FS) ([]string, error) {
	f, err := fsys.Open(IgnoreFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("treemanifest: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	return out, sc.Err()
}

// hasher hashes files with one buffer and one sha256 state, reused for
// every file of a walk (a buffer per file was most of a walk's garbage).
type hasher struct {
	h   hash.Hash
	buf []byte
}

func newHasher() *hasher { return &hasher{h: sha256.New(), buf: make([]byte, 32<<10)} }

func (hs *hasher) file(fsys fs.FS, rel string) (string, error) {
	f, err := fsys.Open(rel)
	if err != nil {
		return "", err
	}
	defer f.Close()
	hs.h.Reset()
	// Only Read: a file's WriteTo or the hash's ReadFrom would bring their
	// own buffers.
	if _, err := io.CopyBuffer(writerOnly{hs.h}, readerOnly{f}, hs.buf); err != nil {
		return "", err
	}
	return hex.EncodeToString(hs.h.Sum(nil)), nil
}

type readerOnly struct{ io.Reader }
type writerOnly struct{ io.Writer }

// describe is the entry of one path from its info, hashing a file and
// reading a link only when it is one.
func describe(name string, info fs.FileInfo, opts Options, hashFile, readLink func() (string, error)) (Entry, error) {
	e := Entry{Path: name, Mode: info.Mode().Perm()}
	var err error
	switch {
	case info.Mode().IsRegular():
		e.Type, e.Size, e.Mode = "file", info.Size(), canonical(opts, e.Mode, CanonicalFileMode)
		e.SHA256, err = hashFile()
	case info.IsDir():
		e.Type, e.Mode = "dir", canonical(opts, e.Mode, CanonicalDirMode)
	case info.Mode()&fs.ModeSymlink != 0:
		e.Type, e.Mode = "symlink", canonical(opts, e.Mode, CanonicalSymlinkMode)
		e.Link, err = readLink()
	default:
		err = fmt.Errorf("unsupported file type %v", info.Mode().Type())
	}
	return e, err
}

func canonical(opts Options, mode, canon fs.FileMode) fs.FileMode {
	if opts.CanonicalModes {
		return canon
	}
	return mode
}

// Stat is the entry of the one path p (a file, directory or symlink, not
// followed), named by p itself: for a caller that watches single paths
// beside whole trees. A directory's entry does not cover its contents.
func Stat(p string, opts Options) (Entry, error) {
	info, err := os.Lstat(p)
	if err != nil {
		return Entry{}, err
	}
	dir, base := filepath.Split(p)
	if dir == "" {
		dir = "."
	}
	e, err := describe(filepath.ToSlash(p), info, opts, func() (string, error) { return newHasher().file(os.DirFS(dir), base) }, func() (string, error) { return os.Readlink(p) })
	if err != nil {
		return Entry{}, fmt.Errorf("treemanifest: %s: %w", p, err)
	}
	return e, nil
}

// Lines is the manifest as hashed, one line per entry with a newline each.
func (m *Manifest) Lines() string {
	var b strings.Builder
	for _, e := range m.Entries {
		b.WriteString(e.line())
		b.WriteByte('\n')
	}
	return b.String()
}

// Digest is Prefix and the hex sha256 of Lines.
func (m *Manifest) Digest() string {
	sum := sha256.Sum256([]byte(m.Lines()))
	return Prefix + hex.EncodeToString(sum[:])
}

// SHA256 is the hex sha256 of Lines, the digest without its prefix (for
// in-toto subjects and catalog digests, which name the algorithm apart).
func (m *Manifest) SHA256() string { return strings.TrimPrefix(m.Digest(), Prefix) }

// Change is one difference between two manifests.
type Change struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`             // added | removed | modified
	Before *Entry `json:"before,omitempty"` // removed, modified
	After  *Entry `json:"after,omitempty"`  // added, modified
}

func (c Change) String() string { return c.Kind + " " + c.Path }

// Diff lists what changed from before to after, sorted by path.
func Diff(before, after *Manifest) []Change {
	var out []Change
	i, j := 0, 0
	for i < len(before.Entries) || j < len(after.Entries) {
		switch {
		case j >= len(after.Entries) || (i < len(before.Entries) && before.Entries[i].Path < after.Entries[j].Path):
			e := before.Entries[i]
			out = append(out, Change{Path: e.Path, Kind: "removed", Before: &e})
			i++
		case i >= len(before.Entries) || after.Entries[j].Path < before.Entries[i].Path:
			e := after.Entries[j]
			out = append(out, Change{Path: e.Path, Kind: "added", After: &e})
			j++
		default:
			b, a := before.Entries[i], after.Entries[j]
			if b != a {
				out = append(out, Change{Path: a.Path, Kind: "modified", Before: &b, After: &a})
			}
			i++
			j++
		}
	}
	return out
}
