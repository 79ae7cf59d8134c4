// Package permission holds the permission requests one adapter host has
// pending: adapterkit.AskPermission registers a request and waits, and
// the host's permission/decide method delivers the caller's decision.
// Each host (adapterkit.Serve) has its own Set, reached through the
// Emitter it hands to a turn; nothing is process-global.
package permission

import "sync"

// Set is the pending requests of one host, by request id. The zero value
// is ready to use.
type Set struct {
	mu sync.Mutex
	m  map[string]chan string
}

// Holder is implemented by the Emitters that carry their host's Set.
type Holder interface {
	PermissionSet() *Set
}

// Add registers a pending request; its decision arrives on the channel.
func (s *Set) Add(id string) <-chan string {
	ch := make(chan string, 1)
	s.mu.Lock()
	if s.m == nil {
		s.m = map[string]chan string{}
	}
	s.m[id] = ch
	s.mu.Unlock()
	return ch
}

// Remove forgets a request (decided, timed out or cancelled).
func (s *Set) Remove(id string) {
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
}

// Decide delivers decision to the pending request id and reports whether
// one took it.
func (s *Set) Decide(id, decision string) bool {
	s.mu.Lock()
	ch, ok := s.m[id]
	if ok {
		delete(s.m, id)
	}
	s.mu.Unlock()
	if ok {
		ch <- decision
	}
	return ok
}
