package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/internal/cliflag"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// codePackageNotFound: an ID|PATH argument is neither a package directory
// nor a known package id.
const codePackageNotFound = "package_not_found"

// packageCheck is one check `fabric packages verify` runs on a package
// that loaded (the descriptor checks of pkgdesc.Load come first). Checks
// that need more than the package (the support catalog, receipts) are
// appended to packageChecks.
type packageCheck struct {
	Name string
	Run  func(ctx context.Context, p *pkgdesc.Package) pkgdesc.Findings
}

// packageChecks are verify's checks, in order.
func packageChecks() []packageCheck {
	return []packageCheck{
		{Name: "lockfile", Run: func(_ context.Context, p *pkgdesc.Package) pkgdesc.Findings { return pkgdesc.CheckLockfile(p) }},
	}
}

// packagesReadCommands are the verbs that read packages: digest, show,
// list and verify.
func (a *app) packagesReadCommands() []*cobra.Command {
	var dirs []string
	addDirs := func(c *cobra.Command) {
		cliflag.Strings(c.Flags(), &dirs, "dir", "a package directory, or a directory of package directories, searched after the bundled packages (repeatable)")
	}
	digest := &cobra.Command{
		Use:   "digest PATH|ID",
		Short: "Print a package's digest (fm1 tree manifest, canonical modes); -o text also prints the manifest",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, where, err := packageManifest(args[0], dirs)
			if err != nil {
				return a.failure(err)
			}
			if a.output == "text" {
				fmt.Fprintln(a.stdio.Out, m.Digest())
				fmt.Fprint(a.stdio.Out, m.Lines())
				return nil
			}
			return a.writeJSON(map[string]any{"package": where, "digest": m.Digest(), "entries": m.Entries})
		},
	}
	show := &cobra.Command{
		Use:   "show ID|PATH",
		Short: "Print a package's descriptor summary: id, version, publisher, runtime, artifacts per platform, digest",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, where, err := findPackage(args[0], dirs)
			if err != nil {
				return a.failure(err)
			}
			if a.output != "text" {
				return a.writeJSON(map[string]any{
					"location": where, "digest": p.Digest(), "descriptor_sha256": p.DescriptorSHA256,
					"descriptor": p.Descriptor,
				})
			}
			d := p.Descriptor
			w := tabwriter.NewWriter(a.stdio.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(w, "id\t%s\n", d.Package.ID)
			fmt.Fprintf(w, "version\t%s\n", d.Package.Version)
			fmt.Fprintf(w, "publisher\t%s\n", d.Package.Publisher)
			fmt.Fprintf(w, "runtime\t%s %s\n", d.Runtime.Name, d.Runtime.Version)
			fmt.Fprintf(w, "adapter\t%s sha256:%s\n", d.Adapter.Path, d.Adapter.SHA256)
			fmt.Fprintf(w, "location\t%s\n", where)
			fmt.Fprintf(w, "digest\t%s\n", p.Digest())
			if len(d.Artifacts) == 0 {
				fmt.Fprintf(w, "artifacts\tnone (built in)\n")
			}
			for _, plat := range slices.Sorted(maps.Keys(d.Artifacts)) {
				for _, art := range d.Artifacts[plat] {
					fmt.Fprintf(w, "artifact %s\t%s %s@%s %s\n", plat, art.Kind, art.Name, art.Version, artifactDigest(art))
				}
			}
			return w.Flush()
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the bundled packages and those under --dir: id, version, runtime, digest",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pkgs, problems, err := allPackages(dirs)
			if err != nil {
				return a.failure(err)
			}
			for _, e := range problems {
				fmt.Fprintln(a.stdio.Err, "warning:", e)
			}
			if a.output != "text" {
				type row struct {
					ID       string `json:"id"`
					Version  string `json:"version"`
					Runtime  string `json:"runtime"`
					Digest   string `json:"digest"`
					Catalog  string `json:"catalog"`
					Location string `json:"location"`
				}
				rows := []row{}
				for _, lp := range pkgs {
					d := lp.pkg.Descriptor
					rows = append(rows, row{d.Package.ID, d.Package.Version, d.Runtime.Name + " " + d.Runtime.Version, lp.pkg.Digest(), "-", lp.where})
				}
				return a.writeJSON(map[string]any{"packages": rows})
			}
			w := tabwriter.NewWriter(a.stdio.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tVERSION\tRUNTIME\tDIGEST\tCATALOG\tLOCATION")
			for _, lp := range pkgs {
				d := lp.pkg.Descriptor
				fmt.Fprintf(w, "%s\t%s\t%s %s\t%s\t%s\t%s\n", d.Package.ID, d.Package.Version, d.Runtime.Name, d.Runtime.Version, lp.pkg.Digest(), "-", lp.where)
			}
			return w.Flush()
		},
	}
	verify := &cobra.Command{
		Use:   "verify PATH|ID",
		Short: "Check a package: strict descriptor, schema, credential lint, adapter and artifact digests; exit 1 on any finding",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, where, err := findPackage(args[0], dirs)
			findings := pkgdesc.FindingsOf(err)
			if err != nil && findings == nil {
				return a.failure(err)
			}
			if p != nil {
				for _, c := range packageChecks() {
					findings = append(findings, c.Run(cmd.Context(), p)...)
				}
			}
			if a.output != "text" {
				doc := map[string]any{"location": where, "ok": len(findings) == 0, "findings": findings}
				if findings == nil {
					doc["findings"] = []any{}
				}
				if p != nil {
					doc["id"], doc["version"], doc["digest"] = p.ID(), p.Version(), p.Digest()
				}
				if err := a.writeJSON(doc); err != nil {
					return err
				}
			} else {
				for _, f := range findings {
					fmt.Fprintf(a.stdio.Out, "%s [%s]\n", f.Error(), f.Code)
				}
				if len(findings) == 0 {
					fmt.Fprintf(a.stdio.Out, "ok %s@%s %s\n", p.ID(), p.Version(), p.Digest())
				}
			}
			if len(findings) > 0 {
				return silentExit(ExitFailure)
			}
			return nil
		},
	}
	for _, c := range []*cobra.Command{digest, show, list, verify} {
		addDirs(c)
	}
	return []*cobra.Command{digest, show, list, verify}
}

func artifactDigest(a contract.PackageArtifact) string {
	var parts []string
	for _, alg := range slices.Sorted(maps.Keys(a.Digest)) {
		v := a.Digest[alg]
		if !strings.HasPrefix(v, alg+"-") {
			v = alg + ":" + v
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, " ")
}

// located is a loaded package and where it was found ("bundled:<id>" or
// its directory).
type located struct {
	pkg   *pkgdesc.Package
	where string
}

// findPackage loads arg: a package directory when one exists at that
// path, else the bundled package with that id, else one under dirs.
func findPackage(arg string, dirs []string) (*pkgdesc.Package, string, error) {
	dir, fsys, where, err := resolvePackage(arg, dirs)
	switch {
	case err != nil:
		return nil, where, err
	case dir != "":
		p, err := pkgdesc.Load(dir)
		return p, where, err
	}
	p, err := pkgdesc.LoadFS(fsys)
	return p, where, err
}

// packageManifest is the digest manifest of arg (a directory or an id),
// taken whether or not its descriptor is valid.
func packageManifest(arg string, dirs []string) (*treemanifest.Manifest, string, error) {
	dir, fsys, where, err := resolvePackage(arg, dirs)
	switch {
	case err != nil:
		return nil, where, err
	case dir != "":
		m, err := treemanifest.Take(dir, pkgdesc.DigestOptions)
		return m, where, err
	}
	m, err := treemanifest.TakeFS(fsys, pkgdesc.DigestOptions)
	return m, where, err
}

// resolvePackage finds arg: an existing directory (dir), a bundled
// package id (fsys) or the id of a package under dirs (dir); where names
// it for output.
func resolvePackage(arg string, dirs []string) (dir string, fsys fs.FS, where string, err error) {
	if info, err := os.Stat(arg); err == nil && info.IsDir() {
		abs, err := filepath.Abs(arg)
		return abs, nil, abs, err
	}
	fsys, dir, err = packageByID(arg, dirs)
	switch {
	case err != nil:
		return "", nil, arg, err
	case dir != "":
		return dir, nil, dir, nil
	}
	return "", fsys, "bundled:" + arg, nil
}

// packageByID finds id among the bundled packages (fsys) or, failing
// that, the package directories under dirs (where).
func packageByID(id string, dirs []string) (fsys fs.FS, where string, err error) {
	pkgs, err := bundled.Packages()
	if err != nil {
		return nil, "", err
	}
	if f, ok := pkgs[id]; ok {
		return f, "", nil
	}
	known := slices.Sorted(maps.Keys(pkgs))
	for _, dir := range packageDirs(dirs) {
		p, err := pkgdesc.Load(dir)
		if err == nil && p.ID() == id {
			return nil, dir, nil
		}
		if err == nil {
			known = append(known, p.ID())
		}
	}
	return nil, "", &contract.ConfigError{Failure: contract.Failure{
		Stage: contract.StagePlan, Code: codePackageNotFound, Path: id,
		Message: fmt.Sprintf("no package directory at %s and no package with that id (known: %s)", id, strings.Join(known, ", ")),
	}}
}

// packageDirs expands dirs: a directory holding fabric-package.json is a
// package; any other directory contributes its subdirectories that hold
// one.
func packageDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, contract.PackageDescriptorFile)); err == nil {
			out = append(out, d)
			continue
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			sub := filepath.Join(d, e.Name())
			if _, err := os.Stat(filepath.Join(sub, contract.PackageDescriptorFile)); e.IsDir() && err == nil {
				out = append(out, sub)
			}
		}
	}
	return out
}

// allPackages loads every bundled package, then those under dirs, sorted
// by id; a package under dirs that does not load is a problem, not a
// failure of the listing.
func allPackages(dirs []string) ([]located, []error, error) {
	pkgs, err := bundled.Packages()
	if err != nil {
		return nil, nil, err
	}
	var out []located
	for _, id := range slices.Sorted(maps.Keys(pkgs)) {
		p, err := pkgdesc.LoadFS(pkgs[id])
		if err != nil {
			return nil, nil, fmt.Errorf("bundled package %s: %w", id, err)
		}
		out = append(out, located{p, "bundled:" + id})
	}
	var problems []error
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			problems = append(problems, fmt.Errorf("--dir %s: %w", d, errors.Unwrap(err)))
		}
	}
	for _, dir := range packageDirs(dirs) {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, nil, err
		}
		p, err := pkgdesc.Load(abs)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		out = append(out, located{p, abs})
	}
	return out, problems, nil
}
