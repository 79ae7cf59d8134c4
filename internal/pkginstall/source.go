package pkginstall

import (
	"fmt"
	"io/fs"
	"path"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
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

// LoadSource reads the package in fsys with every check a package gets
// (internal/pkgdesc) into a Source.
func LoadSource(fsys fs.FS) (Source, error) {
	p, err := pkgdesc.LoadFS(fsys)
	if err != nil {
		return Source{}, err
	}
	return SourceOf(p), nil
}

// SourceOf is the Source of a loaded package.
func SourceOf(p *pkgdesc.Package) Source {
	return Source{Descriptor: p.Descriptor, FS: p.FS, Digest: p.Digest()}
}

// Platform is the package platform name of this machine.
func Platform() string { return pkgdesc.HostPlatform() }

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
