package adaptertest

import (
	"context"
	"sync"
	"testing"

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

// HealthWant is what a session's health check at Level must answer.
type HealthWant struct {
	Level, Outcome, Reason, Activity string
}

// CheckHealth runs s's health check at each wanted level and fails t on
// an outcome, reason code or activity other than wanted.
func CheckHealth(t testing.TB, s adapterkit.Session, want []HealthWant) {
	t.Helper()
	for _, w := range want {
		h, err := s.Health(context.Background(), w.Level)
		if err != nil {
			t.Fatalf("Health(%q): %v", w.Level, err)
		}
		if h.Outcome != w.Outcome || h.ReasonCode != w.Reason || h.Activity != w.Activity {
			t.Errorf("Health(%q) = %q %q %q, want %q %q %q", w.Level, h.Outcome, h.ReasonCode, h.Activity, w.Outcome, w.Reason, w.Activity)
		}
	}
}
