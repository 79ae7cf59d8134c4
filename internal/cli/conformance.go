package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/internal/cliflag"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/internal/clientopts"
)

func (a *app) conformanceCommand() *cobra.Command {
	var profilePath string
	var itemTimeout time.Duration
	var only []string
	cmd := &cobra.Command{
		Use:   "conformance DESCRIPTOR|ADAPTER_ID|PACKAGE_DIR [--profile FILE]",
		Short: "Run the adapter conformance suite against one adapter",
		Long: "Run the adapter conformance matrix (discovery, planning and rejections, doctor, lifecycle, failure modes, cleanup, isolation, secret redaction) against one adapter.\n" +
			"DESCRIPTOR is a *.fabric-adapter.json file (found through discovery.local_paths) or ADAPTER_ID a discovered adapter's id. " +
			"PACKAGE_DIR is a runtime package directory (with fabric-package.json): its adapter descriptor and qualification.profile are used. " +
			"Without --profile the built-in profile of a bundled adapter is used, or else a generic one that only starts and stops runtimes. " +
			"A profile naming a modelstub script gets that model endpoint served for the run (no endpoint to start by hand).\n" +
			"With --output text one line per item is printed as it finishes; with json, the report. Exit status 0 when no item failed, 1 otherwise, 2 on usage errors.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := conformanceProfile(args[0], profilePath)
			if err != nil {
				return err
			}
			// Items that start runtimes build clients of their own: they get
			// what the SDK links only by opt-in, as this binary's do.
			opts := conformance.Options{ItemTimeout: itemTimeout, Only: only, ClientOptions: []fabric.Option{
				fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithOTLPExporters(clientopts.OTLP())}}
			if a.output == "text" {
				opts.Progress = func(it conformance.Item) { fmt.Fprintln(a.stdio.Out, it) }
			}
			rep := conformance.Run(cmd.Context(), a.client(), p, opts)
			if a.output == "json" {
				if err := a.writeJSON(rep); err != nil {
					return err
				}
			} else {
				fmt.Fprintln(a.stdio.Out, rep.Summary())
			}
			if !rep.Passed {
				return silentExit(ExitFailure)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&profilePath, "profile", "", "conformance profile (YAML or JSON) saying how to exercise the adapter")
	cmd.Flags().DurationVar(&itemTimeout, "item-timeout", conformance.DefaultItemTimeout, "time limit of each item")
	cliflag.List(cmd.Flags(), &only, "only", "run only these item ids (the others are skipped)")
	return cmd
}

// conformanceProfile resolves the target argument and the profile.
func conformanceProfile(target, profilePath string) (conformance.Profile, error) {
	if profilePath == "" {
		if p, ok, err := packageProfile(target); ok || err != nil {
			return p, err
		}
	}
	adapterID, descriptor, err := conformanceTarget(target)
	if err != nil {
		return conformance.Profile{}, err
	}
	if profilePath == "" {
		if p, ok := conformance.BundledProfile(adapterID); ok {
			p.Descriptor = descriptor
			return p, nil
		}
		return conformance.GenericProfile(adapterID, descriptor), nil
	}
	p, err := conformance.LoadProfile(profilePath)
	if err != nil {
		return p, &exitError{code: ExitUsage, err: err}
	}
	if p.AdapterID != adapterID {
		return p, &exitError{code: ExitUsage, err: fmt.Errorf("profile %s is for adapter %s, not %s", profilePath, p.AdapterID, adapterID)}
	}
	if descriptor != "" {
		p.Descriptor = descriptor
	}
	return p, nil
}

// conformanceTarget reads the adapter id of a descriptor file, or takes
// target as an adapter id.
func conformanceTarget(target string) (adapterID, descriptor string, err error) {
	if !looksLikePath(target) {
		return target, "", nil
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return "", "", &exitError{code: ExitUsage, err: err}
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return "", "", &exitError{code: ExitUsage, err: fmt.Errorf("descriptor: %w", err)}
	}
	var head struct {
		AdapterID string `json:"adapter_id"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return "", "", &exitError{code: ExitFailure, err: fmt.Errorf("descriptor %s is not valid JSON: %w", target, err)}
	}
	if strings.TrimSpace(head.AdapterID) == "" {
		return "", "", &exitError{code: ExitFailure, err: fmt.Errorf("descriptor %s has no adapter_id", target)}
	}
	return head.AdapterID, abs, nil
}

// looksLikePath tells a descriptor path from an adapter id (ids contain
// dots but no slashes and do not end in .json).
func looksLikePath(s string) bool {
	if strings.ContainsRune(s, filepath.Separator) || strings.HasSuffix(s, ".json") {
		return true
	}
	st, err := os.Stat(s)
	return err == nil && st.Mode().IsRegular()
}
