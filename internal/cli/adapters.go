package cli

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/internal/cliflag"
)

func (a *app) adaptersCommand() *cobra.Command {
	var baseDir string
	var local []string
	cmd := &cobra.Command{Use: "adapters", Short: "List and show discovered adapter descriptors"}
	cmd.PersistentFlags().StringVar(&baseDir, "base-dir", "", "base directory whose adapters/ and node_modules are searched (default: current directory)")
	cliflag.Strings(cmd.PersistentFlags(), &local, "path", "extra descriptor file or directory (repeatable), like discovery.local_paths")
	resolveBase := func() (string, error) {
		if baseDir != "" {
			return absPath(baseDir)
		}
		return os.Getwd()
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List every discovered adapter and where it came from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bd, err := resolveBase()
			if err != nil {
				return err
			}
			infos, diags, err := a.client().Adapters(cmd.Context(), bd, absPaths(local))
			if err != nil {
				return a.failure(err)
			}
			if a.output == "json" {
				type row struct {
					AdapterID       string `json:"adapter_id"`
					ContractVersion string `json:"contract_version"`
					AdapterKind     string `json:"adapter_kind"`
					Source          string `json:"source"`
					Path            string `json:"path"`
				}
				rows := []row{}
				for _, i := range infos {
					rows = append(rows, row{i.AdapterID, i.ContractVersion, i.AdapterKind, i.Source, i.Path})
				}
				return a.writeJSON(map[string]any{"adapters": rows, "diagnostics": diags})
			}
			w := tabwriter.NewWriter(a.stdio.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ADAPTER\tCONTRACT\tKIND\tSOURCE\tPATH")
			for _, i := range infos {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", i.AdapterID, i.ContractVersion, i.AdapterKind, i.Source, i.Path)
			}
			w.Flush()
			for _, d := range diags {
				fmt.Fprintf(a.stdio.Err, "%s: %s: %s\n", d.Severity, d.Code, d.Message)
			}
			return nil
		},
	}
	show := &cobra.Command{
		Use:   "show ADAPTER_ID",
		Short: "Print one adapter's descriptor and provenance",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bd, err := resolveBase()
			if err != nil {
				return err
			}
			infos, _, err := a.client().Adapters(cmd.Context(), bd, absPaths(local))
			if err != nil {
				return a.failure(err)
			}
			for _, i := range infos {
				if i.AdapterID != args[0] {
					continue
				}
				if a.output == "json" {
					return a.writeJSON(i)
				}
				d := i.Descriptor
				w := tabwriter.NewWriter(a.stdio.Out, 0, 4, 2, ' ', 0)
				fmt.Fprintf(w, "adapter:\t%s\ncontract:\t%s\nkind:\t%s\nsource:\t%s\npath:\t%s\n", i.AdapterID, i.ContractVersion, i.AdapterKind, i.Source, i.Path)
				fmt.Fprintf(w, "accepts:\t%v\n", d.Config.Accepts)
				fmt.Fprintf(w, "instruction modes:\t%v\n", d.Config.SystemInstructionModes)
				fmt.Fprintf(w, "capabilities:\tstreaming=%t cancellation=%t service=%t updates=%t\n", d.Capabilities.Streaming, d.Capabilities.Cancellation, d.Capabilities.Service, d.Capabilities.Updates)
				fmt.Fprintf(w, "requires binaries:\t%v\n", d.Requirements.Binaries)
				fmt.Fprintf(w, "requires env:\t%v\n", d.Requirements.Env)
				return w.Flush()
			}
			return a.failure(fmt.Errorf("adapter %q not found", args[0]))
		},
	}
	cmd.AddCommand(list, show)
	return cmd
}
