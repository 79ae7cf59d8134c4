package adaptertest

import (
	"sync"

	"github.com/fabric-runtime/fabric/adapterkit"
)

// Events is an adapterkit.Emitter that keeps the events it is given, for
// tests that drive a session in process. It is safe for concurrent use;
// the zero value is ready.
type Events struct {
	mu   sync.Mutex
	list []adapterkit.Event
}

// Emit keeps ev.
func (e *Events) Emit(ev adapterkit.Event) {
	e.mu.Lock()
	e.list = append(e.list, ev)
	e.mu.Unlock()
}

// List returns the events kept so far, in the order emitted.
func (e *Events) List() []adapterkit.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]adapterkit.Event(nil), e.list...)
}

// Kinds returns the kinds of the events kept so far, in order.
func (e *Events) Kinds() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.list))
	for _, ev := range e.list {
		out = append(out, ev.Kind)
	}
	return out
}
