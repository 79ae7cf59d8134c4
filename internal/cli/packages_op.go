package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/pkgop"
)

// CodePackageUnreadable: the package given to `packages op run` has no
// readable, valid descriptor, or its state paths do not resolve.
const CodePackageUnreadable = "operation_package_unreadable"

// packagesOpCommands are `fabric packages op run`.
func (a *app) packagesOpCommands() []*cobra.Command {
	op := &cobra.Command{Use: "op", Short: "Run a package's helper operations, held to their declared writes"}
	var home string
	var allow bool
	var watch []string
	run := &cobra.Command{
		Use:   "run ID|PACKAGE-DIR OP-ID",
		Short: "Run one helper operation against the state paths under --home (read operations change nothing; configure operations only their writes)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			pkg, _, err := findPackage(args[0], nil)
			if err != nil {
				return a.failure(opError(args[0], "cannot read the package", err))
			}
			pkg, cleanup, err := packageOnDisk(pkg)
			if err != nil {
				return a.failure(opError(args[0], "cannot read the package", err))
			}
			defer cleanup()
			dir, desc := pkg.Dir, &pkg.Descriptor
			var found *contract.PackageOperation
			var ids []string
			for i := range desc.Operations {
				ids = append(ids, desc.Operations[i].ID)
				if desc.Operations[i].ID == args[1] {
					found = &desc.Operations[i]
				}
			}
			if found == nil {
				return a.failure(opError(dir, fmt.Sprintf("package %s has no operation %q (it has: %s)", desc.Package.ID, args[1], strings.Join(ids, ", ")), nil))
			}
			if home, err = filepath.Abs(home); err != nil {
				return a.failure(opError(dir, "--home", err))
			}
			paths, err := resolveStatePaths(desc.StatePaths, home)
			if err != nil {
				return a.failure(opError(filepath.Join(dir, contract.PackageDescriptorFile), err.Error(), nil))
			}
			env := pkgop.Env{Home: home, StatePaths: paths, Watch: []string{home, dir}, Environ: pkgop.Environ(home, nil, nil)}
			for _, w := range watch {
				abs, err := filepath.Abs(w)
				if err != nil {
					return a.failure(opError(w, "--watch", err))
				}
				env.Watch = append(env.Watch, abs)
			}
			res, runErr := pkgop.Run(cmd.Context(), *found, env, pkgop.Options{AllowUnenforcedRead: allow, Overlay: pkgop.OverlayAvailable()})
			return a.operationResult(res, runErr)
		},
	}
	run.Flags().StringVar(&home, "home", ".", "the runtime home the package's state paths resolve under (the operation's working directory and HOME)")
	run.Flags().BoolVar(&allow, "allow-unenforced-read", false, "run a read operation where Landlock is unavailable, with detection only (the result says enforcement: none)")
	run.Flags().StringArrayVar(&watch, "watch", nil, "another root to hold unchanged (the workspace, the artifact root); repeatable")
	op.AddCommand(run)
	return []*cobra.Command{op}
}

func opError(path, msg string, err error) error {
	return &contract.ConfigError{Failure: contract.Failure{Stage: contract.StageConfig, Code: CodePackageUnreadable, Path: path, Message: msg, Err: err}}
}

// operationResult prints the result (JSON: status, result and errors;
// text: the operation's output, then any error and violation on stderr).
func (a *app) operationResult(res *pkgop.Result, err error) error {
	if a.output != "text" {
		out := map[string]any{"status": "ok"}
		if res != nil {
			out["result"] = res
		}
		if err != nil {
			out["status"] = "failed"
			out["errors"] = []*contract.ErrorInfo{fabric.ErrorInfo(err)}
		}
		_ = a.writeJSON(out)
	} else {
		if res != nil {
			io.WriteString(a.stdio.Out, res.Stdout)
			io.WriteString(a.stdio.Err, res.Stderr)
		}
		if err != nil {
			fmt.Fprintln(a.stdio.Err, "error:", err)
		}
		if res != nil {
			for _, c := range res.Violations {
				fmt.Fprintln(a.stdio.Err, "  "+c.String())
			}
			fmt.Fprintln(a.stdio.Err, "enforcement:", res.Enforcement)
		}
	}
	if err != nil {
		return silentExit(ExitFailure)
	}
	return nil
}

// resolveStatePaths is pkgop.ResolveStatePaths.
func resolveStatePaths(sps []contract.PackageStatePath, home string) (map[string]string, error) {
	return pkgop.ResolveStatePaths(sps, home)
}
