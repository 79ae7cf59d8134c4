package pkginstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// RecordV1Alpha1 is the _type of install.json.
const RecordV1Alpha1 = "fabric.install/v1alpha1"

// RecordFile is the install record's name in an install directory.
const RecordFile = "install.json"

// PackageCopyDir is the directory of an install that keeps the package
// directory it was installed from.
const PackageCopyDir = "package"

// Record (install.json) says what an install holds: the package, the
// artifacts checked against the descriptor and lockfile, the bins with
// what they resolve to, and the tree manifest of everything else in the
// install directory.
type Record struct {
	Type          string           `json:"_type"`
	Package       RecordPackage    `json:"package"`
	PackageDigest string           `json:"package_digest"`
	Platform      string           `json:"platform"`
	Artifacts     []RecordArtifact `json:"artifacts"`
	Node          *RecordNode      `json:"node,omitempty"`
	Bins          []RecordBin      `json:"bins"`
	Manifest      RecordManifest   `json:"manifest"`
}

// RecordPackage names the installed package.
type RecordPackage struct {
	ID        string `json:"id"`
	Version   string `json:"version"`
	Publisher string `json:"publisher,omitempty"`
}

// RecordArtifact is one installed npm package that the descriptor lists:
// where it is, and the sha512 integrity npm verified its tarball with.
type RecordArtifact struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Path      string `json:"path"`
	Integrity string `json:"integrity"`
}

// RecordNode is the pinned Node the install ran npm on and the bins run
// on: the npm package and its bin directory, relative to the install.
type RecordNode struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	BinDir  string `json:"bin_dir"`
}

// RecordBin is one declared bin: its path, the file it resolves to (both
// relative to the install) and that file's sha256.
type RecordBin struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	Resolved string `json:"resolved"`
	SHA256   string `json:"sha256"`
}

// RecordManifest is the install directory's tree manifest (install.json
// left out) and, per file, the stat fingerprint it had once hashed, so
// that Verify hashes only what looks changed.
type RecordManifest struct {
	Digest       string                 `json:"digest"`
	Entries      []treemanifest.Entry   `json:"entries"`
	Fingerprints map[string]Fingerprint `json:"fingerprints,omitempty"`
}

// Fingerprint is a file's stat data: any content change changes it.
type Fingerprint struct {
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Size    int64  `json:"size"`
	MtimeNS int64  `json:"mtime_ns"`
	CtimeNS int64  `json:"ctime_ns"`
}

// Installed is one install directory and its record.
type Installed struct {
	Root   string // the install directory, <data>/packages/<id>@<version>
	Record Record
	// Reused is set by Install when an existing install verified and
	// nothing was installed.
	Reused bool
}

// Entry is the package's entry name, id@version.
func (in *Installed) Entry() string { return in.Record.Package.ID + "@" + in.Record.Package.Version }

// BinDirs are the directories of the install's bins, then the pinned
// Node's bin directory, each once: what goes on a host's PATH.
func (in *Installed) BinDirs() []string {
	var out []string
	seen := map[string]bool{}
	add := func(rel string) {
		d := filepath.Join(in.Root, filepath.FromSlash(rel))
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	for _, b := range in.Record.Bins {
		add(pathDir(b.Path))
	}
	if in.Record.Node != nil {
		add(in.Record.Node.BinDir)
	}
	return out
}

func pathDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}

// Contains reports whether path (absolute) lies inside the install.
func (in *Installed) Contains(path string) bool {
	rel, err := filepath.Rel(in.Root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// dirName is an install's directory name.
func dirName(id, version string) string { return id + "@" + version }

// Read reads and shape-checks root's install.json; it hashes nothing.
func Read(root string) (*Installed, error) {
	data, err := os.ReadFile(filepath.Join(root, RecordFile))
	if err != nil {
		return nil, err
	}
	r, err := parseRecord(data, filepath.Base(root))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(root, RecordFile), err)
	}
	return &Installed{Root: root, Record: *r}, nil
}

// parseRecord decodes install.json (unknown fields are errors) and checks
// its shape for the install directory named dir.
func parseRecord(data []byte, dir string) (*Record, error) {
	var r Record
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	if err := r.checkShape(dir); err != nil {
		return nil, err
	}
	return &r, nil
}

func (r *Record) checkShape(dir string) error {
	switch {
	case r.Type != RecordV1Alpha1:
		return fmt.Errorf("_type is %q, want %q", r.Type, RecordV1Alpha1)
	case !validName(r.Package.ID) || !validName(r.Package.Version):
		return errors.New("package id or version is not a valid name")
	case dir != dirName(r.Package.ID, r.Package.Version):
		return fmt.Errorf("records %s but is in %s", dirName(r.Package.ID, r.Package.Version), dir)
	case !strings.HasPrefix(r.Manifest.Digest, treemanifest.Prefix) || len(r.Manifest.Entries) == 0:
		return errors.New("manifest has no digest or no entries")
	}
	for _, b := range r.Bins {
		if !fs.ValidPath(b.Path) || !fs.ValidPath(b.Resolved) || len(b.SHA256) != 64 {
			return fmt.Errorf("bin %q: path, resolved path or sha256 is malformed", b.Name)
		}
	}
	if r.Node != nil && !fs.ValidPath(r.Node.BinDir) {
		return fmt.Errorf("node bin_dir %q is not a path inside the install", r.Node.BinDir)
	}
	return nil
}

// List reads every install of dataDir whose install.json has the right
// shape (nothing is hashed), sorted by directory name. Installs that do
// not are returned as errors beside the good ones; a missing packages
// directory is no install and no error.
func List(dataDir string) ([]*Installed, []error) {
	dir := PackagesDir(dataDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{err}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	var out []*Installed
	var errs []error
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		in, err := Read(filepath.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, in)
	}
	return out, errs
}
