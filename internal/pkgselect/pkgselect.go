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
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	builtin "github.com/fabric-runtime/fabric/catalog"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/catalog"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
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
	// Find returns the package of id found on disk.
	Find func(id string) (*pkgdesc.Package, error)
	// Platform is the platform selected for (default: this machine's).
	Platform string
	// AllowCandidate and AllowSuperseded let exact pins select candidate
	// and superseded entries.
	AllowCandidate, AllowSuperseded bool
	// Now is the clock (default time.Now).
	Now func() time.Time
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
		opts.Find = func(id string) (*pkgdesc.Package, error) {
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
	id, _, _ := strings.Cut(requested, "@")
	p, err := s.opts.Find(id)
	if err != nil {
		return nil, refuse(CodePackageNotFound, fmt.Sprintf("package %s is not on this machine: %v", id, err))
	}
	if adapter != nil {
		if same, err := sameDescriptor(adapter, p); err != nil || !same {
			return nil, refuse(CodePackageAdapterMismatch, fmt.Sprintf("harness.adapter_id %s resolves to %s, not the adapter descriptor package %s carries (%s, sha256 %s)",
				adapter.Descriptor.AdapterID, adapter.Path, p.ID(), p.Descriptor.Adapter.Path, p.AdapterSHA256))
		}
	}
	sel, err := supportcatalog.Select(c, supportcatalog.Request{
		Package: requested, Digest: strings.TrimPrefix(p.Digest(), "fm1:"), Platform: s.opts.Platform,
		AllowCandidate: s.opts.AllowCandidate, AllowSuperseded: s.opts.AllowSuperseded,
		Contracts: supportcatalog.SupportedContracts(), Now: s.opts.Now(),
	})
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
