package pkgdesc

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/strictdoc"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// CodeInvalid is the code of the error Load returns for any finding: a
// descriptor that cannot be read, is not strict JSON, fails the schema or a
// check below, or holds a credential-like value. The findings carry codes
// of their own (Code* below and strictdoc's).
const CodeInvalid = "package_descriptor_invalid"

// Finding codes: what one finding is about.
const (
	CodeContractVersion = "unsupported_contract_version" // contract_version is not fabric.package/v1alpha1
	CodeSchema          = "schema_violation"             // the published schema rejects the value at the path
	CodeCredential      = "credential_like_value"        // a value that looks like a secret, or a secret-named key with a value
	CodeAdapterMissing  = "adapter_missing"              // adapter.path is not a regular file inside the package
	CodeAdapterDigest   = "adapter_digest_mismatch"      // adapter.sha256 differs from the file's sha256
	CodeNoArtifacts     = "platform_without_artifacts"   // a platform is listed with no artifact
	CodeArtifactDigest  = "artifact_digest_invalid"      // an artifact digest is missing or malformed
	CodeUndeclaredWrite = "undeclared_write"             // an operation writes a state path that is not declared
	CodeReadWrites      = "read_operation_writes"        // a read operation declares writes
	CodeProfileMissing  = "profile_missing"              // qualification.profile is not a regular file inside the package
	CodeLockfileMissing = "lockfile_missing"             // install.lockfile is not a regular file inside the package
	CodeDuplicateID     = "duplicate_id"                 // two state paths or operations share an id
)

// Finding is one problem of a package, at its file, line and JSON path.
type Finding = strictdoc.Error

// Findings are every problem found in one package; Load's error wraps
// them.
type Findings = strictdoc.Errors

// DigestOptions are the tree manifest options of a package digest:
// canonical modes, so that a package embedded in the binary and the same
// directory on disk have one digest.
var DigestOptions = treemanifest.Options{CanonicalModes: true}

// Package is a loaded, checked package.
type Package struct {
	// Dir is the package directory; "" for a package loaded from an fs.FS.
	Dir string
	// FS is the package's files (os.DirFS(Dir) on disk).
	FS fs.FS
	// Descriptor is fabric-package.json as read.
	Descriptor contract.PackageDescriptor
	// DescriptorSHA256 is the hex sha256 of fabric-package.json's bytes.
	DescriptorSHA256 string
	// AdapterPath is the adapter descriptor's path: joined to Dir on disk,
	// slash-separated and relative to FS otherwise.
	AdapterPath string
	// AdapterSHA256 is the adapter descriptor's hex sha256 (equal to
	// Descriptor.Adapter.SHA256 once loaded).
	AdapterSHA256 string

	manifest *treemanifest.Manifest
}

// ID is the package id, Version its version.
func (p *Package) ID() string      { return p.Descriptor.Package.ID }
func (p *Package) Version() string { return p.Descriptor.Package.Version }

// Digest is the package digest: the fm1 digest of the package directory's
// tree manifest with canonical modes and .fabric-package-ignore honoured.
func (p *Package) Digest() string { return p.manifest.Digest() }

// Manifest is the tree manifest the digest is taken of.
func (p *Package) Manifest() *treemanifest.Manifest { return p.manifest }

// Path is a package-relative path as a reader names it: joined to Dir on
// disk, as is otherwise.
func (p *Package) Path(rel string) string {
	if p.Dir == "" {
		return rel
	}
	return filepath.Join(p.Dir, filepath.FromSlash(rel))
}

// Load reads and checks the package in dir. The error is a
// *contract.ConfigError with code CodeInvalid wrapping Findings (all of
// them) when the package is invalid.
func Load(dir string) (*Package, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, invalid(dir, Findings{{File: dir, Code: strictdoc.CodeUnreadable, Message: "cannot read the package directory: " + err.Error()}})
	}
	if !info.IsDir() {
		return nil, invalid(dir, Findings{{File: dir, Code: strictdoc.CodeUnreadable, Message: "not a directory"}})
	}
	return load(os.DirFS(dir), dir)
}

// LoadFS reads and checks the package at the root of fsys (a package
// embedded in the binary). Its digest equals Load's of the same directory.
func LoadFS(fsys fs.FS) (*Package, error) { return load(fsys, "") }

func load(fsys fs.FS, dir string) (*Package, error) {
	p := &Package{Dir: dir, FS: fsys}
	file := p.Path(contract.PackageDescriptorFile)
	rep := &strictdoc.Report{File: file}
	data, err := readLimited(fsys, contract.PackageDescriptorFile)
	if err != nil {
		rep.Add(strictdoc.CodeUnreadable, "", 0, "cannot read: "+err.Error())
		return nil, invalid(file, rep.Err().(Findings))
	}
	sum := sha256.Sum256(data)
	p.DescriptorSHA256 = hex.EncodeToString(sum[:])
	lines, ok := decode(data, rep, &p.Descriptor)
	if !ok {
		return nil, invalid(file, rep.Err().(Findings))
	}
	if p.manifest, err = treemanifest.TakeFS(fsys, DigestOptions); err != nil {
		rep.Add(strictdoc.CodeUnreadable, "", 0, "cannot take the package manifest: "+err.Error())
		return nil, invalid(file, rep.Err().(Findings))
	}
	check(p, lines, rep)
	if err := rep.Err(); err != nil {
		return nil, invalid(file, err.(Findings))
	}
	return p, nil
}

// decode parses data strictly into d, validates it against the schema and
// lints it for credentials; it returns the line of every path and whether
// d may be checked further.
func decode(data []byte, rep *strictdoc.Report, d *contract.PackageDescriptor) (map[string]int, bool) {
	root := strictdoc.Root(data, rep, "")
	if root == nil {
		return nil, false
	}
	dec := strictdoc.NewDecoder(rep)
	dec.Decode(root, "", root.Line, reflect.ValueOf(d).Elem())
	lintCredentials(root, "", rep)
	if rep.Failed() {
		return dec.Lines, false
	}
	if d.ContractVersion != contract.PackageV1Alpha1 {
		rep.Add(CodeContractVersion, "contract_version", dec.Lines["contract_version"],
			fmt.Sprintf("contract_version is not supported; this Fabric reads %s", contract.PackageV1Alpha1))
		return dec.Lines, false
	}
	validateSchema(data, dec.Lines, rep)
	return dec.Lines, !rep.Failed()
}

func invalid(file string, fs Findings) error {
	return &contract.ConfigError{Failure: contract.Failure{
		Stage:   contract.StagePlan,
		Code:    CodeInvalid,
		Path:    file,
		Message: fmt.Sprintf("invalid runtime package (%d finding(s))", len(fs)),
		Err:     fs,
	}}
}

// FindingsOf returns the findings an error of Load carries (nil when it
// carries none).
func FindingsOf(err error) Findings {
	var fs Findings
	if errors.As(err, &fs) {
		return fs
	}
	return nil
}

func readLimited(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, strictdoc.MaxSize+1))
}

// cleanRel reports whether rel is a clean slash-separated path inside the
// package (no "..", not absolute).
func cleanRel(rel string) bool { return fs.ValidPath(rel) && rel != "." && path.Clean(rel) == rel }
