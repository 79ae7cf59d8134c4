package pkgdesc

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/catalog"
	"github.com/fabric-runtime/fabric/internal/strictdoc"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
	"github.com/fabric-runtime/fabric/schemas"
)

// SchemaName is the published schema of a package descriptor
// (schemas/runtime-package.schema.json).
const SchemaName = "runtime-package"

var compiledSchema = sync.OnceValues(func() (*catalog.Schema, error) {
	raw, ok := schemas.Lookup(SchemaName)
	if !ok {
		return nil, fmt.Errorf("schemas/%s.schema.json is not embedded", SchemaName)
	}
	return catalog.CompileSchema(SchemaName, raw)
})

// validateSchema checks the descriptor against the published schema,
// one finding per violation at its path.
func validateSchema(data []byte, lines map[string]int, rep *strictdoc.Report) {
	s, err := compiledSchema()
	if err != nil {
		rep.Add(CodeSchema, "", 0, "the published schema does not compile: "+err.Error())
		return
	}
	for _, v := range s.Validate(json.RawMessage(data)) {
		p := v.Path("")
		rep.Add(CodeSchema, p, lineOf(lines, p), v.Message)
	}
}

// lineOf is the line of path, or of its nearest decoded ancestor.
func lineOf(lines map[string]int, p string) int {
	for p != "" {
		if l, ok := lines[p]; ok {
			return l
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return lines[""]
}

// check runs the checks a descriptor needs beyond its schema: what it
// names must exist in the package, digests must match and be well formed,
// operations must write only declared state.
func check(p *Package, lines map[string]int, rep *strictdoc.Report) {
	d := &p.Descriptor
	add := func(code, path, msg string) { rep.Add(code, path, lineOf(lines, path), msg) }

	// The adapter descriptor: a file inside the package, by digest.
	p.AdapterPath = p.Path(d.Adapter.Path)
	if e := regularFile(p.manifest, d.Adapter.Path); e == nil {
		add(CodeAdapterMissing, "adapter.path", "the adapter descriptor is not a regular file inside the package (not found, ignored, a symlink, or outside the directory)")
	} else {
		p.AdapterSHA256 = e.SHA256
		if e.SHA256 != d.Adapter.SHA256 {
			add(CodeAdapterDigest, "adapter.sha256", fmt.Sprintf("the adapter descriptor's sha256 is %s, not the declared one", e.SHA256))
		}
	}

	// Artifacts: every listed platform has some, each with a digest.
	names := map[string]bool{}
	for _, plat := range slices.Sorted(maps.Keys(d.Artifacts)) {
		pp := strictdoc.ChildPath("artifacts", plat)
		arts := d.Artifacts[plat]
		if len(arts) == 0 {
			add(CodeNoArtifacts, pp, "the platform is listed with no artifact; list its artifacts or leave the platform out")
		}
		for i, a := range arts {
			names[a.Name] = true
			checkDigest(a, strictdoc.IndexPath(pp, i)+".digest", add)
		}
	}

	// State paths and operations.
	states := map[string]bool{}
	for i, sp := range d.StatePaths {
		if states[sp.ID] {
			add(CodeDuplicateID, strictdoc.IndexPath("state_paths", i)+".id", fmt.Sprintf("state path %q is declared twice", sp.ID))
		}
		states[sp.ID] = true
	}
	ops := map[string]bool{}
	for i, op := range d.Operations {
		op_ := strictdoc.IndexPath("operations", i)
		if ops[op.ID] {
			add(CodeDuplicateID, op_+".id", fmt.Sprintf("operation %q is declared twice", op.ID))
		}
		ops[op.ID] = true
		if op.Mode == contract.OperationRead && len(op.Writes) > 0 {
			add(CodeReadWrites, op_+".writes", "a read operation declares no writes; make it a configure operation or drop the writes")
		}
		for j, w := range op.Writes {
			if !states[w] {
				add(CodeUndeclaredWrite, strictdoc.IndexPath(op_+".writes", j), fmt.Sprintf("%q is not a declared state_paths id", w))
			}
		}
	}

	if q := d.Qualification; q != nil && regularFile(p.manifest, q.Profile) == nil {
		add(CodeProfileMissing, "qualification.profile", "the conformance profile is not a regular file inside the package")
	}
	if in := d.Install; in != nil {
		if regularFile(p.manifest, in.Lockfile) == nil {
			add(CodeLockfileMissing, "install.lockfile", "the lockfile is not a regular file inside the package")
		}
		if in.Node != "" && !names[in.Node] {
			add(strictdoc.CodeInvalidValue, "install.node", fmt.Sprintf("install.node %q is not an artifact of any platform", in.Node))
		}
	}
}

// regularFile is the manifest entry of rel when it is a regular file in
// the package, else nil.
func regularFile(m *treemanifest.Manifest, rel string) *treemanifest.Entry {
	if !cleanRel(rel) {
		return nil
	}
	i, ok := slices.BinarySearchFunc(m.Entries, rel, func(e treemanifest.Entry, p string) int { return strings.Compare(e.Path, p) })
	if !ok || m.Entries[i].Type != "file" {
		return nil
	}
	return &m.Entries[i]
}

var hex64 = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })

// checkDigest: an npm artifact carries the lockfile's integrity, an SRI
// "sha512-<base64>" under key sha512; an archive or image a hex sha256
// under key sha256 (an SRI sha256 is accepted for npm too).
func checkDigest(a contract.PackageArtifact, path string, add func(code, path, msg string)) {
	if len(a.Digest) == 0 {
		add(CodeArtifactDigest, path, "the artifact has no digest")
		return
	}
	for _, alg := range slices.Sorted(maps.Keys(a.Digest)) {
		v, kp := a.Digest[alg], strictdoc.ChildPath(path, alg)
		switch {
		case alg == "sha512" && a.Kind == contract.ArtifactNPM:
			if !sri(v, "sha512", sha512.Size) {
				add(CodeArtifactDigest, kp, "expected the lockfile integrity, sha512-<base64 of 64 bytes>")
			}
		case alg == "sha256" && a.Kind == contract.ArtifactNPM:
			if !sri(v, "sha256", 32) {
				add(CodeArtifactDigest, kp, "expected an integrity, sha256-<base64 of 32 bytes>")
			}
		case alg == "sha256":
			if !hex64().MatchString(v) {
				add(CodeArtifactDigest, kp, "expected 64 lowercase hex digits")
			}
		default:
			add(CodeArtifactDigest, kp, fmt.Sprintf("digest algorithm %q is not sha512 (npm) or sha256", alg))
		}
	}
}

func sri(v, alg string, size int) bool {
	b64, ok := strings.CutPrefix(v, alg+"-")
	if !ok {
		return false
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(b64)
	return err == nil && len(raw) == size
}

// Integrity is the SRI of an npm artifact's sha512 digest ("" when it has
// none), the value its lockfile records.
func Integrity(a contract.PackageArtifact) string { return a.Digest["sha512"] }
