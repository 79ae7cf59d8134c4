package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/contract"
)

// levelFlags are --live, --active and --ready (at most one).
type levelFlags struct{ live, active, ready bool }

func (f *levelFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.live, "live", false, "check that the native process or session is observed (default)")
	cmd.Flags().BoolVar(&f.active, "active", false, "also check that its request interface answers")
	cmd.Flags().BoolVar(&f.ready, "ready", false, "also check that its required setup and connections are observed")
	cmd.MarkFlagsMutuallyExclusive("live", "active", "ready")
}

func (f *levelFlags) level() string {
	switch {
	case f.ready:
		return contract.LevelReady
	case f.active:
		return contract.LevelActive
	}
	return contract.LevelLive
}

func (a *app) checkCommand() *cobra.Command {
	var cf configFlags
	var lf levelFlags
	var timeout float64
	cmd := &cobra.Command{
		Use:   "check CONFIG [--live|--active|--ready] [--timeout S]",
		Short: "Start a runtime, run a bounded health check of it, stop it, and print the CheckReport",
		Long: "Start a runtime for CONFIG, check it at the requested level (cumulative: live, active, ready; default live) within one deadline (--timeout, default 3 s), then stop it.\n" +
			"The check never calls the model. Exit status 0 when the check passed, 1 when it did not (the report says why) or the runtime could not start, 2 on usage errors.\n" +
			"To check runtimes that keep running, use fabric-agent-ctl check against its serve daemon, or Runtime.Check in the Go SDK.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := a.client().LoadConfig(args[0], cf.loadOptions())
			if err != nil {
				return a.failure(err)
			}
			for _, w := range l.Warnings {
				fmt.Fprintf(a.stdio.Err, "warning: %s: %s\n", w.Path, w.Message)
			}
			rt, err := a.client().StartRuntime(cmd.Context(), l)
			if err != nil {
				return a.failure(err)
			}
			rep, checkErr := rt.Check(cmd.Context(), contract.CheckRequest{Level: lf.level(), TimeoutSeconds: timeout})
			_, stopErr := rt.Stop(context.WithoutCancel(cmd.Context()))
			if checkErr != nil {
				return a.failure(checkErr)
			}
			if a.output == "json" {
				if err := a.writeJSON(rep); err != nil {
					return err
				}
			} else {
				a.printCheckText(rep)
			}
			if stopErr != nil {
				fmt.Fprintln(a.stdio.Err, "warning: stop:", stopErr)
			}
			if rep.Outcome != contract.OutcomePassed {
				return silentExit(ExitFailure)
			}
			return nil
		},
	}
	cf.register(cmd)
	lf.register(cmd)
	cmd.Flags().Float64Var(&timeout, "timeout", 0, "deadline of the whole check in seconds (default 3)")
	return cmd
}

func (a *app) printCheckText(rep contract.CheckReport) {
	for _, o := range rep.Observations {
		line := fmt.Sprintf("%-8s %-7s %-11s", o.Stage, o.Level, o.Outcome)
		if o.ReasonCode != nil {
			line += " " + *o.ReasonCode
		}
		if o.Message != "" {
			line += "  " + o.Message
		}
		fmt.Fprintln(a.stdio.Out, line)
	}
	summary := fmt.Sprintf("[%s]", rep.Outcome)
	if rep.ReasonCode != nil {
		summary += " " + *rep.ReasonCode
	}
	fmt.Fprintf(a.stdio.Out, "%s in %d ms\n", summary, rep.ElapsedMillis)
}
