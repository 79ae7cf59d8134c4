package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/schemas"
)

func (a *app) schemaCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "schema [NAME|--all]",
		Short: "Print the JSON Schema (2020-12) of a Fabric document",
		Long:  "Print the JSON Schema of one document, or of every document with --all, as published in the schemas/ directory of Fabric's source. Without arguments, list the document names.",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			names := schemas.Names()
			switch {
			case all && len(args) > 0:
				return &exitError{code: ExitUsage, err: fmt.Errorf("give a NAME or --all, not both")}
			case all:
				out := map[string]json.RawMessage{}
				for _, n := range names {
					out[n], _ = schemas.Lookup(n)
				}
				return a.writeJSON(out)
			case len(args) == 1:
				b, ok := schemas.Lookup(args[0])
				if !ok {
					return &exitError{code: ExitUsage, err: fmt.Errorf("unknown schema %q; known: %v", args[0], names)}
				}
				_, err := a.stdio.Out.Write(b)
				return err
			}
			if a.output == "json" {
				return a.writeJSON(map[string]any{"schemas": names})
			}
			for _, n := range names {
				fmt.Fprintln(a.stdio.Out, n)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "print every schema as one JSON object keyed by name")
	return cmd
}

func absPath(p string) (string, error) { return filepath.Abs(p) }

func absPaths(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		out = append(out, p)
	}
	return out
}
