package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/contract"
)

func (a *app) doctorCommand() *cobra.Command {
	var cf configFlags
	cmd := &cobra.Command{
		Use:   "doctor CONFIG",
		Short: "Run preflight checks: descriptor, plan findings, binaries, env names, files",
		Long:  "Run preflight checks. Exit status 0 when every check passes (warnings allowed), 1 when a check failed, 2 on usage errors.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep := a.client().DoctorFile(cmd.Context(), args[0], cf.loadOptions())
			if a.output == "json" {
				if err := a.writeJSON(rep); err != nil {
					return err
				}
			} else {
				a.printDoctorText(rep)
			}
			if rep.Status == contract.DoctorFail {
				return silentExit(ExitFailure)
			}
			return nil
		},
	}
	cf.register(cmd)
	return cmd
}

func (a *app) printDoctorText(rep contract.DoctorReport) {
	for _, c := range rep.Checks {
		fmt.Fprintf(a.stdio.Out, "%-4s  %s: %s\n", c.Status, c.Name, c.Message)
	}
	fmt.Fprintf(a.stdio.Out, "status: %s\n", rep.Status)
}
