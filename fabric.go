package fabric

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/catalog"
	"github.com/fabric-runtime/fabric/internal/config"
	"github.com/fabric-runtime/fabric/internal/doctor"
	"github.com/fabric-runtime/fabric/internal/pkginstall"
	"github.com/fabric-runtime/fabric/internal/plan"
	"github.com/fabric-runtime/fabric/internal/runtime"
)

// The public error types, usable with errors.As. Each carries Stage, Code,
// Path, Message and Retryable.
type (
	ConfigError     = contract.ConfigError
	CapabilityError = contract.CapabilityError
	RuntimeError    = contract.RuntimeError
	StateError      = contract.StateError
)

// Client plans, diagnoses and starts runtimes. It may be reused and shared
// between goroutines.
type Client struct {
	logger     *slog.Logger
	getenv     func(string) string
	lookupEnv  func(string) (string, bool)
	executable string
	extraPath  []string
	packages   plan.PackageSelector
	bundled    []catalog.Bundled // adapters compiled into this program (WithBundledAdapters)
	// installed packages (installed.go)
	useInstalled bool
	installedDir string
	installed    []*pkginstall.Installed
	hostBinary   string
	stateDir     string
	env          []string
	key          runtime.BindingKey
	live         registry // runtimes (and services) started by this client
	obs          observers
}

// Option configures a Client.
type Option func(*Client)

// WithLogger sets the logger; nil discards logs.
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.logger = l } }

// WithEnv replaces the process environment lookup (useful in tests).
func WithEnv(lookup func(string) (string, bool)) Option {
	return func(c *Client) {
		c.lookupEnv = lookup
		c.getenv = func(k string) string { v, _ := lookup(k); return v }
	}
}

// WithPackageSelector sets what checks a config's harness.package
// against the support catalog. Without one, a config that names a package
// fails to plan (package_selection_unavailable); Fabric's binaries set it.
func WithPackageSelector(s plan.PackageSelector) Option { return func(c *Client) { c.packages = s } }

// BundledAdapters is a set of adapters compiled into this program, each
// known by its descriptor document (a runner.builtin descriptor is hosted
// by the host binary, see WithHostBinary). Package adapters/bundled holds
// Fabric's: bundled.Adapters().
type BundledAdapters interface {
	// Descriptors yields each descriptor document by file name.
	Descriptors() iter.Seq2[string, []byte]
}

// WithBundledAdapters makes the adapters of set discoverable, beside the
// descriptors found on disk (a later set replaces an earlier). Without it a client links and knows no
// bundled adapter, so that importing this package alone links none:
//
//	import "github.com/fabric-runtime/fabric/adapters/bundled"
//
//	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()))
//
// A program that is its own host binary (the default) must then call
// bundled.ServeHost first thing in main.
func WithBundledAdapters(set BundledAdapters) Option {
	return func(c *Client) {
		c.bundled = nil
		for name, data := range set.Descriptors() {
			c.bundled = append(c.bundled, catalog.Bundled{Name: name, Data: data})
		}
	}
}

// WithExtraPath adds directories searched for required binaries after PATH.
func WithExtraPath(dirs ...string) Option {
	return func(c *Client) { c.extraPath = append(c.extraPath, dirs...) }
}

// EnvHarnessPath lists directories (like PATH) where harness binaries and
// their runtimes are found; they come first on every adapter host's PATH and
// are searched by doctor. harnesses/install.sh prints the value for this
// checkout.
const EnvHarnessPath = "FABRIC_HARNESS_PATH"

// HostBinaryName is the small binary that hosts bundled adapters
// (cmd/fabric-host); when it sits beside the running program it is used by
// default.
const HostBinaryName = "fabric-host"

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// WithHostBinary sets the executable re-executed as the host of bundled
// adapters (default: a fabric-host binary beside the running program, else
// the running program, which must then call bundled.ServeHost first thing
// in main; or point this at fabric-host or the fabric CLI).
func WithHostBinary(path string) Option { return func(c *Client) { c.hostBinary = path } }

// WithStateDir sets where per-runtime host directories are created
// (default: $TMPDIR/fabric-hosts). Each is removed when its runtime stops.
func WithStateDir(dir string) Option { return func(c *Client) { c.stateDir = dir } }

// WithHostEnv sets the base environment of adapter hosts (default: this
// process's environment).
func WithHostEnv(env []string) Option { return func(c *Client) { c.env = env } }

// New returns a Client.
func New(opts ...Option) *Client {
	c := &Client{getenv: os.Getenv, lookupEnv: os.LookupEnv, key: runtime.NewBindingKey()}
	if exe, err := os.Executable(); err == nil {
		c.executable = exe
		c.hostBinary = exe
		// A fabric-host binary beside this one hosts bundled adapters with a
		// smaller footprint than re-executing this program.
		if h := filepath.Join(filepath.Dir(exe), HostBinaryName); isExecutable(h) {
			c.hostBinary = h
		}
	}
	for _, dir := range filepath.SplitList(c.getenv(EnvHarnessPath)) {
		if dir != "" {
			c.extraPath = append(c.extraPath, dir)
		}
	}
	for _, o := range opts {
		o(c)
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	c.loadInstalled()
	c.initTelemetry()
	return c
}

// LoadOptions control reading a config file.
type LoadOptions struct {
	BaseDir string // default: the config file's directory
	Strict  bool   // unknown top-level keys are errors instead of warnings
}

// Loaded is a config read from a file, with defaults applied and relative
// paths resolved against BaseDir.
type Loaded struct {
	Config   contract.FabricConfig
	Path     string
	BaseDir  string
	Warnings []contract.Diagnostic
}

// LoadConfig reads a FabricConfig from a YAML or JSON file. Every problem
// is reported, each as a *ConfigError naming its path and line.
func (c *Client) LoadConfig(path string, opts LoadOptions) (*Loaded, error) {
	l, err := config.LoadFile(path, config.Options{BaseDir: opts.BaseDir, Strict: opts.Strict, LookupEnv: c.lookupEnv})
	if err != nil {
		return nil, err
	}
	return &Loaded{Config: l.Config, Path: l.Path, BaseDir: l.BaseDir, Warnings: l.Warnings}, nil
}

// ParseConfig reads a FabricConfig from YAML or JSON bytes; name picks the
// format by extension and names the source in errors. Relative paths
// resolve against opts.BaseDir (default: the current directory).
func (c *Client) ParseConfig(data []byte, name string, opts LoadOptions) (*Loaded, error) {
	l, err := config.Parse(data, name, config.Options{BaseDir: opts.BaseDir, Strict: opts.Strict, LookupEnv: c.lookupEnv})
	if err != nil {
		return nil, err
	}
	return &Loaded{Config: l.Config, Path: l.Path, BaseDir: l.BaseDir, Warnings: l.Warnings}, nil
}

// catalog discovers adapter descriptors for a base directory and the
// config's discovery.local_paths.
func (c *Client) catalog(baseDir string, cfg *contract.FabricConfig) (*catalog.Catalog, error) {
	prefixes, nodeModules := catalog.DefaultSearch(baseDir, c.getenv, c.executable)
	opts := catalog.Options{
		Bundled:           c.bundled,
		InstalledPrefixes: prefixes,
		NodeModules:       nodeModules,
		BaseDir:           baseDir,
	}
	if cfg != nil && cfg.Discovery != nil {
		for _, p := range cfg.Discovery.LocalPaths {
			if !filepath.IsAbs(p) {
				p = filepath.Join(baseDir, p)
			}
			opts.LocalPaths = append(opts.LocalPaths, p)
		}
	}
	return catalog.Discover(opts)
}

// Plan resolves a loaded config into a RunPlan. On failure the error joins
// every finding; each is a *ConfigError or *CapabilityError.
func (c *Client) Plan(ctx context.Context, l *Loaded) (*contract.RunPlan, error) {
	p, _, err := c.plan(ctx, l)
	return p, err
}

func (c *Client) plan(ctx context.Context, l *Loaded) (_ *contract.RunPlan, _ *catalog.Entry, err error) {
	_, end := c.obs.tel.Plan(ctx, l.Config.Metadata.Name)
	defer func() { end(err) }()
	baseDir := l.BaseDir
	if baseDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, nil, err
		}
		baseDir = wd
	}
	cat, err := c.catalog(baseDir, &l.Config)
	if err != nil {
		return nil, nil, err
	}
	entry, _ := plan.SelectedEntry(&l.Config, cat)
	p, err := plan.Resolve(l.Config, plan.Options{BaseDir: baseDir, Catalog: cat, Warnings: l.Warnings, Packages: c.packages})
	if err != nil && c.bundled == nil && l.Config.Harness != nil {
		hintBundled(err, l.Config.Harness.AdapterID)
	}
	return p, entry, err
}

// hintBundled says how to opt in when a client without bundled adapters
// fails to find the adapter a config names: it may be a bundled one.
func hintBundled(err error, adapterID string) {
	var ce *ConfigError
	if errors.As(err, &ce) && ce.Code == "unknown_adapter" {
		ce.Message += fmt.Sprintf("; this client knows no bundled adapter: if %s is one, opt in with fabric.WithBundledAdapters(bundled.Adapters()) (package github.com/fabric-runtime/fabric/adapters/bundled)", adapterID)
	}
}

// PlanFile loads and plans a config file.
func (c *Client) PlanFile(ctx context.Context, path string, opts LoadOptions) (*contract.RunPlan, error) {
	l, err := c.LoadConfig(path, opts)
	if err != nil {
		return nil, err
	}
	return c.Plan(ctx, l)
}

// Doctor runs every preflight check for a loaded config. Problems are
// failed checks in the report, never errors.
func (c *Client) Doctor(ctx context.Context, l *Loaded) contract.DoctorReport {
	in := doctor.Input{AgentName: l.Config.Metadata.Name, Config: &l.Config}
	p, entry, err := c.plan(ctx, l)
	in.Plan, in.Entry, in.PlanErr = p, entry, err
	opts := doctor.Options{LookupEnv: c.lookupEnv}
	var sel *contract.PackageSelection
	if p != nil {
		sel = p.Package
	}
	opts.ExtraPath, opts.CheckExec = c.execPaths(sel)
	return doctor.Run(ctx, in, opts)
}

// DoctorFile loads a config file and runs Doctor; a config that fails to
// load gives a report whose failed checks say why.
func (c *Client) DoctorFile(ctx context.Context, path string, opts LoadOptions) contract.DoctorReport {
	l, err := c.LoadConfig(path, opts)
	if err != nil {
		return doctor.Run(ctx, doctor.Input{ConfigErr: err}, doctor.Options{LookupEnv: c.lookupEnv})
	}
	return c.Doctor(ctx, l)
}

// AdapterInfo describes one discovered adapter.
type AdapterInfo struct {
	AdapterID       string                      `json:"adapter_id"`
	ContractVersion string                      `json:"contract_version"`
	AdapterKind     string                      `json:"adapter_kind"`
	Source          string                      `json:"source"`
	Path            string                      `json:"path"`
	Descriptor      *contract.AdapterDescriptor `json:"descriptor,omitempty"`
}

// Adapters lists the descriptors discovered for baseDir (and optional extra
// local paths), with duplicate and invalid-descriptor diagnostics.
func (c *Client) Adapters(_ context.Context, baseDir string, localPaths []string) ([]AdapterInfo, []contract.Diagnostic, error) {
	var cfg *contract.FabricConfig
	if len(localPaths) > 0 {
		cfg = &contract.FabricConfig{Discovery: &contract.DiscoveryConfig{LocalPaths: localPaths}}
	}
	cat, err := c.catalog(baseDir, cfg)
	if err != nil {
		return nil, nil, err
	}
	var out []AdapterInfo
	for _, e := range cat.Entries() {
		d := e.Descriptor
		out = append(out, AdapterInfo{AdapterID: d.AdapterID, ContractVersion: d.ContractVersion, AdapterKind: d.AdapterKind, Source: e.Source, Path: e.Path, Descriptor: &d})
	}
	return out, cat.Diagnostics(), nil
}

// ErrorInfo returns the structured detail of a Fabric error, or nil.
func ErrorInfo(err error) *contract.ErrorInfo {
	var ce *ConfigError
	var ke *CapabilityError
	var re *RuntimeError
	var se *StateError
	switch {
	case errors.As(err, &ce):
		return ce.Info()
	case errors.As(err, &ke):
		return ke.Info()
	case errors.As(err, &re):
		return re.Info()
	case errors.As(err, &se):
		return se.Info()
	}
	return nil
}
