package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/internal/cliflag"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/pkgop"
	"github.com/fabric-runtime/fabric/internal/runtime"
	"github.com/fabric-runtime/fabric/internal/runtimetaint"
)

// CodePackageUnreadable: the package given to `packages op run` has no
// readable, valid descriptor, or its state paths do not resolve.
const CodePackageUnreadable = "operation_package_unreadable"

// CodeRuntimeNotFound: `packages op run --runtime` names a runtime whose
// home is not in the state directory (stopped, or another state dir).
const CodeRuntimeNotFound = "operation_runtime_not_found"

// packagesOpCommands are `fabric packages op run`.
func (a *app) packagesOpCommands() []*cobra.Command {
	op := &cobra.Command{Use: "op", Short: "Run a package's helper operations, held to their declared writes"}
	var home, runtimeID, stateDir string
	var allow bool
	var watch []string
	run := &cobra.Command{
		Use:   "run ID|PACKAGE-DIR OP-ID [--home DIR | --runtime RUNTIME-ID [--state-dir DIR]]",
		Short: "Run one helper operation against the state paths under --home or a runtime's home (read operations change nothing; configure operations only their writes)",
		Long: "Run one helper operation of the package against the state paths under --home, or under the home of the running runtime --runtime names. " +
			"An operation that changes what it must not fails with operation_mutated_state and, run against a runtime, marks that runtime tainted: " +
			"its handle and status say tainted: true (with the taint) from then on.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runtimeID != "" && cmd.Flags().Changed("home") {
				return &exitError{code: ExitUsage, err: fmt.Errorf("--home and --runtime exclude each other: a runtime's state paths are under its own home")}
			}
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
			if runtimeID != "" {
				if stateDir == "" {
					stateDir = runtime.DefaultStateDir()
				}
				if home, err = runtimetaint.FindHome(stateDir, runtimeID); err != nil {
					return a.failure(&contract.RuntimeError{Failure: contract.Failure{Stage: pkgop.Stage, Code: CodeRuntimeNotFound, Path: stateDir, Message: "cannot find the runtime's home", Err: err}})
				}
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
			if runtimeID != "" && res != nil && res.Tainted {
				t := contract.RuntimeTaint{Package: desc.Package.ID + "@" + desc.Package.Version, Operation: found.ID, Mode: found.Mode,
					At: time.Now().UTC().Format(time.RFC3339), Enforcement: res.Enforcement}
				for _, c := range res.Violations {
					t.Violations = append(t.Violations, c.String())
				}
				if err := runtimetaint.Record(home, t); err != nil {
					runErr = errors.Join(runErr, fmt.Errorf("runtime %s is tainted but the mark could not be recorded: %w", runtimeID, err))
				}
			}
			return a.operationResult(res, runErr)
		},
	}
	run.Flags().StringVar(&home, "home", ".", "the runtime home the package's state paths resolve under (the operation's working directory and HOME)")
	run.Flags().BoolVar(&allow, "allow-unenforced-read", false, "run a read operation where Landlock is unavailable, with detection only (the result says enforcement: none)")
	run.Flags().StringVar(&runtimeID, "runtime", "", "the running runtime whose home the state paths resolve under; a violation marks it tainted")
	run.Flags().StringVar(&stateDir, "state-dir", "", "with --runtime: the state directory its home is in (default: $TMPDIR/fabric-hosts, the runtimes' default)")
	cliflag.Strings(run.Flags(), &watch, "watch", "another root to hold unchanged (the workspace, the artifact root); repeatable")
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
