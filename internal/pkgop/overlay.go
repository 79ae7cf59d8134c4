package pkgop

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// overlayMount is one watched directory the sandbox overlays onto itself
// in its private mount namespace: every change the operation makes lands
// in Upper, and Lower (the real directory) stays as it was.
type overlayMount struct {
	Lower string `json:"lower"`
	Upper string `json:"upper"`
	Work  string `json:"work"`
}

// OverlayAvailable reports whether Run can overlay the watched roots of a
// read operation (Options.Overlay): on Linux, as root with CAP_SYS_ADMIN.
func OverlayAvailable() bool { return overlayAvailable() }

// overlayRoots are the outermost roots that are directories (not
// symlinks): the ones the sandbox overlays. A root inside another is
// covered by the outer one's overlay.
func overlayRoots(roots []string) []string {
	var dirs []string
	for _, r := range roots {
		if st, err := os.Lstat(r); err == nil && st.IsDir() {
			dirs = append(dirs, r)
		}
	}
	slices.Sort(dirs)
	var out []string
	for _, d := range dirs {
		if len(out) > 0 && within(filepath.ToSlash(d), []string{out[len(out)-1]}) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// prepareOverlays makes an upper and a work directory per root under
// base, which must not be beneath any root.
func prepareOverlays(roots []string, base string) ([]overlayMount, error) {
	var out []overlayMount
	for i, r := range roots {
		if strings.ContainsAny(r, ",:\\") {
			return nil, fmt.Errorf("cannot overlay %s: overlayfs options cannot name a path with ',', ':' or '\\'", r)
		}
		if within(filepath.ToSlash(base), []string{r}) {
			return nil, fmt.Errorf("cannot overlay %s: the overlay's own directory %s is beneath it", r, base)
		}
		m := overlayMount{Lower: r, Upper: filepath.Join(base, fmt.Sprint(i), "upper"), Work: filepath.Join(base, fmt.Sprint(i), "work")}
		for _, d := range []string{m.Upper, m.Work} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return nil, err
			}
		}
		// The overlay's root shows the upper directory's own attributes:
		// give it the real root's, so that the operation sees them and a
		// change of them afterwards is the operation's.
		if err := copyRootAttrs(r, m.Upper); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// upperChanges lists what the operation left in the overlays' upper
// directories, as changes of the real paths: a whiteout (a character
// device 0/0) is a removal, anything else an addition or, when the path
// existed before, a modification (a chown, timestamp or extended
// attribute change too, which the manifest does not record). A directory
// that was only copied up because something beneath it changed, with the
// same manifest entry as before, is left out.
func upperChanges(mounts []overlayMount, before *treemanifest.Manifest) ([]treemanifest.Change, error) {
	prior := make(map[string]treemanifest.Entry, len(before.Entries))
	for _, e := range before.Entries {
		prior[e.Path] = e
	}
	var out []treemanifest.Change
	for _, m := range mounts {
		type seen struct {
			rel   string
			entry treemanifest.Entry
			white bool
		}
		var found []seen
		err := filepath.WalkDir(m.Upper, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p == m.Upper {
				return nil // judged below, by rootChanged
			}
			rel, err := filepath.Rel(m.Upper, p)
			if err != nil {
				return err
			}
			if d.Type()&fs.ModeCharDevice != 0 {
				found = append(found, seen{rel: rel, white: isWhiteout(p)})
				return nil
			}
			e, err := treemanifest.Stat(p, treemanifest.Options{})
			if err != nil {
				return err
			}
			found = append(found, seen{rel: rel, entry: e})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("pkgop: read the overlay of %s: %w", m.Lower, err)
		}
		changed, err := rootChanged(m.Lower, m.Upper, len(found) > 0)
		if err != nil {
			return nil, fmt.Errorf("pkgop: read the overlay of %s: %w", m.Lower, err)
		}
		if changed {
			real := filepath.ToSlash(m.Lower)
			old := prior[real]
			now, err := treemanifest.Stat(m.Upper, treemanifest.Options{})
			if err != nil {
				return nil, err
			}
			now.Path = real
			out = append(out, treemanifest.Change{Path: real, Kind: "modified", Before: &old, After: &now})
		}
		for i, f := range found {
			real := filepath.ToSlash(filepath.Join(m.Lower, f.rel))
			old, existed := prior[real]
			switch {
			case f.white:
				if existed {
					out = append(out, treemanifest.Change{Path: real, Kind: "removed", Before: &old})
				}
				continue
			case f.entry.Type == "":
				// A device the operation made: an addition with no entry.
				out = append(out, treemanifest.Change{Path: real, Kind: "added"})
				continue
			}
			f.entry.Path = real
			if existed && f.entry.Type == "dir" && f.entry == old && i+1 < len(found) && strings.HasPrefix(found[i+1].rel, f.rel+string(filepath.Separator)) {
				continue // copied up as the parent of a change
			}
			c := treemanifest.Change{Path: real, Kind: "added", After: &f.entry}
			if existed {
				c.Kind, c.Before = "modified", &old
			}
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b treemanifest.Change) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
