package cli

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/internal/cliflag"

	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/attest"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
	"github.com/fabric-runtime/fabric/internal/qualify"
	"github.com/fabric-runtime/fabric/internal/receipt"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// packagesQualifyCommands are `fabric packages qualify` and `fabric
// packages receipt verify|show`.
func (a *app) packagesQualifyCommands() []*cobra.Command {
	receipt := &cobra.Command{Use: "receipt", Short: "Verify or show a qualification receipt"}
	receipt.AddCommand(a.receiptVerifyCommand(), a.receiptShowCommand())
	return []*cobra.Command{a.packagesQualifyCommand(), receipt}
}

func (a *app) packagesQualifyCommand() *cobra.Command {
	var platform, out, keyFile string
	var allowUnenforced bool
	var itemTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "qualify ID|PATH --out FILE [--platform P] [--key FILE] [--item-timeout D] [--allow-unenforced-read]",
		Short: "Run the conformance suite on a package and write its qualification receipt",
		Long: "Run the conformance suite with the package's own profile (qualification.profile of PATH/fabric-package.json), serving the model endpoint the profile names itself, " +
			"and write an in-toto Statement with the qualification predicate to FILE: signed into a DSSE receipt with --key (a qualifier key), unsigned without. " +
			"Each helper operation the package declares is run too, in a fresh runtime home, as item op.<id>: held to its declared writes, with the manifest diff in its observation. " +
			"When FILE is a directory the receipt is written there as sha256-<hex>.intoto.json. Exit status 0 when the package qualified, 1 otherwise (the statement is written either way).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return &exitError{code: ExitUsage, err: fmt.Errorf("--out is required")}
			}
			var key *attest.PrivateKey
			if keyFile != "" {
				k, err := attest.ReadPrivateKey(keyFile)
				if err != nil {
					return &exitError{code: ExitUsage, err: err}
				}
				key = k
			}
			if platform == "" {
				platform = qualify.Platform()
			}
			pkg, cleanup, err := qualifyPackage(args[0], platform)
			if err != nil {
				return &exitError{code: ExitFailure, err: err}
			}
			defer cleanup()
			log := slog.New(slog.NewTextHandler(a.stdio.Err, &slog.HandlerOptions{Level: slog.LevelWarn}))
			if a.output == "text" {
				log = slog.New(slog.NewTextHandler(a.stdio.Err, nil))
			}
			st, err := qualify.Qualify(cmd.Context(), *pkg, qualify.Options{Platform: platform, Logger: log, AllowUnenforcedRead: allowUnenforced, ItemTimeout: itemTimeout})
			if err != nil {
				return &exitError{code: ExitFailure, err: err}
			}
			data, err := statementBytes(st, key)
			if err != nil {
				return &exitError{code: ExitFailure, err: err}
			}
			path := out
			if fi, err := os.Stat(out); err == nil && fi.IsDir() {
				path = filepath.Join(out, receipt.ReceiptName(data))
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				return &exitError{code: ExitFailure, err: err}
			}
			pred := st.Predicate
			res := map[string]any{"package": pkg.ID + "@" + pkg.Version, "package_digest": map[string]string{"sha256": pkg.SHA256},
				"platform": platform, "qualified": pred.Verdict.Qualified, "summary": pred.Summary, "out": path, "signed": key != nil}
			if key != nil {
				res["receipt"] = receipt.ReceiptName(data)
			}
			if len(pred.Verdict.Reasons) > 0 {
				res["reasons"] = pred.Verdict.Reasons
			}
			if a.output == "text" {
				writeResults(a, st)
				fmt.Fprintf(a.stdio.Out, "%s@%s %s on %s: %s\n", pkg.ID, pkg.Version, pred.Summary.Result, platform, path)
			} else if err := a.writeJSON(res); err != nil {
				return err
			}
			if !pred.Verdict.Qualified {
				return silentExit(ExitFailure)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&platform, "platform", "", "platform qualified (default: this machine's, e.g. linux-x86_64)")
	cmd.Flags().StringVar(&out, "out", "", "file (or directory) the receipt is written to")
	cmd.Flags().StringVar(&keyFile, "key", "", "qualifier private key file that signs the receipt")
	cmd.Flags().BoolVar(&allowUnenforced, "allow-unenforced-read", false, "run read operations where Landlock is unavailable, with detection only (their items say enforcement: none); without it they are not_tested")
	cmd.Flags().DurationVar(&itemTimeout, "item-timeout", conformance.DefaultItemTimeout, "time limit of each suite item (a harness that starts slowly needs more)")
	return cmd
}

// statementBytes is the receipt (signed) or the bare statement.
func statementBytes(st *receipt.Statement, key *attest.PrivateKey) ([]byte, error) {
	if key == nil {
		b, err := json.MarshalIndent(st, "", "  ")
		return append(b, '\n'), err
	}
	env, err := receipt.Sign(st, key)
	if err != nil {
		return nil, err
	}
	return env.Marshal()
}

func (a *app) receiptVerifyCommand() *cobra.Command {
	var keyFiles []string
	var pkgPath, platform string
	cmd := &cobra.Command{
		Use:   "verify FILE --key PUBFILE [--package PATH] [--platform P]",
		Short: "Verify a qualification receipt: signer, subjects, platform and verdict",
		Long: "Verify the DSSE envelope of FILE against the qualifier keys, then that it qualifies: a qualified verdict borne out by its results on the platform and, with --package, " +
			"the package directory's digest, its adapter descriptor's and its artifacts' for the platform as subjects. Exit status 1 with receipt_unverifiable or package_unqualified.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(keyFiles) == 0 {
				return &exitError{code: ExitUsage, err: fmt.Errorf("--key is required")}
			}
			var keys []attest.PublicKey
			for _, f := range keyFiles {
				k, _, err := attest.ReadPublicKey(f)
				if err != nil {
					return &exitError{code: ExitUsage, err: err}
				}
				keys = append(keys, k)
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return &exitError{code: ExitUsage, err: err}
			}
			if platform == "" {
				platform = qualify.Platform()
			}
			expect := receipt.Expectation{Platform: platform}
			if pkgPath != "" {
				pkg, _, err := findPackage(pkgPath, nil)
				if err != nil {
					return &exitError{code: ExitFailure, err: err}
				}
				expect = receipt.Expectation{PackageID: pkg.ID(), PackageVersion: pkg.Version(), PackageSHA256: strings.TrimPrefix(pkg.Digest(), treemanifest.Prefix),
					DescriptorSHA256: pkg.AdapterSHA256, Artifacts: pkg.Descriptor.Artifacts[platform], Platform: platform}
			}
			st, err := receipt.VerifyReceipt(data, keys, expect)
			if err != nil {
				return a.failure(err)
			}
			p := st.Predicate
			if a.output == "text" {
				fmt.Fprintf(a.stdio.Out, "verified: %s@%s qualified on %s (%s)\n", p.Package.ID, p.Package.Version, p.Platform, receipt.ReceiptName(data))
				return nil
			}
			return a.writeJSON(map[string]any{"status": "verified", "receipt": receipt.ReceiptName(data),
				"package": p.Package.ID + "@" + p.Package.Version, "platform": p.Platform, "qualified": p.Verdict.Qualified, "package_checked": pkgPath != ""})
		},
	}
	cliflag.Strings(cmd.Flags(), &keyFiles, "key", "qualifier public (or private) key file; repeat for more")
	cmd.Flags().StringVar(&pkgPath, "package", "", "package directory the receipt must be about")
	cmd.Flags().StringVar(&platform, "platform", "", "platform the receipt must be for (default: this machine's)")
	return cmd
}

func (a *app) receiptShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "show FILE",
		Short: "Show a qualification receipt's statement without verifying it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return &exitError{code: ExitUsage, err: err}
			}
			env, err := attest.ParseEnvelope(data)
			if err != nil {
				return &exitError{code: ExitFailure, err: err}
			}
			st, err := receipt.ParseStatement(env.Payload)
			if err != nil {
				return &exitError{code: ExitFailure, err: err}
			}
			if a.output == "text" {
				writeResults(a, st)
				p := st.Predicate
				fmt.Fprintf(a.stdio.Out, "%s@%s %s on %s (not verified; %d signature(s))\n", p.Package.ID, p.Package.Version, p.Summary.Result, p.Platform, len(env.Signatures))
				return nil
			}
			return a.writeJSON(map[string]any{"verified": false, "receipt": receipt.ReceiptName(data), "statement": st})
		},
	}
}

// writeResults prints one line per result: verdict, tier, id, name,
// and whether the postcondition was observed.
func writeResults(a *app, st *receipt.Statement) {
	for _, r := range st.Predicate.Results {
		seen := ""
		if o := r.Observation; o != nil {
			seen = fmt.Sprintf(" [observed by %s: agrees=%v]", o.By, o.Agrees)
		}
		fmt.Fprintf(a.stdio.Out, "%-10s %-13s %-3s %-18s %s%s\n", r.Verdict, r.Tier, r.ID, r.Name, r.Detail, seen)
		if o := r.Observation; o != nil {
			for _, c := range o.Changes {
				fmt.Fprintf(a.stdio.Out, "           %s %s\n", c.Kind, c.Path)
			}
		}
	}
}

// qualifyPackage finds arg (a package directory, or the id of a
// package built in) as Qualify takes it, for platform. A built-in package
// is written to a temporary directory first (with the same digest);
// cleanup removes it.
func qualifyPackage(arg, platform string) (*qualify.Package, func(), error) {
	p, _, err := findPackage(arg, nil)
	if err != nil {
		return nil, nil, err
	}
	p, cleanup, err := packageOnDisk(p)
	if err != nil {
		return nil, nil, err
	}
	q, err := qualify.PackageFrom(p, platform)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return &q, cleanup, nil
}

// packageOnDisk is p itself when it is a directory, else a copy of its
// files in a new temporary directory, checked to have p's digest.
func packageOnDisk(p *pkgdesc.Package) (*pkgdesc.Package, func(), error) {
	if p.Dir != "" {
		return p, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "fabric-package-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	if err := os.CopyFS(dir, p.FS); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("package %s: %w", p.ID(), err)
	}
	q, err := pkgdesc.Load(dir)
	if err == nil && q.Digest() != p.Digest() {
		err = fmt.Errorf("package %s: its copy in %s has digest %s, not %s", p.ID(), dir, q.Digest(), p.Digest())
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return q, cleanup, nil
}

// packageProfile is the conformance profile of a package directory
// target, with the package's adapter descriptor (ok false when target is
// not a package directory).
func packageProfile(target string) (_ conformance.Profile, ok bool, _ error) {
	if st, err := os.Stat(filepath.Join(target, contract.PackageDescriptorFile)); err != nil || !st.Mode().IsRegular() {
		return conformance.Profile{}, false, nil
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return conformance.Profile{}, true, &exitError{code: ExitUsage, err: err}
	}
	pkg, err := pkgdesc.Load(abs)
	if err != nil {
		return conformance.Profile{}, true, &exitError{code: ExitUsage, err: err}
	}
	q := pkg.Descriptor.Qualification
	if q == nil || q.Profile == "" {
		return conformance.Profile{}, true, &exitError{code: ExitUsage, err: fmt.Errorf("package %s has no qualification.profile", pkg.Dir)}
	}
	p, err := conformance.LoadProfile(pkg.Path(q.Profile))
	if err != nil {
		return p, true, &exitError{code: ExitUsage, err: err}
	}
	p.Descriptor = pkg.AdapterPath
	return p, true, nil
}
