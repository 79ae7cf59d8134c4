// Package pkgselect is the package selector Fabric's binaries give their
// clients (plan.PackageSelector): it checks a config's harness.package
// against the verified support catalog and the package found on disk, and
// returns the decision the plan records, or an error with a stable
// package_* code. It never falls back to another package.
//
// The catalog is loaded and verified once per selector, at the first
// config that names a package; a program that plans no such config pays
// nothing.
package pkgselect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	builtin "github.com/fabric-runtime/fabric/catalog"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/catalog"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
	"github.com/fabric-runtime/fabric/internal/pkginstall"
	"github.com/fabric-runtime/fabric/internal/supportcatalog"
)

// Codes of this package's own refusals (the catalog's are
// supportcatalog's).
const (
	// CodePackageNotFound: no package of that id is on disk (installed
	// or built in).
	CodePackageNotFound = "package_not_found"
	// CodePackageAdapterMismatch: the adapter descriptor the plan uses is
	// not the one the package carries (another adapter id, or a local
	// descriptor shadowing the package's).
	CodePackageAdapterMismatch = "package_adapter_mismatch"
	// CodePackageNotInstalled: the selected entry's package has artifacts
	// for this platform but is not installed, so nothing vouches for the
	// harness binaries a runtime would exec.
	CodePackageNotInstalled = "package_not_installed"
)

// Options configure a Selector.
type Options struct {
	// Catalog is the catalog directory (default: the one built into the
	// binary); CatalogDir names it in messages.
	Catalog    fs.FS
	CatalogDir string
	// TrustSHA256 pins the catalog's trust root (default: the built-in
	// pin); Trust replaces the root (--trust FILE, for tests).
	TrustSHA256 string
	Trust       *supportcatalog.TrustFile
	// SerialFile keeps the last serial accepted (rollback protection);
	// empty skips the check.
	SerialFile string
	// Receipts verifies the receipts entries cite; nil leaves every
	// entry unqualified.
	Receipts supportcatalog.ReceiptVerifier
	// Find returns the package id@version found on disk: an installed
	// copy (verified) before the one built in. A *contract.RuntimeError or
	// *contract.ConfigError it returns is passed on as is.
	Find func(id, version string) (*Found, error)
	// Platform is the platform selected for (default: this machine's).
	Platform string
	// AllowCandidate and AllowSuperseded let exact pins select candidate
	// and superseded entries.
	AllowCandidate, AllowSuperseded bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Found is a package found on disk, and the install it lies in (nil for
// a package built into the binary).
type Found struct {
	Package *pkgdesc.Package
	Install *pkginstall.Installed
}

// Selector selects packages; it is safe for concurrent use.
type Selector struct {
	opts Options
	once sync.Once
	cat  *supportcatalog.Catalog
	err  error
}

// New returns a Selector.
func New(opts Options) *Selector {
	if opts.Catalog == nil {
		opts.Catalog, opts.CatalogDir = builtin.FS(), "built-in catalog"
		if opts.TrustSHA256 == "" {
			opts.TrustSHA256 = builtin.TrustSHA256
		}
	}
	if opts.Platform == "" {
		opts.Platform = pkgdesc.HostPlatform()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Find == nil {
		opts.Find = func(id, version string) (*Found, error) {
			return nil, fmt.Errorf("no package finder")
		}
	}
	return &Selector{opts: opts}
}

func (s *Selector) catalog() (*supportcatalog.Catalog, error) {
	s.once.Do(func() {
		s.cat, s.err = supportcatalog.Load(context.Background(), s.opts.Catalog, s.opts.CatalogDir, supportcatalog.Options{
			Now: s.opts.Now(), TrustSHA256: s.opts.TrustSHA256, Trust: s.opts.Trust,
			SerialFile: s.opts.SerialFile, Receipts: s.opts.Receipts,
		})
	})
	return s.cat, s.err
}

// SelectPackage implements plan.PackageSelector.
func (s *Selector) SelectPackage(requested string, adapter *catalog.Entry) (*contract.PackageSelection, error) {
	c, err := s.catalog()
	if err != nil {
		return nil, err
	}
	req := supportcatalog.Request{
		Package: requested, Platform: s.opts.Platform,
		AllowCandidate: s.opts.AllowCandidate, AllowSuperseded: s.opts.AllowSuperseded,
		Contracts: supportcatalog.SupportedContracts(), Now: s.opts.Now(),
	}
	id, version, pinned := strings.Cut(requested, "@")
	if !pinned {
		def, ok := c.Latest().Doc.Defaults[id]
		if !ok {
			// No signed default: Select says why (unlisted, or pin one).
			_, err := supportcatalog.Select(c, req)
			return nil, err
		}
		_, version, _ = strings.Cut(def, "@")
	}
	found, err := s.opts.Find(id, version)
	if err != nil {
		var re *contract.RuntimeError
		var ce *contract.ConfigError
		if errors.As(err, &re) || errors.As(err, &ce) {
			return nil, err
		}
		return nil, refuse(CodePackageNotFound, fmt.Sprintf("package %s@%s is not on this machine: %v", id, version, err))
	}
	p := found.Package
	if found.Install == nil && len(p.Descriptor.Artifacts[s.opts.Platform]) > 0 {
		return nil, refuse(CodePackageNotInstalled, fmt.Sprintf("package %s@%s has artifacts for %s but is not installed, so nothing vouches for the binaries a runtime would run: fabric packages install %s@%s",
			id, version, s.opts.Platform, id, version))
	}
	if adapter != nil {
		if same, err := sameDescriptor(adapter, p); err != nil || !same {
			return nil, refuse(CodePackageAdapterMismatch, fmt.Sprintf("harness.adapter_id %s resolves to %s, not the adapter descriptor package %s carries (%s, sha256 %s)",
				adapter.Descriptor.AdapterID, adapter.Path, p.ID(), p.Descriptor.Adapter.Path, p.AdapterSHA256))
		}
	}
	req.Digest = strings.TrimPrefix(p.Digest(), "fm1:")
	sel, err := supportcatalog.Select(c, req)
	if err != nil {
		return nil, err
	}
	return &contract.PackageSelection{
		Requested: requested, Entry: sel.Entry, CatalogSerial: int64(sel.Serial),
		PackageDigest: sel.PackageDigest, State: sel.State, Platform: s.opts.Platform,
	}, nil
}

func refuse(code, msg string) error {
	return &contract.ConfigError{Failure: contract.Failure{Stage: contract.StagePlan, Code: code, Path: "harness.package", Message: msg}}
}

// sameDescriptor reports whether the descriptor planning resolved is the
// package's own: the same adapter id and the same document (descriptor
// discovery keeps a document's bytes without surrounding white space).
func sameDescriptor(adapter *catalog.Entry, p *pkgdesc.Package) (bool, error) {
	if adapter.Descriptor.AdapterID != p.ID() {
		return false, nil
	}
	data, err := fs.ReadFile(p.FS, p.Descriptor.Adapter.Path)
	if err != nil {
		return false, err
	}
	return bytes.Equal(bytes.TrimSpace(data), bytes.TrimSpace(adapter.Raw)), nil
}
