package supportcatalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fabric-runtime/fabric/contract"
)

// legal is the transition table of the support-state lifecycle: from a
// state, the states an entry may move to in the next version. Revoked is
// terminal; a new entry always starts as a candidate.
func legal(from, to string) bool {
	switch from {
	case contract.StateCandidate:
		return slices.Contains([]string{contract.StateCompatible, contract.StateSupported, contract.StateSuperseded, contract.StateRevoked}, to)
	case contract.StateCompatible:
		return slices.Contains([]string{contract.StateSupported, contract.StateSuperseded, contract.StateRevoked}, to)
	case contract.StateSupported:
		return slices.Contains([]string{contract.StateCompatible, contract.StateSuperseded, contract.StateRevoked}, to)
	case contract.StateSuperseded:
		return to == contract.StateRevoked
	}
	return false
}

// fixedPart is an entry without what may change after it is listed.
func fixedPart(e contract.CatalogEntry) []byte {
	e.Receipts, e.State, e.Since, e.RequalifyBy, e.Reason = nil, "", "", "", ""
	e.SupersededBy, e.Sunset, e.Revocation = "", "", nil
	b, _ := json.Marshal(e)
	return b
}

func entryJSON(e contract.CatalogEntry) []byte {
	b, _ := json.Marshal(e)
	return b
}

// CheckTransition checks next against prev (nil for serial 1: an empty
// catalog) by the transition table: no entry disappears, an entry's
// identity and digests never change, new entries are candidates, every
// state change is legal and meets its preconditions, and a default that
// is new or changed names a supported entry.
func CheckTransition(prev, next *Version) error {
	var old []contract.CatalogEntry
	var oldDefaults map[string]string
	if prev != nil {
		old, oldDefaults = prev.Doc.Entries, prev.Doc.Defaults
	}
	for _, o := range old {
		if next.Entry(o.Entry) == nil {
			return untrusted(next.Path, "entry %s of version %d is gone: entries are never removed (revoke or supersede it)", o.Entry, prev.Doc.Serial)
		}
	}
	for i := range next.Doc.Entries {
		n := &next.Doc.Entries[i]
		var o *contract.CatalogEntry
		if prev != nil {
			o = prev.Entry(n.Entry)
		}
		if err := checkEntryTransition(o, n, next); err != nil {
			return untrusted(next.Path, "entry %s: %v", n.Entry, err)
		}
	}
	// A default names a supported entry. One whose entry was since
	// revoked or superseded may stay (selection then refuses it and
	// lists the alternatives); any other state change moves the default.
	for _, id := range slices.Sorted(mapKeys(next.Doc.Defaults)) {
		name := next.Doc.Defaults[id]
		st := next.Entry(name).State
		kept := oldDefaults[id] == name && (st == contract.StateRevoked || st == contract.StateSuperseded)
		if st != contract.StateSupported && !kept {
			return untrusted(next.Path, "defaults.%s: %s is %s; only a supported entry can be a default", id, name, st)
		}
	}
	return nil
}

func checkEntryTransition(o, n *contract.CatalogEntry, next *Version) error {
	if o == nil {
		if n.State != contract.StateCandidate {
			return fmt.Errorf("a new entry starts as candidate, not %s", n.State)
		}
		return preconditions(n, next)
	}
	if !bytes.Equal(fixedPart(*o), fixedPart(*n)) {
		return fmt.Errorf("package, digests, runtime, source, artifacts and requires are fixed once listed; list a new entry instead")
	}
	if o.State == contract.StateRevoked {
		if !bytes.Equal(entryJSON(*o), entryJSON(*n)) {
			return fmt.Errorf("revoked is terminal: the entry cannot change (re-admission needs a new entry)")
		}
		return nil
	}
	if o.State == n.State {
		if o.SupersededBy != n.SupersededBy || o.Sunset != n.Sunset {
			return fmt.Errorf("superseded_by and sunset cannot change")
		}
		if bytes.Equal(entryJSON(*o), entryJSON(*n)) {
			return nil
		}
		return preconditions(n, next)
	}
	if !legal(o.State, n.State) {
		return fmt.Errorf("%s -> %s is not a legal transition", o.State, n.State)
	}
	if o.State == contract.StateSupported && n.State == contract.StateCompatible && n.Reason == "" {
		return fmt.Errorf("supported -> compatible: reason is required")
	}
	return preconditions(n, next)
}

// preconditions are what an entry in its (new or changed) state must
// show in next.
func preconditions(n *contract.CatalogEntry, next *Version) error {
	switch n.State {
	case contract.StateCandidate, contract.StateCompatible, contract.StateSupported:
		for _, plat := range slices.Sorted(mapKeys(n.Artifacts)) {
			r, ok := n.Receipts[plat]
			if !ok {
				return fmt.Errorf("%s: no qualification receipt for platform %s", n.State, plat)
			}
			if n.State == contract.StateSupported && !r.ObservedAll {
				return fmt.Errorf("supported: receipts.%s does not have every postcondition observed (observed_all)", plat)
			}
		}
		if n.State != contract.StateCandidate && n.RequalifyBy == "" {
			return fmt.Errorf("%s: requalify_by is required", n.State)
		}
	case contract.StateSuperseded:
		by := next.Entry(n.SupersededBy)
		if by.State != contract.StateSupported && by.State != contract.StateCompatible {
			return fmt.Errorf("superseded_by: %s is %s; the successor must be supported or compatible", by.Entry, by.State)
		}
	}
	return nil
}

// RevocationsOnly reports whether next differs from prev only by entries
// moving to revoked (with their revocation and since): what a revoker key
// alone may sign. The defaults and contracts stay, and expires does not
// move later.
func RevocationsOnly(prev, next *Version) bool {
	if prev == nil || next.Doc.Expires.After(prev.Doc.Expires) || len(prev.Doc.Entries) != len(next.Doc.Entries) {
		return false
	}
	a, _ := json.Marshal([]any{prev.Doc.Contracts, prev.Doc.Defaults})
	b, _ := json.Marshal([]any{next.Doc.Contracts, next.Doc.Defaults})
	if !bytes.Equal(a, b) {
		return false
	}
	for i, o := range prev.Doc.Entries {
		n := next.Doc.Entries[i]
		if bytes.Equal(entryJSON(o), entryJSON(n)) {
			continue
		}
		if o.State == contract.StateRevoked || n.State != contract.StateRevoked {
			return false
		}
		n.State, n.Since, n.Revocation = o.State, o.Since, o.Revocation
		if !bytes.Equal(entryJSON(o), entryJSON(n)) {
			return false
		}
	}
	return true
}
