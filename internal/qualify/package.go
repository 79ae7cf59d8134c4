package qualify

import (
	"fmt"
	"strings"

	"github.com/fabric-runtime/fabric/internal/pkgdesc"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// PackageFrom is the package p as Qualify takes it, for platform: p must
// be a package directory on disk (the suite reads its profile and adapter
// descriptor from there) with a qualification profile.
func PackageFrom(p *pkgdesc.Package, platform string) (Package, error) {
	d := &p.Descriptor
	switch {
	case p.Dir == "":
		return Package{}, fmt.Errorf("package %s is not a directory on disk", p.ID())
	case d.Qualification == nil || d.Qualification.Profile == "":
		return Package{}, fmt.Errorf("package %s: qualification.profile is missing: it cannot be qualified", p.ID())
	}
	arts, ok := d.Artifacts[platform]
	if !ok && len(d.Artifacts) > 0 {
		return Package{}, fmt.Errorf("package %s lists no artifacts for platform %s", p.ID(), platform)
	}
	return Package{
		ID: p.ID(), Version: p.Version(), Contract: d.ContractVersion,
		SHA256: strings.TrimPrefix(p.Digest(), treemanifest.Prefix), Dir: p.Dir,
		Descriptor: d.Adapter, Artifacts: arts, Profile: d.Qualification.Profile, Required: d.Qualification.Required,
		StatePaths: d.StatePaths, Operations: d.Operations,
	}, nil
}
