package pkgselect

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
	"github.com/fabric-runtime/fabric/internal/qualify"
	"github.com/fabric-runtime/fabric/internal/supportcatalog"
)

// Environment variables that point a binary's selector elsewhere than
// the catalog built into it (for tests and private catalogs).
const (
	// EnvCatalogDir is a catalog directory to select from instead of the
	// built-in catalog; its trust.json must still be the pinned one
	// unless EnvCatalogTrust names another.
	EnvCatalogDir = "FABRIC_CATALOG_DIR"
	// EnvCatalogTrust is a trust root file (its signature the .sig.json
	// beside it) that replaces the pinned trust root.
	EnvCatalogTrust = "FABRIC_CATALOG_TRUST"
	// EnvPackageAllow lists, comma separated, the states an exact pin may
	// also select: candidate, superseded.
	EnvPackageAllow = "FABRIC_PACKAGE_ALLOW"
)

// FromEnv is the selector of Fabric's binaries: the built-in catalog (or
// EnvCatalogDir and EnvCatalogTrust), receipts verified by the
// qualification rules, packages found among those built in, the serial
// file of this user. A bad setting fails every selection with its reason.
func FromEnv(getenv func(string) string) *Selector {
	opts := Options{Receipts: qualify.CatalogVerifier(), Find: BundledFinder()}
	var bad error
	if dir := getenv(EnvCatalogDir); dir != "" {
		opts.Catalog, opts.CatalogDir = os.DirFS(dir), dir
	}
	if p := getenv(EnvCatalogTrust); p != "" {
		tf, err := ReadTrustFile(p)
		if err != nil {
			bad = fmt.Errorf("%s: %w", EnvCatalogTrust, err)
		}
		opts.Trust = tf
	}
	for _, s := range strings.Split(getenv(EnvPackageAllow), ",") {
		switch strings.TrimSpace(s) {
		case "":
		case "candidate":
			opts.AllowCandidate = true
		case "superseded":
			opts.AllowSuperseded = true
		default:
			bad = fmt.Errorf("%s: %q is not candidate or superseded", EnvPackageAllow, s)
		}
	}
	if p, err := supportcatalog.SerialFile(getenv); err == nil {
		opts.SerialFile = p
	}
	s := New(opts)
	if bad != nil {
		s.once.Do(func() { s.err = bad })
	}
	return s
}

// ReadTrustFile reads a trust root and the .sig.json beside it.
func ReadTrustFile(path string) (*supportcatalog.TrustFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sig, err := os.ReadFile(strings.TrimSuffix(path, ".json") + ".sig.json")
	if err != nil {
		return nil, fmt.Errorf("its signature: %w", err)
	}
	return &supportcatalog.TrustFile{Path: path, Data: data, Sig: sig}, nil
}

// BundledFinder finds packages among those built into the binary,
// loading each once.
func BundledFinder() func(id string) (*pkgdesc.Package, error) {
	var mu sync.Mutex
	loaded := map[string]*pkgdesc.Package{}
	return func(id string) (*pkgdesc.Package, error) {
		mu.Lock()
		defer mu.Unlock()
		if p, ok := loaded[id]; ok {
			return p, nil
		}
		pkgs, err := bundled.Packages()
		if err != nil {
			return nil, err
		}
		fsys, ok := pkgs[id]
		if !ok {
			ids := make([]string, 0, len(pkgs))
			for k := range pkgs {
				ids = append(ids, k)
			}
			slices.Sort(ids)
			return nil, fmt.Errorf("no package %s is built in (built in: %s)", id, strings.Join(ids, ", "))
		}
		p, err := pkgdesc.LoadFS(fsys)
		if err != nil {
			return nil, err
		}
		loaded[id] = p
		return p, nil
	}
}
