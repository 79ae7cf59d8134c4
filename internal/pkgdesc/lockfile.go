package pkgdesc

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/strictdoc"
)

// CodeLockfileMismatch: an npm artifact's digest is not the integrity its
// package's own lockfile records for the same name@version (or the
// lockfile does not hold it).
const CodeLockfileMismatch = "lockfile_integrity_mismatch"

// CheckLockfile compares every npm artifact with install.lockfile: the
// lockfile must hold the artifact's name@version with the very integrity
// the descriptor pins, so that installing from the lockfile installs what
// the descriptor (and a catalog citing it) names. A package without an
// install has nothing to compare.
func CheckLockfile(p *Package) Findings {
	in := p.Descriptor.Install
	if in == nil || in.Kind != "npm" {
		return nil
	}
	file := p.Path(in.Lockfile)
	raw, err := fs.ReadFile(p.FS, in.Lockfile)
	if err != nil {
		return Findings{{File: file, Code: CodeLockfileMissing, Message: "cannot read the lockfile: " + err.Error()}}
	}
	recorded, err := LockfileIntegrities(raw)
	if err != nil {
		return Findings{{File: file, Code: strictdoc.CodeSyntax, Message: err.Error()}}
	}
	var out Findings
	desc := p.Path(contract.PackageDescriptorFile)
	for _, plat := range slices.Sorted(maps.Keys(p.Descriptor.Artifacts)) {
		for i, a := range p.Descriptor.Artifacts[plat] {
			if a.Kind != contract.ArtifactNPM {
				continue
			}
			key := a.Name + "@" + a.Version
			path := strictdoc.IndexPath(strictdoc.ChildPath("artifacts", plat), i)
			switch got := recorded[key]; {
			case len(got) == 0:
				out = append(out, &Finding{File: desc, Path: path, Code: CodeLockfileMismatch, Message: fmt.Sprintf("%s is not in %s", key, in.Lockfile)})
			case !slices.Contains(got, Integrity(a)):
				out = append(out, &Finding{File: desc, Path: path + ".digest", Code: CodeLockfileMismatch, Message: fmt.Sprintf("%s: the digest is not the integrity %s records", key, in.Lockfile)})
			}
		}
	}
	return out
}

// LockfileIntegrities reads an npm lockfile (v2 or v3) and returns, for
// every installed name@version, the integrities it records.
func LockfileIntegrities(raw []byte) (map[string][]string, error) {
	var lf struct {
		Packages map[string]struct {
			Version   string `json:"version"`
			Integrity string `json:"integrity"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(raw, &lf); err != nil {
		return nil, fmt.Errorf("not an npm lockfile: %w", err)
	}
	out := map[string][]string{}
	for loc, e := range lf.Packages {
		i := strings.LastIndex(loc, "node_modules/")
		if i < 0 || e.Integrity == "" {
			continue
		}
		k := loc[i+len("node_modules/"):] + "@" + e.Version
		out[k] = append(out[k], e.Integrity)
	}
	return out, nil
}
