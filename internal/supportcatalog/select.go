package supportcatalog

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

// Request is what a plan asks the catalog for.
type Request struct {
	// Package is ID or ID@VERSION; a bare ID takes the catalog's signed
	// default for it.
	Package string
	// Digest is the hex sha256 package digest of the package found on disk.
	Digest string
	// Platform is the platform the package is to run on (linux-x86_64 ...).
	Platform string
	// AllowCandidate lets an exact pin select a candidate (or an entry
	// past requalify_by); AllowSuperseded an exact pin select a
	// superseded entry before its sunset.
	AllowCandidate, AllowSuperseded bool
	// Contracts are the contract versions this Fabric speaks
	// (fabric.package/v1alpha1, fabric.host/v2).
	Contracts []string
	Now       time.Time
}

// SupportedContracts are the contract versions this Fabric build speaks.
func SupportedContracts() []string {
	return []string{contract.PackageV1Alpha1, "fabric.host/v2"}
}

// Selection is the entry a request selected and what the plan records.
type Selection struct {
	Serial        int    `json:"catalog_serial"`
	Entry         string `json:"entry"`
	PackageDigest string `json:"package_digest"`
	State         string `json:"state"`
	// Warning is set for a compatible, candidate or superseded selection.
	Warning string `json:"warning,omitempty"`
}

// SelectionError is a request the catalog refuses, with the entries that
// are selectable for the same package id (never picked for the caller).
type SelectionError struct {
	Code         string
	Request      string
	Message      string
	Alternatives []string
}

func (e *SelectionError) Error() string {
	msg := fmt.Sprintf("package %s: %s [%s]", e.Request, e.Message, e.Code)
	if len(e.Alternatives) > 0 {
		msg += "; selectable: " + strings.Join(e.Alternatives, ", ")
	} else {
		msg += "; no entry of this package is selectable"
	}
	return msg
}

// Info converts the error to the ErrorInfo of a plan result.
func (e *SelectionError) Info() *contract.ErrorInfo { return e.config().Info() }

// Unwrap is the error as the contract.ConfigError (stage plan) callers
// report, so errors.As and fabric.ErrorInfo find it.
func (e *SelectionError) Unwrap() error { return e.config() }

func (e *SelectionError) config() *contract.ConfigError {
	alts := e.Alternatives
	if alts == nil {
		alts = []string{}
	}
	return &contract.ConfigError{Failure: contract.Failure{Stage: contract.StagePlan, Code: e.Code, Path: "harness.package", Message: e.Error(), Metadata: map[string]any{"package": e.Request, "alternatives": alts}}}
}

// Select decides which entry of c the request may run, or why none: it
// is a pure function of its inputs. It never falls back to another entry;
// the error lists those that are selectable instead.
func Select(c *Catalog, req Request) (Selection, error) {
	v := c.Latest()
	id, version, pinned := strings.Cut(req.Package, "@")
	fail := func(code, format string, args ...any) (Selection, error) {
		return Selection{}, &SelectionError{Code: code, Request: req.Package, Message: fmt.Sprintf(format, args...), Alternatives: c.alternatives(id, req)}
	}
	if id == "" || (pinned && (version == "" || strings.Contains(version, "@"))) {
		return fail(CodePackageNotInCatalog, "not an ID or ID@VERSION")
	}
	name := req.Package
	if !pinned {
		def, ok := v.Doc.Defaults[id]
		if !ok {
			if !slices.ContainsFunc(v.Doc.Entries, func(e contract.CatalogEntry) bool { return e.Package.ID == id }) {
				return fail(CodePackageNotInCatalog, "catalog serial %d lists no entry of it", v.Doc.Serial)
			}
			return fail(CodePackageNotSelectable, "catalog serial %d has no signed default for it; pin an entry", v.Doc.Serial)
		}
		name = def
	}
	e := v.Entry(name)
	if e == nil {
		return fail(CodePackageNotInCatalog, "catalog serial %d has no entry %s", v.Doc.Serial, name)
	}
	if reason := c.refusal(e, req, pinned); reason != nil {
		return fail(reason.code, "%s", reason.msg)
	}
	if req.Digest != e.PackageDigest.SHA256 {
		return fail(CodePackageDigest, "the package on disk has digest sha256:%s, entry %s pins sha256:%s", req.Digest, e.Entry, e.PackageDigest.SHA256)
	}
	sel := Selection{Serial: v.Doc.Serial, Entry: e.Entry, PackageDigest: e.PackageDigest.SHA256, State: e.State}
	switch {
	case e.State == contract.StateSuperseded:
		sel.Warning = fmt.Sprintf("%s is superseded by %s, sunset %s", e.Entry, e.SupersededBy, e.Sunset)
	case expired(e, req.Now):
		sel.Warning = fmt.Sprintf("%s is past requalify_by %s and counts as a candidate", e.Entry, e.RequalifyBy)
	case e.State == contract.StateCandidate:
		sel.Warning = fmt.Sprintf("%s is a candidate", e.Entry)
	case e.State == contract.StateCompatible:
		sel.Warning = fmt.Sprintf("%s is compatible, not supported", e.Entry)
	}
	return sel, nil
}

type refusal struct{ code, msg string }

func expired(e *contract.CatalogEntry, now time.Time) bool {
	if e.RequalifyBy == "" {
		return false
	}
	d, err := parseDate(e.RequalifyBy)
	return err == nil && !now.Before(d.AddDate(0, 0, 1))
}

func pastSunset(e *contract.CatalogEntry, now time.Time) bool {
	d, err := parseDate(e.Sunset)
	return err != nil || !now.Before(d)
}

// refusal is why e cannot be selected (digest aside), or nil.
func (c *Catalog) refusal(e *contract.CatalogEntry, req Request, pinned bool) *refusal {
	switch {
	case e.State == contract.StateRevoked:
		return &refusal{CodePackageRevoked, fmt.Sprintf("%s is revoked (%s); there is no override", e.Entry, e.Revocation.Reason)}
	case e.State == contract.StateSuperseded && pastSunset(e, req.Now):
		return &refusal{CodePackageSuperseded, fmt.Sprintf("%s is superseded by %s and past its sunset %s", e.Entry, e.SupersededBy, e.Sunset)}
	case e.State == contract.StateSuperseded && (!pinned || !req.AllowSuperseded):
		return &refusal{CodePackageSuperseded, fmt.Sprintf("%s is superseded by %s (sunset %s); pin it exactly with --allow-superseded", e.Entry, e.SupersededBy, e.Sunset)}
	case (e.State == contract.StateCandidate || expired(e, req.Now)) && (!pinned || !req.AllowCandidate):
		why := "a candidate"
		if e.State != contract.StateCandidate {
			why = "past requalify_by " + e.RequalifyBy + " (counts as a candidate)"
		}
		return &refusal{CodePackageNotSelectable, fmt.Sprintf("%s is %s; pin it exactly with --candidate", e.Entry, why)}
	}
	contracts := req.Contracts
	if contracts == nil {
		contracts = SupportedContracts()
	}
	if !slices.Contains(contracts, e.Package.Contract) {
		return &refusal{CodePackageIncompatible, fmt.Sprintf("%s uses contract %s; this Fabric speaks %s", e.Entry, e.Package.Contract, strings.Join(contracts, ", "))}
	}
	if e.Requires != nil && e.Requires.HostProtocol != "" && !slices.Contains(contracts, e.Requires.HostProtocol) {
		return &refusal{CodePackageIncompatible, fmt.Sprintf("%s needs host protocol %s; this Fabric speaks %s", e.Entry, e.Requires.HostProtocol, strings.Join(contracts, ", "))}
	}
	r, ok := c.receipt(e.Entry, req.Platform)
	if !ok {
		return &refusal{CodePackageUnqualified, fmt.Sprintf("%s has no qualification receipt for platform %s", e.Entry, req.Platform)}
	}
	if !r.Verified {
		return &refusal{CodePackageUnqualified, fmt.Sprintf("%s: the receipt for %s does not verify: %s", e.Entry, req.Platform, r.Problem)}
	}
	return nil
}

// alternatives are the entries of package id that an exact pin of them
// would select on this platform (any digest), as a caller could name
// them; the list is for the message, never picked.
func (c *Catalog) alternatives(id string, req Request) []string {
	var out []string
	for i := range c.Latest().Doc.Entries {
		e := &c.Latest().Doc.Entries[i]
		if e.Package.ID != id {
			continue
		}
		if c.refusal(e, req, true) == nil {
			out = append(out, e.Entry)
		}
	}
	return out
}
