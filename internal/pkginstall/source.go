package pkginstall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"runtime"

	"github.com/fabric-runtime/fabric/contract"
)

// Source is what Install installs: a package's descriptor and the package
// directory holding its lockfile (install.lockfile, with package.json
// beside it).
type Source struct {
	Descriptor contract.PackageDescriptor
	// FS is the package directory.
	FS fs.FS
	// Digest is the package digest (fm1:…) recorded in install.json; when
	// empty Install takes the tree manifest of FS.
	Digest string
}

// LoadSource reads fsys's fabric-package.json (unknown fields are errors)
// into a Source.
func LoadSource(fsys fs.FS) (Source, error) {
	data, err := fs.ReadFile(fsys, contract.PackageDescriptorFile)
	if err != nil {
		return Source{}, fmt.Errorf("read package descriptor: %w", err)
	}
	var d contract.PackageDescriptor
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return Source{}, fmt.Errorf("%s: %w", contract.PackageDescriptorFile, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Source{}, fmt.Errorf("%s: data after the JSON document", contract.PackageDescriptorFile)
	}
	return Source{Descriptor: d, FS: fsys}, nil
}

// Platform is the package platform name of this machine (linux-x86_64,
// linux-aarch64, darwin-aarch64, ...).
func Platform() string { return platformOf(runtime.GOOS, runtime.GOARCH) }

func platformOf(goos, goarch string) string {
	switch goarch {
	case "amd64":
		goarch = "x86_64"
	case "arm64":
		goarch = "aarch64"
	}
	return goos + "-" + goarch
}

// check reports what makes s uninstallable on platform.
func (s *Source) check(platform string) error {
	d := &s.Descriptor
	field := func(f, msg string, args ...any) error {
		return notInstallable(f, msg, args...)
	}
	if d.ContractVersion != contract.PackageV1Alpha1 {
		return field("contract_version", "is %q, want %q", d.ContractVersion, contract.PackageV1Alpha1)
	}
	if !validName(d.Package.ID) || !validName(d.Package.Version) {
		return field("package", "id %q and version %q must be non-empty names of letters, digits and . _ + -", d.Package.ID, d.Package.Version)
	}
	if d.Install == nil || d.Install.Kind != "npm" {
		return field("install.kind", "package %s has no npm install section", d.Package.ID)
	}
	if !fs.ValidPath(d.Install.Lockfile) || path.Base(d.Install.Lockfile) != "package-lock.json" {
		return field("install.lockfile", "%q is not a package-lock.json inside the package", d.Install.Lockfile)
	}
	for i, b := range d.Install.Bins {
		if !fs.ValidPath(b) || b == "." {
			return field(fmt.Sprintf("install.bins[%d]", i), "%q is not a path inside the install", b)
		}
	}
	if len(d.Artifacts[platform]) == 0 {
		return field("artifacts", "package %s@%s lists no artifacts for platform %s", d.Package.ID, d.Package.Version, platform)
	}
	return nil
}

func validName(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-', r == '+':
		default:
			return false
		}
	}
	return true
}
