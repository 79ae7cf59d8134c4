package supportcatalog

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

// Version is one parsed, structurally valid catalog version.
type Version struct {
	Doc contract.SupportCatalog
	// Path is the file it was read from, for messages.
	Path string
	// Data is the file's exact bytes; SHA256 their hex sha256.
	Data   []byte
	SHA256 string
}

// Entry returns the entry named name, or nil.
func (v *Version) Entry(name string) *contract.CatalogEntry {
	for i := range v.Doc.Entries {
		if v.Doc.Entries[i].Entry == name {
			return &v.Doc.Entries[i]
		}
	}
	return nil
}

var (
	hex64     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })
	packageID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`) })
	versionRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`) })
)

// dateLayout is the layout of an entry's dates.
const dateLayout = "2006-01-02"

func parseDate(s string) (time.Time, error) { return time.Parse(dateLayout, s) }

// Revocation reasons.
func revocationReasons() []string {
	return []string{"security", "digest_mismatch", "receipt_invalid", "upstream_yanked", "key_compromise", "contract_broken"}
}

func states() []string {
	return []string{contract.StateCandidate, contract.StateCompatible, contract.StateSupported, contract.StateSuperseded, contract.StateRevoked}
}

// ParseVersion reads a catalog version strictly and checks its structure
// on its own (not its place in the chain, nor its signature). Errors are
// catalog_untrusted and name path and the field.
func ParseVersion(path string, data []byte) (*Version, error) {
	var doc contract.SupportCatalog
	if err := decodeStrict(data, &doc); err != nil {
		return nil, untrusted(path, "not a catalog version: %v", err)
	}
	v := &Version{Doc: doc, Path: path, Data: data, SHA256: sha256Hex(data)}
	if err := v.check(); err != nil {
		return nil, untrusted(path, "%v", err)
	}
	return v, nil
}

func (v *Version) check() error {
	d := &v.Doc
	switch {
	case d.Type != contract.CatalogV1Alpha1:
		return fmt.Errorf("_type %q, want %q", d.Type, contract.CatalogV1Alpha1)
	case d.Serial < 1:
		return fmt.Errorf("serial: must be at least 1")
	case d.Serial == 1 && d.Previous != nil:
		return fmt.Errorf("previous: serial 1 has no previous version")
	case d.Serial > 1 && (d.Previous == nil || !hex64().MatchString(d.Previous.SHA256)):
		return fmt.Errorf("previous.sha256: serial %d must name the sha256 of version %d", d.Serial, d.Serial-1)
	case d.Issued.IsZero():
		return fmt.Errorf("issued: missing")
	case !d.Expires.After(d.Issued):
		return fmt.Errorf("expires: must be after issued")
	}
	seen := map[string]bool{}
	for i := range d.Entries {
		e := &d.Entries[i]
		if err := checkEntry(e); err != nil {
			return fmt.Errorf("entries[%d] (%s): %w", i, e.Entry, err)
		}
		if seen[e.Entry] {
			return fmt.Errorf("entries[%d]: entry %s is listed twice", i, e.Entry)
		}
		seen[e.Entry] = true
	}
	for i := range d.Entries {
		e := &d.Entries[i]
		if e.State != contract.StateSuperseded {
			continue
		}
		by := v.Entry(e.SupersededBy)
		if by == nil {
			return fmt.Errorf("entries[%d] (%s): superseded_by: %s is not an entry", i, e.Entry, e.SupersededBy)
		}
		if by.Package.ID != e.Package.ID {
			return fmt.Errorf("entries[%d] (%s): superseded_by: %s is another package", i, e.Entry, e.SupersededBy)
		}
	}
	for _, id := range slices.Sorted(mapKeys(d.Defaults)) {
		e := v.Entry(d.Defaults[id])
		if e == nil {
			return fmt.Errorf("defaults.%s: %s is not an entry", id, d.Defaults[id])
		}
		if e.Package.ID != id {
			return fmt.Errorf("defaults.%s: %s is an entry of package %s", id, e.Entry, e.Package.ID)
		}
	}
	return nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func checkEntry(e *contract.CatalogEntry) error {
	p := e.Package
	switch {
	case !packageID().MatchString(p.ID):
		return fmt.Errorf("package.id: %q is not a package id", p.ID)
	case !versionRe().MatchString(p.Version):
		return fmt.Errorf("package.version: %q is not a version", p.Version)
	case p.Publisher == "":
		return fmt.Errorf("package.publisher: missing")
	case p.Contract == "":
		return fmt.Errorf("package.contract: missing")
	case e.Entry != p.ID+"@"+p.Version:
		return fmt.Errorf("entry: must be %s@%s", p.ID, p.Version)
	case !hex64().MatchString(e.PackageDigest.SHA256):
		return fmt.Errorf("package_digest.sha256: not 64 hex digits")
	case !hex64().MatchString(e.Descriptor.SHA256):
		return fmt.Errorf("descriptor.sha256: not 64 hex digits")
	case e.Runtime.Name == "" || e.Runtime.Version == "":
		return fmt.Errorf("runtime: name and version are required")
	case len(e.Artifacts) == 0:
		return fmt.Errorf("artifacts: no platform")
	case !slices.Contains(states(), e.State):
		return fmt.Errorf("state: %q, want one of %s", e.State, strings.Join(states(), ", "))
	}
	for _, plat := range slices.Sorted(mapKeys(e.Artifacts)) {
		// An empty list is a platform the package runs on with nothing
		// to install (an adapter built into Fabric).
		for j, a := range e.Artifacts[plat] {
			if a.Name == "" || len(a.Digest) == 0 {
				return fmt.Errorf("artifacts.%s[%d]: name and digest are required", plat, j)
			}
		}
	}
	for _, plat := range slices.Sorted(mapKeys(e.Receipts)) {
		if _, ok := e.Artifacts[plat]; !ok {
			return fmt.Errorf("receipts.%s: not a platform of artifacts", plat)
		}
		if !hex64().MatchString(e.Receipts[plat].SHA256) {
			return fmt.Errorf("receipts.%s.sha256: not 64 hex digits", plat)
		}
	}
	dates := []struct {
		name, v string
		need    bool
	}{{"since", e.Since, true}, {"requalify_by", e.RequalifyBy, false}, {"sunset", e.Sunset, e.State == contract.StateSuperseded}}
	for _, dt := range dates {
		if dt.v == "" {
			if dt.need {
				return fmt.Errorf("%s: missing", dt.name)
			}
			continue
		}
		if _, err := parseDate(dt.v); err != nil {
			return fmt.Errorf("%s: %q is not a date (YYYY-MM-DD)", dt.name, dt.v)
		}
	}
	if (e.State == contract.StateSuperseded) != (e.SupersededBy != "") {
		return fmt.Errorf("superseded_by: set exactly when the state is superseded")
	}
	if e.State != contract.StateSuperseded && e.Sunset != "" {
		return fmt.Errorf("sunset: only a superseded entry has one")
	}
	if (e.State == contract.StateRevoked) != (e.Revocation != nil) {
		return fmt.Errorf("revocation: set exactly when the state is revoked")
	}
	if r := e.Revocation; r != nil {
		switch {
		case !slices.Contains(revocationReasons(), r.Reason):
			return fmt.Errorf("revocation.reason: %q, want one of %s", r.Reason, strings.Join(revocationReasons(), ", "))
		case !slices.Contains([]string{contract.RunningContinue, contract.RunningDrain, contract.RunningStop}, r.Running):
			return fmt.Errorf("revocation.running: %q, want continue, drain or stop", r.Running)
		case len(r.Evidence) == 0:
			return fmt.Errorf("revocation.evidence: a revocation cites at least one evidence digest")
		}
		for j, ev := range r.Evidence {
			if !hex64().MatchString(ev.SHA256) {
				return fmt.Errorf("revocation.evidence[%d].sha256: not 64 hex digits", j)
			}
		}
	}
	return nil
}
