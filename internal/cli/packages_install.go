package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
	"github.com/fabric-runtime/fabric/internal/pkginstall"
)

// installSource reads the package to install: the package directory from
// when given, else the bundled package id, with every check a package
// gets (internal/pkgdesc).
func installSource(id, from string) (pkginstall.Source, error) {
	var p *pkgdesc.Package
	var err error
	if from != "" {
		p, err = pkgdesc.Load(from)
	} else {
		var fsys fs.FS
		if fsys, _, err = packageByID(id, nil); err != nil {
			var ce *contract.ConfigError
			if errors.As(err, &ce) {
				ce.Stage, ce.Code = pkginstall.StageInstall, codePackageNotBundled
			}
			return pkginstall.Source{}, err
		}
		p, err = pkgdesc.LoadFS(fsys)
	}
	if err != nil {
		return pkginstall.Source{}, err
	}
	fsys := p.FS
	if fsys == nil {
		fsys = os.DirFS(p.Dir)
	}
	return pkginstall.Source{Descriptor: p.Descriptor, FS: fsys, Digest: p.Digest()}, nil
}

// codePackageNotBundled: `fabric packages install ID` names no bundled
// package.
const codePackageNotBundled = "package_not_bundled"

func (a *app) packagesInstallCommands() []*cobra.Command {
	var force bool
	var dataDir, from string
	cmd := &cobra.Command{
		Use:   "install ID[@VERSION] [--force] [--data-dir DIR] [--from DIR]",
		Short: "Install a package's pinned artifacts into Fabric's data directory",
		Long: "Install the pinned artifacts of a runtime package (npm ci from its lockfile, on its pinned Node when it names one) into " +
			"DATA/packages/ID@VERSION/, where DATA is --data-dir, else $FABRIC_DATA_HOME, else $XDG_DATA_HOME/fabric, else ~/.local/share/fabric. " +
			"Every artifact's digest is checked against the package descriptor and the lockfile; a mismatch fails with artifact_digest_mismatch. " +
			"Planning, doctor and runtimes then find the package's binaries without FABRIC_HARNESS_PATH, and each start re-checks the installed files. " +
			"An install of the same version that still verifies is kept; --force reinstalls. ID is a bundled package id; --from DIR installs the package directory DIR (whose id must be ID).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, version, _ := strings.Cut(args[0], "@")
			src, err := installSource(id, from)
			if err != nil {
				return a.failure(err)
			}
			if p := src.Descriptor.Package; p.ID != id || (version != "" && p.Version != version) {
				return a.failure(&contract.ConfigError{Failure: contract.Failure{Stage: pkginstall.StageInstall, Code: pkginstall.CodeNotInstallable, Path: "package",
					Message: fmt.Sprintf("the package directory holds %s@%s, not %s", p.ID, p.Version, args[0])}})
			}
			if dataDir == "" {
				if dataDir, err = pkginstall.DataDir(os.Getenv); err != nil {
					return &exitError{code: ExitUsage, err: err}
				}
			}
			opts := pkginstall.Options{DataDir: dataDir, Force: force}
			if a.output == "text" {
				opts.Stderr = a.stdio.Err
			}
			start := time.Now()
			in, err := pkginstall.Install(cmd.Context(), src, opts)
			if err != nil {
				return a.failure(err)
			}
			status := "installed"
			if in.Reused {
				status = "already_installed"
			}
			if a.output == "text" {
				fmt.Fprintf(a.stdio.Out, "%s %s in %s (%.1fs)\n", status, in.Entry(), in.Root, time.Since(start).Seconds())
				return nil
			}
			return a.writeJSON(map[string]any{
				"status": status, "package": in.Entry(), "dir": in.Root,
				"package_digest": in.Record.PackageDigest, "manifest_digest": in.Record.Manifest.Digest,
				"platform": in.Record.Platform, "artifacts": in.Record.Artifacts, "bins": in.Record.Bins,
				"bin_dirs": in.BinDirs(), "seconds": time.Since(start).Seconds(),
			})
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "reinstall even when the installed version verifies")
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "Fabric's data directory (default $FABRIC_DATA_HOME, else $XDG_DATA_HOME/fabric, else ~/.local/share/fabric)")
	cmd.Flags().StringVar(&from, "from", "", "install this package directory (holding fabric-package.json) instead of the bundled package")
	return []*cobra.Command{cmd}
}
