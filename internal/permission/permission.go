// Package permission holds the permission requests one adapter host has
// pending: adapterkit.AskPermission registers a request and waits, and
// the host's permission/decide method delivers the caller's decision.
// Each host (adapterkit.Serve) has its own Set, reached through the
// Emitter it hands to a turn; nothing is process-global.
package permission

import "github.com/fabric-runtime/fabric/internal/pending"

// Set is the pending requests of one host, by request id. The zero value
// is ready to use.
type Set struct {
	t pending.Table[string]
}

// Holder is implemented by the Emitters that carry their host's Set.
type Holder interface {
	PermissionSet() *Set
}

// Add registers a pending request; its decision arrives on the channel.
func (s *Set) Add(id string) <-chan string { return s.t.Add(id) }

// Remove forgets a request (decided, timed out or cancelled).
func (s *Set) Remove(id string) { s.t.Remove(id) }

// Decide delivers decision to the pending request id and reports whether
// one took it.
func (s *Set) Decide(id, decision string) bool { return s.t.Deliver(id, decision) }
