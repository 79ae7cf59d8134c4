package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/deploy"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
	sc "github.com/fabric-runtime/fabric/internal/supportcatalog"
)

// Audit verdicts of one running agent.
const (
	auditCompliant = "compliant" // its entry is selectable, or revoked with running: continue
	auditWarn      = "warn"      // superseded before its sunset, or revoked with running: continue
	auditDrain     = "drain"     // revoked (or superseded past its sunset): no new start or restart
	auditStop      = "stop"      // revoked with running: stop
	auditUnlisted  = "unlisted"  // the catalog in force no longer lists its entry
)

// auditFinding is what the audit says of one agent that runs a package.
type auditFinding struct {
	Deployment string                     `json:"deployment"`
	Agent      string                     `json:"agent"`
	RuntimeID  string                     `json:"runtime_id,omitempty"`
	Package    *contract.PackageSelection `json:"package"`
	State      string                     `json:"state,omitempty"`
	Verdict    string                     `json:"verdict"`
	Reason     string                     `json:"reason"`
	// AgentState is the agent's deployment state (running, draining,
	// drained, stopped, ...), after --apply when it acted.
	AgentState string `json:"agent_state,omitempty"`
	// Applied is what --apply did (absent without --apply, and for a
	// verdict that asks for nothing).
	Applied *auditApplied `json:"applied,omitempty"`
}

// judge decides what the catalog version v says of a runtime planned
// under sel, at now: a pure function of its inputs.
func judge(v *sc.Version, sel *contract.PackageSelection, now time.Time) (state, verdict, reason string) {
	e := v.Entry(sel.Entry)
	if e == nil {
		return "", auditUnlisted, fmt.Sprintf("catalog serial %d no longer lists %s", v.Doc.Serial, sel.Entry)
	}
	switch e.State {
	case contract.StateRevoked:
		r := e.Revocation
		if r == nil {
			return e.State, auditStop, "revoked without a policy: stopped to be safe"
		}
		switch r.Running {
		case "continue":
			return e.State, auditWarn, fmt.Sprintf("revoked (%s); its policy lets running deployments continue", r.Reason)
		case "drain":
			return e.State, auditDrain, fmt.Sprintf("revoked (%s); running: drain", r.Reason)
		}
		return e.State, auditStop, fmt.Sprintf("revoked (%s); running: stop", r.Reason)
	case contract.StateSuperseded:
		if t, err := time.Parse("2006-01-02", e.Sunset); err == nil && !now.Before(t.AddDate(0, 0, 1)) {
			return e.State, auditDrain, fmt.Sprintf("superseded by %s and past its sunset %s: treated as revoked (drain)", e.SupersededBy, e.Sunset)
		}
		return e.State, auditWarn, fmt.Sprintf("superseded by %s, sunset %s", e.SupersededBy, e.Sunset)
	}
	if sel.PackageDigest != e.PackageDigest.SHA256 {
		return e.State, auditDrain, fmt.Sprintf("it runs package digest %s, the entry pins %s", sel.PackageDigest, e.PackageDigest.SHA256)
	}
	return e.State, auditCompliant, fmt.Sprintf("%s is %s", e.Entry, e.State)
}

// auditApplied is what audit --apply did for one agent.
type auditApplied struct {
	// Action is drain, stop, or none (unlisted: no policy to apply).
	Action string `json:"action"`
	// Outcome is the agent's state after it (drained, stopped, draining).
	Outcome string `json:"outcome,omitempty"`
	// Already: an earlier audit --apply had carried it out.
	Already bool `json:"already"`
	// Error says why the action was not carried out.
	Error string `json:"error,omitempty"`
}

// retired reports whether an agent's state already carries out a drain
// or stop: a revocation retired it and no runtime is left.
func retired(ag supervisorproto.AgentStatus) bool {
	return ag.Revocation != nil && (ag.State == supervisorproto.StateDrained || ag.State == supervisorproto.StateStopped)
}

// applyVerdict carries out fd's drain or stop on the running deployment
// doc (ag is its status); nil when the verdict asks for nothing.
func (a *app) applyVerdict(ctx context.Context, doc string, fd *auditFinding, ag supervisorproto.AgentStatus, serial int64, timeout time.Duration) *auditApplied {
	switch fd.Verdict {
	case auditUnlisted:
		return &auditApplied{Action: "none", Error: "the catalog in force no longer lists its entry, so no revocation policy says whether to drain or stop it: an operator decides (fabric deploy destroy, or deploy it under a listed package)"}
	case auditDrain, auditStop:
	default:
		return nil
	}
	if retired(ag) {
		return &auditApplied{Action: fd.Verdict, Outcome: ag.State, Already: true}
	}
	p := supervisorproto.RevokePayload{Agent: ag.Name, Policy: fd.Verdict, CatalogSerial: serial, Entry: fd.Package.Entry, Reason: fd.Reason}
	res, err := deploy.Revoke(ctx, deploy.Options{File: doc, Client: a.client()}, p, timeout)
	if err != nil {
		return &auditApplied{Action: fd.Verdict, Error: err.Error()}
	}
	out := &auditApplied{Action: fd.Verdict, Outcome: res.Outcome, Already: res.Already}
	if res.Outcome != supervisorproto.StateDrained && res.Outcome != supervisorproto.StateStopped {
		out.Error = fmt.Sprintf("still %s after %s: turns are in flight; the drain goes on (run audit --apply again to confirm it)", res.Outcome, timeout)
	}
	return out
}

func (a *app) packagesAuditCommand() *cobra.Command {
	var f catalogFlags
	var apply bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "audit DEPLOYMENT.yaml... [--dir DIR] [--trust FILE] [--apply [--timeout D]]",
		Short: "Compare the agents deployments run with the support catalog in force; with --apply, drain or stop them as the revocations say",
		Long: "For every agent of the deployments that runs under a package (harness.package), look up its catalog entry in the " +
			"catalog in force and report a verdict: compliant, warn (superseded before its sunset, or revoked with running: continue), " +
			"drain (revoked with running: drain, superseded past its sunset, or another package digest), stop (revoked with running: stop) " +
			"or unlisted. Without --apply it only reports, and exits 1 when any agent is still to be drained or stopped, or is unlisted. " +
			"With --apply it asks each deployment's supervisor to drain (no new turn, the turns in flight finish, then the runtime stops) " +
			"or stop (now) the agent, never to restart it, and exits 0 only when every such action was carried out; an unlisted agent " +
			"has no policy to apply and fails the audit.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.loadCatalog(cmd.Context(), &f, func(o *sc.Options) { o.Receipts = a.receiptVerifier() })
			if err != nil {
				return a.failure(err)
			}
			latest := c.Latest()
			now := time.Now()
			var findings []auditFinding
			bad := false
			for _, doc := range args {
				res, err := deploy.Status(cmd.Context(), deploy.Options{File: doc, Client: a.client()})
				if err != nil {
					return a.failure(err)
				}
				if res.Status == nil {
					continue
				}
				for _, ag := range res.Status.Agents {
					if ag.Package == nil {
						continue
					}
					fd := auditFinding{Deployment: res.Deployment, Agent: ag.Name, RuntimeID: ag.RuntimeID, Package: ag.Package, AgentState: ag.State}
					fd.State, fd.Verdict, fd.Reason = judge(latest, ag.Package, now)
					due := fd.Verdict != auditCompliant && fd.Verdict != auditWarn
					if apply {
						fd.Applied = a.applyVerdict(cmd.Context(), doc, &fd, ag, int64(latest.Doc.Serial), timeout)
						if fd.Applied != nil && fd.Applied.Outcome != "" {
							fd.AgentState = fd.Applied.Outcome
						}
						bad = bad || (fd.Applied != nil && fd.Applied.Error != "")
					} else {
						bad = bad || (due && !(fd.Verdict != auditUnlisted && retired(ag)))
					}
					findings = append(findings, fd)
				}
			}
			if a.output == "text" {
				for _, fd := range findings {
					line := fmt.Sprintf("%s/%s\t%s\t%s\t%s", fd.Deployment, fd.Agent, fd.Package.Entry, fd.Verdict, fd.Reason)
					if ap := fd.Applied; ap != nil {
						switch {
						case ap.Error != "":
							line += "\tnot done: " + ap.Error
						case ap.Already:
							line += "\talready " + ap.Outcome
						default:
							line += "\t" + ap.Outcome
						}
					} else if fd.AgentState != "" {
						line += "\t" + fd.AgentState
					}
					fmt.Fprintln(a.stdio.Out, line)
				}
			} else if err := a.writeJSON(map[string]any{"catalog_serial": latest.Doc.Serial, "applied": apply, "agents": findings}); err != nil {
				return err
			}
			if bad {
				return silentExit(ExitFailure)
			}
			return nil
		},
	}
	f.register(cmd, false)
	cmd.Flags().BoolVar(&apply, "apply", false, "drain or stop the agents as the revocations say (through each deployment's supervisor)")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "with --apply: how long to wait for a drain's turns in flight")
	return cmd
}
