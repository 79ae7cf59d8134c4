package pkgselect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
	"github.com/fabric-runtime/fabric/internal/pkginstall"
	"github.com/fabric-runtime/fabric/internal/receipt"
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
// qualification rules, packages found among those installed in the data
// directory (pkginstall.DataDir) and then among those built in, the
// serial file of this user. A bad setting fails every selection with its
// reason.
func FromEnv(getenv func(string) string) *Selector {
	dataDir, _ := pkginstall.DataDir(getenv)
	opts := Options{Receipts: receipt.CatalogVerifier(), Find: Finder(dataDir)}
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

// Finder finds id@version installed in dataDir ("" for none) first: the
// install is verified (every file against its record, as before an exec:
// an edited file fails with artifact_digest_mismatch) and its package is
// the copy the install keeps, whose digest must be the one recorded.
// Otherwise it is the package of that id built into the binary, at that
// version. Built-in packages are loaded once; installs are read at every
// call, since they change under a long-lived process.
func Finder(dataDir string) func(id, version string) (*Found, error) {
	builtin := bundledFinder()
	return func(id, version string) (*Found, error) {
		if dataDir != "" {
			if f, err := findInstalled(dataDir, id, version); f != nil || err != nil {
				return f, err
			}
		}
		p, err := builtin(id)
		if err != nil {
			return nil, err
		}
		if v := p.Descriptor.Package.Version; v != version {
			return nil, fmt.Errorf("the binary carries %s@%s, not version %s, and it is not installed (fabric packages install %s@%s)", id, v, version, id, version)
		}
		return &Found{Package: p}, nil
	}
}

// findInstalled is id@version's install in dataDir, verified, or nil
// when it is not installed.
func findInstalled(dataDir, id, version string) (*Found, error) {
	root := filepath.Join(pkginstall.PackagesDir(dataDir), id+"@"+version)
	if _, err := os.Stat(filepath.Join(root, pkginstall.RecordFile)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	in, err := pkginstall.Read(root)
	if err != nil {
		return nil, err
	}
	if err := pkginstall.Verify(in); err != nil {
		return nil, err
	}
	p, err := pkgdesc.Load(filepath.Join(root, pkginstall.PackageCopyDir))
	if err != nil {
		return nil, err
	}
	if got, want := strings.TrimPrefix(p.Digest(), "fm1:"), strings.TrimPrefix(in.Record.PackageDigest, "fm1:"); got != want {
		return nil, fmt.Errorf("install %s keeps a package of digest %s, its record says %s", root, got, want)
	}
	return &Found{Package: p, Install: in}, nil
}

// bundledFinder finds packages among those built into the binary,
// loading each once.
func bundledFinder() func(id string) (*pkgdesc.Package, error) {
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
