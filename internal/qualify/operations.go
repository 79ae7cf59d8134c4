package qualify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/pkgop"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// OperationObserver names the observer of a helper operation's item: the
// before/after tree manifests of its watched roots, taken by Fabric
// itself, never by the operation.
const OperationObserver = "observer:fabric.pkgop/treemanifest@" + conformance.SuiteVersion

// OperationOptions tune Operations.
type OperationOptions struct {
	// TempDir holds each operation's fresh runtime home (default the
	// system's).
	TempDir string
	// Env is where PATH, the locale and FABRIC_HARNESS_PATH (put first
	// on PATH, as the suite's hosts have it) come from (default
	// os.Environ()).
	Env []string
	// AllowUnenforcedRead runs a read operation where Landlock is
	// unavailable (its item says enforcement none); without it such an
	// item is not_tested.
	AllowUnenforcedRead bool
	// NoLandlock does not use Landlock (pkgop.Options.NoLandlock).
	NoLandlock bool
	// NoOverlay does not overlay a read operation's watched directories
	// even where pkgop.OverlayAvailable (as root).
	NoOverlay bool
	// Executable is the sandbox binary (pkgop.Options.Executable).
	Executable string
	// Required overrides the default tiers (read MANDATORY, configure
	// CAPABILITY).
	Required []contract.QualificationRequire
}

// Operations runs each helper operation of a package in a fresh, empty
// runtime home (its state paths resolved there), watching that home and
// the package directory dir, and returns one result item per operation,
// "op.<id>": the executor's claim (the command, by the digest of the
// binary it ran, and the exit status it reported) and the observation
// (the manifests before and after, every change, the enforcement) apart.
// A read operation passes only if nothing changed and no write was
// denied; a configure operation only if nothing changed outside its
// writes; either fails on a nonzero exit.
func Operations(ctx context.Context, dir string, statePaths []contract.PackageStatePath, ops []contract.PackageOperation, opts OperationOptions) []contract.QualificationResult {
	out := make([]contract.QualificationResult, 0, len(ops))
	for _, op := range ops {
		out = append(out, runOperation(ctx, dir, statePaths, op, opts))
	}
	return out
}

func runOperation(ctx context.Context, dir string, statePaths []contract.PackageStatePath, op contract.PackageOperation, opts OperationOptions) contract.QualificationResult {
	r := contract.QualificationResult{ID: contract.OperationResultPrefix + op.ID, Name: "helper " + op.Mode + " operation", Tier: operationTier(op, opts.Required), Verdict: contract.QualificationFail}
	home, err := os.MkdirTemp(opts.TempDir, "fabric-qualify-op-")
	if err != nil {
		r.Verdict, r.Detail = contract.QualificationNotTested, "cannot make the runtime home: "+err.Error()
		return r
	}
	defer os.RemoveAll(home)
	paths, err := pkgop.ResolveStatePaths(statePaths, home)
	if err != nil {
		r.Detail = "the package's state paths: " + err.Error()
		return r
	}
	environ := operationEnviron(home, opts.Env)
	env := pkgop.Env{Home: home, StatePaths: paths, Watch: []string{home, dir}, Environ: environ}
	overlay := op.Mode == contract.OperationRead && !opts.NoOverlay && pkgop.OverlayAvailable()
	res, err := pkgop.Run(ctx, op, env, pkgop.Options{AllowUnenforcedRead: opts.AllowUnenforcedRead, NoLandlock: opts.NoLandlock, Overlay: overlay, Executable: opts.Executable})
	var re *contract.RuntimeError
	code := ""
	if errors.As(err, &re) {
		code = re.Code
	}
	if res == nil {
		// Refused or never started: nothing was observed.
		r.Detail = errorText(err)
		if code == pkgop.CodeUnenforced || code == pkgop.CodeWatchFailed || code == pkgop.CodeSandbox {
			r.Verdict = contract.QualificationNotTested
		}
		return r
	}
	r.ElapsedMS = res.DurationMS
	r.Claim = &contract.QualificationClaim{By: executor(op.Argv[0], environ), Statement: fmt.Sprintf("exit %d", res.ExitCode)}
	r.EvidenceLevel = contract.EvidenceClaimed
	if res.After == "" {
		r.Verdict, r.Detail = contract.QualificationNotTested, errorText(err)
		return r
	}
	obs := &contract.QualificationObservation{By: OperationObserver, Method: operationMethod(res), Enforcement: res.Enforcement,
		Overlay: res.Overlay, Before: res.Before, After: res.After, Changes: manifestChanges(res.Changes)}
	switch {
	case len(res.Violations) > 0:
		obs.Result = fmt.Sprintf("%d change(s) outside the declared writes: %s", len(res.Violations), summarize(res.Violations))
	case res.Attempt:
		obs.Result = "a write outside the declared writes was denied (EACCES); nothing changed"
	case len(res.Changes) > 0:
		obs.Result = fmt.Sprintf("%d change(s), all within the declared writes", len(res.Changes))
		obs.Agrees = true
	default:
		obs.Result = "no change in the watched roots"
		obs.Agrees = true
	}
	r.Observation, r.EvidenceLevel = obs, contract.EvidenceObserved
	switch {
	case err == nil && obs.Agrees:
		r.Verdict, r.Detail = contract.QualificationPass, fmt.Sprintf("%s: exit 0, %s", strings.Join(op.Argv, " "), obs.Result)
	case code == pkgop.CodeSandbox || code == pkgop.CodeWatchFailed:
		r.Verdict, r.Detail = contract.QualificationNotTested, errorText(err)
	default:
		r.Detail = errorText(err)
	}
	if !res.Tainted {
		r.Evidence = outputEvidence(op.ID, res)
	}
	return r
}

// operationTier is MANDATORY for a read operation and CAPABILITY for a
// configure one, unless qualification.required names the item.
func operationTier(op contract.PackageOperation, required []contract.QualificationRequire) string {
	for _, q := range required {
		if q.ID == contract.OperationResultPrefix+op.ID {
			return q.Tier
		}
	}
	if op.Mode == contract.OperationRead {
		return contract.TierMandatory
	}
	return contract.TierCapability
}

// operationMethod names how the item was observed: the manifests always,
// and what enforced.
func operationMethod(res *pkgop.Result) string {
	m := "tree-manifest"
	if res.Enforcement != pkgop.EnforcementNone {
		m += "+" + res.Enforcement
	}
	if len(res.Overlay) > 0 {
		m += "+overlay-upper"
	}
	return m
}

// operationEnviron is the operations' environment: pkgop.Environ with
// FABRIC_HARNESS_PATH first on PATH, read from env.
func operationEnviron(home string, env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	lookup := func(k string) (string, bool) {
		v, ok := "", false
		for _, kv := range env {
			if val, found := strings.CutPrefix(kv, k+"="); found {
				v, ok = val, true
			}
		}
		return v, ok
	}
	var extra []string
	if hp, ok := lookup(fabric.EnvHarnessPath); ok && hp != "" {
		extra = filepath.SplitList(hp)
	}
	return pkgop.Environ(home, extra, lookup)
}

// executor names the binary an operation ran, by the sha256 of the file
// argv0 resolves to on the operation's PATH (symlinks followed):
// executor:<name>@sha256:<hex>, or executor:<name> when it cannot be read.
func executor(argv0 string, environ []string) string {
	name := "executor:" + filepath.Base(argv0)
	p, err := pkgop.LookPath(argv0, environ)
	if err != nil {
		return name
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	sum, err := fileSHA256(p)
	if err != nil {
		return name
	}
	return name + "@sha256:" + sum
}

func manifestChanges(cs []treemanifest.Change) []contract.ManifestChange {
	out := make([]contract.ManifestChange, 0, len(cs))
	entry := func(e *treemanifest.Entry) *contract.ManifestEntry {
		if e == nil {
			return nil
		}
		return &contract.ManifestEntry{Type: e.Type, Mode: uint32(e.Mode.Perm()), Size: e.Size, SHA256: e.SHA256, Link: e.Link}
	}
	for _, c := range cs {
		out = append(out, contract.ManifestChange{Path: c.Path, Kind: c.Kind, Before: entry(c.Before), After: entry(c.After)})
	}
	return out
}

func summarize(cs []treemanifest.Change) string {
	const show = 3
	var l []string
	for i, c := range cs {
		if i == show {
			l = append(l, fmt.Sprintf("and %d more", len(cs)-show))
			break
		}
		l = append(l, c.String())
	}
	return strings.Join(l, ", ")
}

// outputEvidence is the digest of what the operation printed.
func outputEvidence(id string, res *pkgop.Result) []contract.QualificationEvidence {
	var out []contract.QualificationEvidence
	for _, o := range []struct{ name, text string }{{"stdout", res.Stdout}, {"stderr", res.Stderr}} {
		s := sha256.Sum256([]byte(o.text))
		out = append(out, contract.QualificationEvidence{Name: "op-" + id + "." + o.name, Digest: map[string]string{"sha256": hex.EncodeToString(s[:])}, MediaType: "text/plain"})
	}
	return out
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
