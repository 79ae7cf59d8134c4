package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/internal/deploy"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

func (a *app) deployCommand() *cobra.Command {
	return a.group(&cobra.Command{
		Use:   "deploy",
		Short: "Declare agents and shared services in a fabric.deployment document and keep them running under a supervisor",
		Long: "plan observes only; apply reconciles, waits for readiness and exits while a supervisor (fabric serve) keeps the agents and services running; " +
			"status, export and destroy read and remove what apply made. Every verb takes the document, --state-dir (default .fabric/<metadata.name>/ beside it) and -o json|text.",
	}, func(cmd *cobra.Command) { a.populateDeploy(cmd) })
}

// populateDeploy adds deploy's verbs and its --state-dir.
func (a *app) populateDeploy(cmd *cobra.Command) {
	var stateDir string
	var timeout time.Duration
	opts := func(file string) deploy.Options {
		return deploy.Options{File: file, StateDir: stateDir, Timeout: timeout, Client: a.client()}
	}
	cmd.PersistentFlags().StringVar(&stateDir, "state-dir", "", "state directory (default: .fabric/<metadata.name>/ beside the document)")

	initCmd := &cobra.Command{
		Use:   "init NAME [--file FILE]",
		Short: "Write a document skeleton with a fresh uid (NAME.yaml, or --file)",
		Args:  cobra.ExactArgs(1),
	}
	var initFile string
	initCmd.Flags().StringVar(&initFile, "file", "", "where to write the document (default NAME.yaml)")
	initCmd.RunE = func(cmd *cobra.Command, args []string) error {
		path := initFile
		if path == "" {
			path = args[0] + ".yaml"
		}
		if err := deploy.Init(args[0], path); err != nil {
			return a.deployFailure(err)
		}
		return a.deployOut(map[string]any{"status": "written", "file": path}, func() { fmt.Fprintf(a.stdio.Out, "wrote %s\n", path) })
	}

	planCmd := &cobra.Command{Use: "plan FILE", Short: "Show what apply would change (starts nothing)", Args: cobra.ExactArgs(1)}
	planCmd.RunE = func(cmd *cobra.Command, args []string) error {
		res, err := deploy.Plan(cmd.Context(), opts(args[0]))
		if err != nil {
			return a.deployFailure(err)
		}
		return a.deployOut(res, func() {
			for _, c := range res.Changes {
				fmt.Fprintf(a.stdio.Out, "%-8s %s  (%s)\n", c.Action, c.Resource, c.Reason)
			}
			for _, r := range res.Refused {
				fmt.Fprintf(a.stdio.Out, "refused: %s\n", r.Error())
			}
		})
	}

	applyCmd := &cobra.Command{Use: "apply FILE [--timeout D]", Short: "Reconcile the deployment, wait for readiness and exit; a supervisor keeps it running", Args: cobra.ExactArgs(1)}
	applyCmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "bound on the readiness wait")
	applyCmd.RunE = func(cmd *cobra.Command, args []string) error {
		res, err := deploy.Apply(cmd.Context(), opts(args[0]))
		if err != nil {
			return a.deployFailure(err)
		}
		werr := a.deployOut(res, func() {
			fmt.Fprintf(a.stdio.Out, "%s: supervisor pid %d on %s (not restarted on reboot)\n", res.Outcome, res.Supervisor.Pid, res.Connection.Socket)
			for _, c := range res.Changes {
				fmt.Fprintf(a.stdio.Out, "  %-8s %s  (%s)\n", c.Action, c.Resource, c.Reason)
			}
			for _, r := range res.Recovery {
				fmt.Fprintf(a.stdio.Out, "  to do: %s\n", r)
			}
		})
		if werr == nil && res.Outcome != supervisorproto.OutcomeSucceeded {
			return silentExit(ExitFailure)
		}
		return werr
	}

	statusCmd := &cobra.Command{Use: "status FILE", Short: "The supervisor and every resource: runtime ids, states, health, restarts, attachments, usage", Args: cobra.ExactArgs(1)}
	statusCmd.RunE = func(cmd *cobra.Command, args []string) error {
		res, err := deploy.Status(cmd.Context(), opts(args[0]))
		if err != nil {
			return a.deployFailure(err)
		}
		return a.deployOut(res, func() { a.printDeployStatus(res) })
	}

	exportCmd := &cobra.Command{Use: "export FILE", Short: "Print the applied document (YAML, references only); refuses while anything drifted", Args: cobra.ExactArgs(1)}
	exportCmd.RunE = func(cmd *cobra.Command, args []string) error {
		b, err := deploy.Export(cmd.Context(), opts(args[0]))
		if err != nil {
			return a.deployFailure(err)
		}
		_, err = a.stdio.Out.Write(b)
		return err
	}

	destroyCmd := &cobra.Command{Use: "destroy FILE", Short: "Remove what the deployment owns; resumable; reports what it retained", Args: cobra.ExactArgs(1)}
	destroyCmd.RunE = func(cmd *cobra.Command, args []string) error {
		res, err := deploy.Destroy(cmd.Context(), opts(args[0]))
		if err != nil {
			return a.deployFailure(err)
		}
		return a.deployOut(res, func() {
			fmt.Fprintf(a.stdio.Out, "%s\n", res.Outcome)
			for _, r := range res.Removed {
				fmt.Fprintf(a.stdio.Out, "  removed  %s\n", r)
			}
			for _, r := range res.Retained {
				fmt.Fprintf(a.stdio.Out, "  retained %s\n", r)
			}
		})
	}
	consoleCmd := &cobra.Command{Use: "console FILE [--no-token]", Short: "Print the address of the supervisor's console, with its sign-in token in the fragment (opens nothing)", Args: cobra.ExactArgs(1),
		Long: "The console is served by the supervisor on loopback. The printed address signs a browser in (the fragment never reaches a server); scripts send the token file's content as Authorization: Bearer. The token changes at every start of the supervisor."}
	var noToken bool
	consoleCmd.Flags().BoolVar(&noToken, "no-token", false, "print the address and the token file's path only")
	consoleCmd.RunE = func(cmd *cobra.Command, args []string) error {
		res, err := deploy.Console(cmd.Context(), opts(args[0]), noToken)
		if err != nil {
			return a.deployFailure(err)
		}
		return a.deployOut(res, func() {
			if res.SignInURL != "" {
				fmt.Fprintln(a.stdio.Out, res.SignInURL)
				return
			}
			fmt.Fprintf(a.stdio.Out, "%s (token in %s)\n", res.URL, res.TokenFile)
		})
	}

	cmd.AddCommand(initCmd, planCmd, applyCmd, statusCmd, exportCmd, destroyCmd, consoleCmd, a.deployAccessCommand(opts))
}

// deployAccessCommand is fabric deploy access: keys of an access gateway,
// through the supervisor.
func (a *app) deployAccessCommand(opts func(string) deploy.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "access",
		Short: "Grant, list, revoke and rotate access gateway keys; settle a turn whose outcome is unknown",
		Long: "Keys are per (client, agent), printed once by grant and rotate (-o json: {key_id, token, expires_at, url}) and stored only as a verifier. " +
			"Every subcommand takes the document and --integration NAME (the access definition).",
	}
	var r deploy.AccessRequest
	var ttl time.Duration
	run := func(op string) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			r.Op, r.TTL = op, ttl
			out, err := deploy.Access(cmd.Context(), opts(args[0]), r)
			if err != nil {
				return a.deployFailure(err)
			}
			var v any
			_ = json.Unmarshal(out, &v)
			return a.writeJSON(v)
		}
	}
	sub := func(use, short, op string, flags ...string) *cobra.Command {
		c := &cobra.Command{Use: use, Short: short, Args: cobra.ExactArgs(1), RunE: run(op)}
		c.Flags().StringVar(&r.Integration, "integration", "", "the access definition's name (or binding id)")
		_ = c.MarkFlagRequired("integration")
		for _, f := range flags {
			switch f {
			case "agent":
				c.Flags().StringVar(&r.Agent, "agent", "", "the agent the key reaches")
				_ = c.MarkFlagRequired("agent")
			case "client":
				c.Flags().StringVar(&r.Client, "client", "", "the client the key is for (one of the definition's clients)")
				_ = c.MarkFlagRequired("client")
			case "key":
				c.Flags().StringVar(&r.KeyID, "key-id", "", "the key's id (from grant or list)")
				_ = c.MarkFlagRequired("key-id")
			case "ttl":
				c.Flags().DurationVar(&ttl, "ttl", 0, "the key's life (default 720h)")
			case "outcome":
				c.Flags().StringVar(&r.ResponseID, "response-id", "", "the response whose outcome is unknown")
				c.Flags().StringVar(&r.Outcome, "outcome", "", "what was observed: completed, failed or cancelled")
				c.Flags().StringVar(&r.Evidence, "evidence", "", "what the operator observed (kept with the response)")
				_ = c.MarkFlagRequired("response-id")
				_ = c.MarkFlagRequired("outcome")
			}
		}
		return c
	}
	cmd.AddCommand(
		sub("grant FILE --integration NAME --agent A --client C [--ttl D]", "Issue a key for one client and one agent (the token is printed once)", supervisorproto.AccessGrant, "agent", "client", "ttl"),
		sub("list FILE --integration NAME", "List keys (never their tokens)", supervisorproto.AccessList),
		sub("revoke FILE --integration NAME --key-id K", "Revoke a key: its live streams end within a second", supervisorproto.AccessRevoke, "key"),
		sub("rotate FILE --integration NAME --key-id K [--ttl D]", "Issue a successor key; the old one keeps working for a grace period", supervisorproto.AccessRotate, "key", "ttl"),
		sub("reconcile FILE --integration NAME --response-id ID --outcome O [--evidence TEXT]", "Settle a turn whose outcome is unknown, with what was observed", supervisorproto.AccessReconcile, "outcome"),
	)
	return cmd
}

func (a *app) deployOut(v any, text func()) error {
	if a.output == "text" {
		text()
		return nil
	}
	return a.writeJSON(v)
}

// deployFailure prints a deploy error (JSON: {status: failed, error}).
func (a *app) deployFailure(err error) error {
	var de *deploy.Error
	if !errors.As(err, &de) {
		de = &deploy.Error{Code: "error", Message: err.Error()}
	}
	if a.output == "text" {
		fmt.Fprintln(a.stdio.Err, "error:", de.Error())
		for _, d := range de.Details {
			fmt.Fprintln(a.stdio.Err, "  ", d.Error())
		}
	} else {
		_ = a.writeJSON(map[string]any{"status": "failed", "error": de})
	}
	if de.Code == deploy.CodeDocumentInvalid {
		return silentExit(ExitUsage)
	}
	return silentExit(ExitFailure)
}

func (a *app) printDeployStatus(res *deploy.StatusResult) {
	fmt.Fprintf(a.stdio.Out, "deployment %s (uid %s)\n", res.Deployment, res.UID)
	fmt.Fprintf(a.stdio.Out, "supervisor: %s %s\n", res.Supervisor.State, res.Supervisor.Detail)
	if st := res.Status; st != nil {
		if st.Supervisor.Console != "" {
			fmt.Fprintf(a.stdio.Out, "console: %s (fabric deploy console signs a browser in)\n", st.Supervisor.Console)
		}
		for _, ag := range st.Agents {
			line := fmt.Sprintf("  agent %-16s %-10s runtime %s restarts %d", ag.Name, ag.State, ag.RuntimeID, ag.Restarts)
			if ag.Reason != "" {
				line += " (" + ag.Reason + ": " + ag.Action + ")"
			}
			fmt.Fprintln(a.stdio.Out, line)
		}
		for _, s := range st.Services {
			fmt.Fprintf(a.stdio.Out, "  service %-24s %-10s pid %d %s\n", s.ID, s.State, s.Pid, s.URL)
		}
		for _, l := range st.Lost {
			fmt.Fprintf(a.stdio.Out, "  lost: %s\n", l)
		}
	}
	for _, d := range res.Drift {
		fmt.Fprintf(a.stdio.Out, "  drift: %s %s (%s)\n", d.Action, d.Resource, d.Reason)
	}
}
