package pkginstall

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// Verify checks the install against its install.json right before
// something in it is executed: the whole tree is walked, every path must
// be in the manifest with the same type, mode, size and link target, and
// nothing may be added. A file is hashed when its stat fingerprint
// differs from the recorded one (the fast path for an untouched file is a
// stat), and the bins' resolved files and their package.json are always
// hashed. Any difference is a *contract.RuntimeError with Code
// artifact_digest_mismatch and Path the file.
func Verify(in *Installed) error {
	r := &in.Record
	pkg := in.Entry()
	want := make(map[string]*treemanifest.Entry, len(r.Manifest.Entries))
	for i := range r.Manifest.Entries {
		want[r.Manifest.Entries[i].Path] = &r.Manifest.Entries[i]
	}
	always := map[string]bool{}
	for _, b := range r.Bins {
		always[b.Resolved] = true
		if dir, ok := packageDirOf(b.Resolved); ok {
			always[dir+"/package.json"] = true
		}
	}
	fail := func(rel, format string, args ...any) error {
		return mismatch(contract.StageStart, pkg, filepath.Join(in.Root, filepath.FromSlash(rel)), format, args...)
	}
	seen := 0
	err := filepath.WalkDir(in.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fail(relTo(in.Root, p), "cannot read the installed tree: %v", err)
		}
		rel := relTo(in.Root, p)
		if rel == "." || rel == RecordFile {
			return nil
		}
		e := want[rel]
		if e == nil {
			return fail(rel, "%s was added after install", rel)
		}
		seen++
		info, err := d.Info()
		if err != nil {
			return fail(rel, "%s: %v", rel, err)
		}
		typ := typeOf(info.Mode())
		if typ != e.Type || info.Mode().Perm() != e.Mode {
			return fail(rel, "%s changed since install (%s %04o, installed as %s %04o)", rel, typ, info.Mode().Perm(), e.Type, e.Mode)
		}
		switch typ {
		case "file":
			if info.Size() != e.Size {
				return fail(rel, "%s changed since install (size %d, installed %d)", rel, info.Size(), e.Size)
			}
			if fp, ok := fingerprintOf(info); ok && !always[rel] && fp == r.Manifest.Fingerprints[rel] {
				return nil
			}
			sum, err := fileSHA256(p)
			if err != nil {
				return fail(rel, "%s: %v", rel, err)
			}
			if sum != e.SHA256 {
				return fail(rel, "%s changed since install (sha256 %s, installed %s)", rel, sum, e.SHA256)
			}
		case "symlink":
			link, err := os.Readlink(p)
			if err != nil || link != e.Link {
				return fail(rel, "%s points at %q, installed pointing at %q", rel, link, e.Link)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if seen != len(want) {
		var gone []string
		walked := map[string]bool{}
		_ = filepath.WalkDir(in.Root, func(p string, _ fs.DirEntry, err error) error {
			if err == nil {
				walked[relTo(in.Root, p)] = true
			}
			return nil
		})
		for p := range want {
			if !walked[p] {
				gone = append(gone, p)
			}
		}
		sort.Strings(gone)
		if len(gone) > 0 {
			return fail(gone[0], "%s was removed after install (%d paths missing)", gone[0], len(gone))
		}
	}
	for _, b := range r.Bins {
		if e := want[b.Resolved]; e == nil || e.SHA256 != b.SHA256 {
			return fail(b.Resolved, "bin %s resolves to %s, whose sha256 does not match install.json's bins", b.Name, b.Resolved)
		}
	}
	return nil
}

// packageDirOf is the npm package directory of a file under node_modules
// (node_modules/@scope/name or node_modules/name, nested ones included).
func packageDirOf(rel string) (string, bool) {
	parts := strings.Split(rel, "/")
	last := -1
	for i, p := range parts {
		if p == "node_modules" && i+1 < len(parts) {
			last = i
		}
	}
	if last < 0 {
		return "", false
	}
	n := last + 2
	if n < len(parts) && parts[last+1][0] == '@' {
		n++
	}
	if n >= len(parts) {
		return "", false
	}
	return strings.Join(parts[:n], "/"), true
}

func relTo(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

func typeOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return m.Type().String()
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
