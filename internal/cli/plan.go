package cli

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/contract"
)

func (a *app) planCommand() *cobra.Command {
	var cf configFlags
	cmd := &cobra.Command{
		Use:   "plan CONFIG",
		Short: "Resolve a config against its adapter descriptor and print the RunPlan",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := a.client().LoadConfig(args[0], cf.loadOptions())
			if err != nil {
				return a.failure(err)
			}
			for _, w := range l.Warnings {
				fmt.Fprintf(a.stdio.Err, "warning: %s: %s\n", w.Path, w.Message)
			}
			p, err := a.client().Plan(cmd.Context(), l)
			if err != nil {
				return a.failure(err)
			}
			if a.output == "json" {
				return a.writeJSON(p)
			}
			a.printPlanText(p)
			return nil
		},
	}
	cf.register(cmd)
	return cmd
}

func (a *app) printPlanText(p *contract.RunPlan) {
	w := tabwriter.NewWriter(a.stdio.Out, 0, 4, 2, ' ', 0)
	d := p.AdapterDescriptor
	fmt.Fprintf(w, "agent:\t%s\n", p.AgentName)
	if d != nil {
		fmt.Fprintf(w, "adapter:\t%s (%s, %s)\n", d.Descriptor.AdapterID, d.Descriptor.ContractVersion, d.Source)
		fmt.Fprintf(w, "descriptor:\t%s\n", d.Path)
	}
	fmt.Fprintf(w, "host protocol:\t%s\n", p.HostProtocol)
	fmt.Fprintf(w, "base dir:\t%s\n", p.BaseDir)
	if p.ModelRole != "" {
		m := p.Config.Models[p.ModelRole]
		fmt.Fprintf(w, "model:\t%s = %s/%s\n", p.ModelRole, m.Provider, m.Model)
	}
	c := p.Capabilities
	fmt.Fprintf(w, "capabilities:\tstreaming=%t cancellation=%t service=%t updates=%t\n", c.Streaming, c.Cancellation, c.Service, c.Updates)
	if l := p.Limits; l != nil {
		fmt.Fprintf(w, "limits:\tstart=%gs stop=%gs grace=%gs invoke=%gs\n", l.StartSeconds, l.StopSeconds, l.ExitGraceSeconds, l.InvokeSeconds)
	}
	if t := p.TelemetryPlan; t != nil && len(t.Providers) > 0 {
		fmt.Fprintf(w, "telemetry:\t%s\n", strings.Join(t.Providers, ", "))
	}
	w.Flush()
	if len(p.CapabilityPlan.Routes) > 0 {
		fmt.Fprintln(a.stdio.Out, "routes:")
		routes := append([]contract.CapabilityRoute(nil), p.CapabilityPlan.Routes...)
		sort.SliceStable(routes, func(i, j int) bool { return routes[i].Kind < routes[j].Kind })
		tw := tabwriter.NewWriter(a.stdio.Out, 0, 4, 2, ' ', 0)
		for _, r := range routes {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", r.Kind, r.Name, r.Target, r.Reason)
		}
		tw.Flush()
	}
	for _, dg := range p.Diagnostics {
		fmt.Fprintf(a.stdio.Out, "%s: %s", dg.Severity, dg.Code)
		if dg.Path != "" {
			fmt.Fprintf(a.stdio.Out, " at %s", dg.Path)
		}
		fmt.Fprintf(a.stdio.Out, ": %s\n", dg.Message)
	}
}
