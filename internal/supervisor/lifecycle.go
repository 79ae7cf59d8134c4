package supervisor

import (
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// lifecycle is what every supervised resource (an agent, a service)
// keeps: its state with the reason and recovery action, restarts, how it
// last exited, its recent events, and the stop handshake with its
// watcher. Its mutex also guards the fields of the resource embedding it.
type lifecycle struct {
	mu       sync.Mutex
	state    string
	reason   string
	action   string
	restarts int
	lastExit string
	events   []supervisorproto.Event
	stopCh   chan struct{}
	doneCh   chan struct{}
}

func (l *lifecycle) event(kind, msg, runtimeID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, supervisorproto.Event{AtMillis: time.Now().UnixMilli(), Kind: kind, Message: msg, RuntimeID: runtimeID})
	if len(l.events) > maxEvents {
		l.events = l.events[len(l.events)-maxEvents:]
	}
}

func (l *lifecycle) set(state, reason, action string) {
	l.mu.Lock()
	l.state, l.reason, l.action = state, reason, action
	l.mu.Unlock()
}

// stateNow is the state with its reason, for change reasons.
func (l *lifecycle) stateNow() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reason != "" {
		return l.state + ": " + l.reason
	}
	return l.state
}

// watching makes the stop handshake of a new watcher.
func (l *lifecycle) watching() (stop <-chan struct{}, done chan struct{}) {
	s, d := make(chan struct{}), make(chan struct{})
	l.mu.Lock()
	l.stopCh, l.doneCh = s, d
	l.mu.Unlock()
	return s, d
}

// halt ends the watcher (no restart from now on) and waits for it.
func (l *lifecycle) halt() {
	l.mu.Lock()
	stop, done := l.stopCh, l.doneCh
	l.stopCh, l.doneCh = nil, nil
	l.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// carry keeps an earlier incarnation's history (restarts, events).
func (l *lifecycle) carry(prev *lifecycle) {
	prev.mu.Lock()
	restarts, events := prev.restarts, append([]supervisorproto.Event{}, prev.events...)
	prev.mu.Unlock()
	l.mu.Lock()
	l.restarts, l.events = restarts, events
	l.mu.Unlock()
}
