package catalog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/fabric-runtime/fabric/contract"
)

// DescriptorSuffix ends every descriptor file name; the legacy name
// fabric-adapter.json is read too.
const (
	DescriptorSuffix     = ".fabric-adapter.json"
	LegacyDescriptorName = "fabric-adapter.json"
	// DataDir is the installed-descriptor convention under a prefix.
	DataDir = "share/nemo-fabric/adapters"
)

// Bundled is a descriptor compiled into the binary.
type Bundled struct {
	Name string // file name, used in the provenance path "bundled:<name>"
	Data []byte
	Root string // optional directory for the runner's relative paths
}

// Options says where to look. Every path must be absolute.
type Options struct {
	Bundled           []Bundled
	InstalledPrefixes []string // <prefix>/share/nemo-fabric/adapters/<name>/<name>.fabric-adapter.json
	NodeModules       []string // node_modules directories whose package roots are scanned
	BaseDir           string   // <base_dir>/adapters is scanned when set
	LocalPaths        []string // discovery.local_paths: files or directories, already resolved
}

// Catalog is the result of discovery: the winning descriptor per adapter id.
type Catalog struct {
	byID        map[string]*Entry
	ids         []string
	diagnostics []contract.Diagnostic
}

// Discover loads descriptors in upstream's precedence order. Invalid
// descriptors found while scanning directories become diagnostics; a
// missing or invalid explicit local path is an error.
func Discover(opts Options) (*Catalog, error) {
	c := &Catalog{byID: map[string]*Entry{}}
	for _, b := range opts.Bundled {
		e, err := loadBundled(b)
		if err != nil {
			return nil, fmt.Errorf("bundled descriptor %s: %w", b.Name, err)
		}
		e.Source, e.Root = contract.SourceBundled, b.Root
		c.add(e)
	}
	for _, prefix := range opts.InstalledPrefixes {
		c.scanFiles(dataDirDescriptors(filepath.Join(prefix, filepath.FromSlash(DataDir))), contract.SourceInstalled)
	}
	for _, nm := range opts.NodeModules {
		c.scanFiles(nodeModulesDescriptors(nm), contract.SourceInstalled)
	}
	if opts.BaseDir != "" {
		c.scanFiles(dirDescriptors(filepath.Join(opts.BaseDir, "adapters")), contract.SourceBaseDir)
	}
	for i, p := range opts.LocalPaths {
		field := fmt.Sprintf("discovery.local_paths[%d]", i)
		st, err := os.Stat(p)
		if err != nil {
			return nil, &contract.ConfigError{Failure: contract.Failure{Stage: contract.StagePlan, Code: "discovery_path_not_found", Path: field, Message: fmt.Sprintf("%s does not exist", p), Err: err}}
		}
		if !st.IsDir() {
			e, err := loadFile(p)
			if err != nil {
				return nil, &contract.ConfigError{Failure: contract.Failure{Stage: contract.StagePlan, Code: "invalid_descriptor", Path: field, Message: err.Error(), Err: err}}
			}
			e.Source = contract.SourceLocal
			c.add(e)
			continue
		}
		c.scanFiles(dirDescriptors(p), contract.SourceLocal)
	}
	sort.Strings(c.ids)
	return c, nil
}

// bundledLoaded holds each bundled descriptor as loaded the first time a
// Discover met it (name and bytes as the key): the bytes are compiled into
// the binary, so every plan would otherwise parse them and compile their
// schemas again. The entries are never written after loading; Discover
// hands each catalog its own copy of one.
var bundledLoaded sync.Map // name + "\x00" + data -> *Entry

func loadBundled(b Bundled) (*Entry, error) {
	key := b.Name + "\x00" + string(b.Data)
	if e, ok := bundledLoaded.Load(key); ok {
		cp := *e.(*Entry)
		return &cp, nil
	}
	e, err := LoadDescriptor(b.Data, "bundled:"+b.Name)
	if err != nil {
		return nil, err
	}
	loaded, _ := bundledLoaded.LoadOrStore(key, e)
	cp := *loaded.(*Entry)
	return &cp, nil
}

// Lookup returns the winning descriptor for an adapter id.
func (c *Catalog) Lookup(id string) (*Entry, bool) {
	e, ok := c.byID[id]
	return e, ok
}

// Entries returns the winning descriptors sorted by adapter id.
func (c *Catalog) Entries() []*Entry {
	out := make([]*Entry, 0, len(c.ids))
	for _, id := range c.ids {
		out = append(out, c.byID[id])
	}
	return out
}

// IDs returns the known adapter ids, sorted.
func (c *Catalog) IDs() []string { return append([]string(nil), c.ids...) }

// Diagnostics returns duplicate-id and invalid-descriptor findings.
func (c *Catalog) Diagnostics() []contract.Diagnostic {
	return append([]contract.Diagnostic(nil), c.diagnostics...)
}

func (c *Catalog) add(e *Entry) {
	id := e.Descriptor.AdapterID
	if prev, ok := c.byID[id]; ok {
		c.diagnostics = append(c.diagnostics, contract.Diagnostic{
			Severity: contract.SeverityWarning,
			Code:     "duplicate_adapter_id",
			Message:  fmt.Sprintf("adapter %s at %s (%s) replaces the one at %s (%s)", id, e.Path, e.Source, prev.Path, prev.Source),
			Metadata: map[string]any{"adapter_id": id, "path": e.Path, "replaced_path": prev.Path},
		})
	} else {
		c.ids = append(c.ids, id)
	}
	c.byID[id] = e
}

func (c *Catalog) scanFiles(paths []string, source string) {
	for _, p := range paths {
		e, err := loadFile(p)
		if err != nil {
			c.diagnostics = append(c.diagnostics, contract.Diagnostic{
				Severity: contract.SeverityWarning,
				Code:     "invalid_descriptor",
				Message:  err.Error(),
				Metadata: map[string]any{"path": p},
			})
			continue
		}
		e.Source = source
		c.add(e)
	}
}

func loadFile(path string) (*Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxDescriptorBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	e, err := LoadDescriptor(data, abs)
	if err != nil {
		return nil, err
	}
	e.Root = filepath.Dir(abs)
	return e, nil
}

func isDescriptorName(name string) bool {
	return name == LegacyDescriptorName || strings.HasSuffix(name, DescriptorSuffix)
}

// dirDescriptors lists descriptor files directly in dir and one level below
// (<dir>/<name>/<name>.fabric-adapter.json), sorted.
func dirDescriptors(dir string) []string {
	var out []string
	for p, e := range entries(dir) {
		if isDir(p, e) {
			out = append(out, descriptorFiles(p)...)
		} else if isDescriptorName(e.Name()) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// dataDirDescriptors lists <dir>/<name>/<name>.fabric-adapter.json (and the
// legacy file name) under an installed data dir.
func dataDirDescriptors(dir string) []string {
	var out []string
	for p, e := range entries(dir) {
		if !isDir(p, e) {
			continue
		}
		for _, name := range []string{e.Name() + DescriptorSuffix, LegacyDescriptorName} {
			f := filepath.Join(p, name)
			if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
				out = append(out, f)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// nodeModulesDescriptors lists descriptors at the root of every package in
// a node_modules directory (including @scope/pkg) and in each package's
// installed data dir.
func nodeModulesDescriptors(nm string) []string {
	var roots []string
	for p, e := range entries(nm) {
		if strings.HasPrefix(e.Name(), ".") || !isDir(p, e) {
			continue
		}
		if strings.HasPrefix(e.Name(), "@") {
			for sp, s := range entries(p) {
				if isDir(sp, s) {
					roots = append(roots, sp)
				}
			}
			continue
		}
		roots = append(roots, p)
	}
	sort.Strings(roots)
	var out []string
	for _, r := range roots {
		out = append(out, descriptorFiles(r)...)
		out = append(out, dataDirDescriptors(filepath.Join(r, filepath.FromSlash(DataDir)))...)
	}
	return out
}

// descriptorFiles lists the descriptor files directly in dir.
func descriptorFiles(dir string) []string {
	var out []string
	for p, e := range entries(dir) {
		if !e.IsDir() && isDescriptorName(e.Name()) {
			out = append(out, p)
		}
	}
	return out
}

// entries yields the path and entry of each entry of dir, in name order;
// none if dir cannot be read.
func entries(dir string) iter.Seq2[string, fs.DirEntry] {
	return func(yield func(string, fs.DirEntry) bool) {
		list, _ := os.ReadDir(dir)
		for _, e := range list {
			if !yield(filepath.Join(dir, e.Name()), e) {
				return
			}
		}
	}
}

func isDir(p string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink != 0 {
		st, err := os.Stat(p)
		return err == nil && st.IsDir()
	}
	return false
}

// DefaultSearch builds the installed-descriptor search path for baseDir:
// prefixes from FABRIC_ADAPTER_PREFIXES, the prefix of the running
// executable, /usr/local and /usr; node_modules directories from
// FABRIC_NODE_MODULES, NODE_PATH, and baseDir and each of its ancestors.
func DefaultSearch(baseDir string, getenv func(string) string, executable string) (prefixes, nodeModules []string) {
	seen := map[string]bool{}
	addTo := func(list *[]string, p string) {
		if p == "" || !filepath.IsAbs(p) || seen[p] {
			return
		}
		seen[p] = true
		*list = append(*list, filepath.Clean(p))
	}
	for _, p := range filepath.SplitList(getenv("FABRIC_ADAPTER_PREFIXES")) {
		addTo(&prefixes, p)
	}
	if executable != "" {
		addTo(&prefixes, filepath.Dir(filepath.Dir(executable)))
	}
	addTo(&prefixes, "/usr/local")
	addTo(&prefixes, "/usr")
	for _, p := range filepath.SplitList(getenv("FABRIC_NODE_MODULES")) {
		addTo(&nodeModules, p)
	}
	for _, p := range filepath.SplitList(getenv("NODE_PATH")) {
		addTo(&nodeModules, p)
	}
	for dir := baseDir; dir != ""; {
		addTo(&nodeModules, filepath.Join(dir, "node_modules"))
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return prefixes, nodeModules
}

// IsNotFound reports whether err means a descriptor path does not exist.
func IsNotFound(err error) bool { return errors.Is(err, fs.ErrNotExist) }
