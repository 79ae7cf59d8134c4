package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/deploy"
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

func (a *app) packagesAuditCommand() *cobra.Command {
	var f catalogFlags
	cmd := &cobra.Command{
		Use:   "audit DEPLOYMENT.yaml... [--dir DIR] [--trust FILE]",
		Short: "Compare the agents deployments run with the support catalog in force, and say what each revocation means for them",
		Long: "For every agent of the deployments that runs under a package (harness.package), look up its catalog entry in the " +
			"catalog in force and report a verdict: compliant, warn (superseded before its sunset, or revoked with running: continue), " +
			"drain (revoked with running: drain, superseded past its sunset, or another package digest), stop (revoked with running: stop) " +
			"or unlisted. Exit status 1 when any agent is to be drained, stopped or is unlisted. The audit reports; it does not yet " +
			"drain or stop anything itself.",
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
				res, err := deploy.Status(cmd.Context(), deploy.Options{File: doc, Client: a.client})
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
					fd := auditFinding{Deployment: res.Deployment, Agent: ag.Name, RuntimeID: ag.RuntimeID, Package: ag.Package}
					fd.State, fd.Verdict, fd.Reason = judge(latest, ag.Package, now)
					bad = bad || (fd.Verdict != auditCompliant && fd.Verdict != auditWarn)
					findings = append(findings, fd)
				}
			}
			if a.output == "text" {
				for _, fd := range findings {
					fmt.Fprintf(a.stdio.Out, "%s/%s\t%s\t%s\t%s\n", fd.Deployment, fd.Agent, fd.Package.Entry, fd.Verdict, fd.Reason)
				}
			} else if err := a.writeJSON(map[string]any{"catalog_serial": latest.Doc.Serial, "agents": findings}); err != nil {
				return err
			}
			if bad {
				return silentExit(ExitFailure)
			}
			return nil
		},
	}
	f.register(cmd, false)
	return cmd
}
