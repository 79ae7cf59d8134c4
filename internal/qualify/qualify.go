package qualify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/clientopts"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
	"github.com/fabric-runtime/fabric/internal/receipt"
)

// Package is the package release to qualify, as the caller read it from
// its package directory.
type Package struct {
	ID, Version string
	// Contract is the descriptor's contract_version.
	Contract string
	// SHA256 is the package digest (the tree manifest's, hex).
	SHA256 string
	// Dir is the package directory.
	Dir string
	// Descriptor is the adapter descriptor: its path (relative to Dir)
	// and sha256, which must match the file.
	Descriptor contract.PackageAdapter
	// Artifacts are the package's artifacts for the platform.
	Artifacts []contract.PackageArtifact
	// Profile is the conformance profile file (relative to Dir).
	Profile string
	// Required overrides item tiers (qualification.required).
	Required []contract.QualificationRequire
	// StatePaths and Operations are the package's helper operations and
	// the state paths they run against: each becomes an "op.<id>" item.
	StatePaths []contract.PackageStatePath
	Operations []contract.PackageOperation
}

// Options tune Qualify.
type Options struct {
	// Platform is the platform qualified (default: this machine's, as
	// Platform returns it).
	Platform string
	// TempDir holds the suite's scratch directories (default the system's).
	TempDir string
	// Logger gets one record per item (default: discard).
	Logger *slog.Logger
	// HostBinary hosts bundled adapters (default: fabric-host beside the
	// running program, else the running program, as fabric.New picks);
	// its sha256 is the fabric-host subject.
	HostBinary string
	// ItemTimeout bounds each suite item (default the suite's).
	ItemTimeout time.Duration
	// Env is the hosts' base environment (default os.Environ()).
	Env []string
	// ClientOptions are added to the suite's clients.
	ClientOptions []fabric.Option
	// Only, when set, runs just these suite items; the others are
	// skipped (and a skipped MANDATORY item is not_tested).
	Only []string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// AllowUnenforcedRead, NoOverlay and SandboxBinary are the helper
	// operations' (OperationOptions).
	AllowUnenforcedRead, NoOverlay bool
	SandboxBinary                  string
}

// Platform is this machine's platform name: linux-x86_64, darwin-aarch64.
func Platform() string { return pkgdesc.HostPlatform() }

// Qualify runs the conformance suite with p's profile against p's adapter
// descriptor, serving the profile's modelstub script itself, and returns
// the statement of what it found. An error means no statement could be
// made (unreadable profile, descriptor digest mismatch); a package that
// fails qualification gets a statement whose verdict says so.
func Qualify(ctx context.Context, p Package, opts Options) (*receipt.Statement, error) {
	if err := checkPackage(&p); err != nil {
		return nil, err
	}
	if opts.Platform == "" {
		opts.Platform = Platform()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	descPath := filepath.Join(p.Dir, filepath.FromSlash(p.Descriptor.Path))
	if got, err := fileSHA256(descPath); err != nil {
		return nil, fmt.Errorf("qualify: adapter descriptor: %w", err)
	} else if got != p.Descriptor.SHA256 {
		return nil, fmt.Errorf("qualify: adapter descriptor %s has sha256 %s, the package says %s", descPath, got, p.Descriptor.SHA256)
	}
	profilePath := filepath.Join(p.Dir, filepath.FromSlash(p.Profile))
	profileSHA, err := fileSHA256(profilePath)
	if err != nil {
		return nil, fmt.Errorf("qualify: conformance profile: %w", err)
	}
	profile, err := conformance.LoadProfile(profilePath)
	if err != nil {
		return nil, fmt.Errorf("qualify: %w", err)
	}
	if profile.Descriptor, err = filepath.Abs(descPath); err != nil {
		return nil, fmt.Errorf("qualify: %w", err)
	}
	host := opts.HostBinary
	if host == "" {
		host = defaultHostBinary()
	}
	hostSHA, err := fileSHA256(host)
	if err != nil {
		return nil, fmt.Errorf("qualify: host binary: %w", err)
	}
	started := opts.Now()
	copts := append([]fabric.Option{fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithOTLPExporters(clientopts.OTLP()), fabric.WithHostBinary(host)}, opts.ClientOptions...)
	rep := conformance.Run(ctx, nil, profile, conformance.Options{
		ClientOptions: copts, TempDir: opts.TempDir, ItemTimeout: opts.ItemTimeout, Env: opts.Env, Only: opts.Only,
		Progress: func(it conformance.Item) {
			log.Info("qualify item", "package", p.ID, "item", it.ID, "name", it.Name, "verdict", it.Verdict)
		},
	})
	ops := Operations(ctx, p.Dir, p.StatePaths, p.Operations, OperationOptions{TempDir: opts.TempDir, Env: opts.Env,
		AllowUnenforcedRead: opts.AllowUnenforcedRead, NoOverlay: opts.NoOverlay, Executable: opts.SandboxBinary, Required: p.Required})
	for _, r := range ops {
		log.Info("qualify item", "package", p.ID, "item", r.ID, "name", r.Name, "verdict", r.Verdict)
	}
	finished := opts.Now()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("qualify: %w", err)
	}
	fv, rev := buildVersion()
	env := contract.QualificationEnvironment{OS: runtime.GOOS, Kernel: kernel(), Arch: strings.TrimPrefix(pkgdesc.Platform(runtime.GOOS, runtime.GOARCH), runtime.GOOS+"-"),
		Node: nodeVersion(ctx), Fabric: contract.FabricVersion{Version: fv, Revision: rev}}
	return newStatement(&p, rep, run{platform: opts.Platform, env: env, started: started, finished: finished,
		profileSHA256: profileSHA, hostSHA256: hostSHA, revision: rev, operations: ops}), nil
}

// run is what a statement records of the run besides the suite's report.
type run struct {
	platform                  string
	env                       contract.QualificationEnvironment
	started, finished         time.Time
	profileSHA256, hostSHA256 string
	revision                  string
	// operations are the helper operations' items, judged after the
	// suite's.
	operations []contract.QualificationResult
}

// newStatement is the statement of a suite report on p.
func newStatement(p *Package, rep conformance.Report, r run) *receipt.Statement {
	results, summary, verdict := judge(rep.Items, Tiers(p.Required), r.operations...)
	if m := rep.ModelEndpoint; m != nil {
		r.env.ModelEndpoint = "modelstub script sha256:" + m.SHA256
	}
	return &receipt.Statement{
		Type:          contract.InTotoStatementV1,
		Subject:       subjects(p, r.hostSHA256),
		PredicateType: contract.QualificationPredicateV1,
		Predicate: contract.QualificationPredicate{
			Package:     contract.QualifiedPackage{ID: p.ID, Version: p.Version, Contract: p.Contract},
			Platform:    r.platform,
			Suite:       contract.QualificationSuite{Name: conformance.SuiteName, Version: conformance.SuiteVersion, Revision: r.revision, Profile: contract.Digest{SHA256: r.profileSHA256}},
			Environment: r.env,
			Run:         contract.QualificationRun{StartedOn: rfc3339(r.started), FinishedOn: rfc3339(r.finished)},
			Results:     results,
			Summary:     summary,
			Verdict:     verdict,
		},
	}
}

// checkPackage reports a Package the caller left incomplete.
func checkPackage(p *Package) error {
	var missing []string
	for name, v := range map[string]string{"ID": p.ID, "Version": p.Version, "Contract": p.Contract, "SHA256": p.SHA256,
		"Dir": p.Dir, "Descriptor.Path": p.Descriptor.Path, "Descriptor.SHA256": p.Descriptor.SHA256, "Profile": p.Profile} {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("qualify: the package has no %s", strings.Join(missing, ", "))
	}
	return nil
}

// defaultHostBinary is the host fabric.New would use.
func defaultHostBinary() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if h := filepath.Join(filepath.Dir(exe), fabric.HostBinaryName); isExecutable(h) {
		return h
	}
	return exe
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

func fileSHA256(path string) (string, error) {
	if path == "" {
		return "", errors.New("no file named")
	}
	return conformance.FileSHA256(path)
}

// buildVersion is this build's module version and VCS revision.
func buildVersion() (version, revision string) {
	version = "devel"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version, ""
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		version = v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			revision = s.Value
		}
	}
	return version, revision
}

// kernel is the running kernel's release (Linux), or "".
func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// nodeVersion is the version of the node on PATH, or "" without one.
func nodeVersion(ctx context.Context) string {
	path, err := exec.LookPath("node")
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.TrimSpace(string(bytes.TrimSpace(out))), "v")
}
