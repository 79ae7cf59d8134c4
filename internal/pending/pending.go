// Package pending pairs requests that wait for a reply with the reply,
// by request id: a permission request waiting for the caller's decision,
// a command a session wrote to its harness waiting for the harness's
// response.
package pending

import "sync"

// Table is the requests waiting for a reply, by id. The zero value is
// ready to use.
type Table[T any] struct {
	mu sync.Mutex
	m  map[string]chan T
}

// Add registers a request waiting under id; its reply arrives on the
// channel (at most one, never closed).
func (t *Table[T]) Add(id string) <-chan T {
	ch := make(chan T, 1)
	t.mu.Lock()
	if t.m == nil {
		t.m = map[string]chan T{}
	}
	t.m[id] = ch
	t.mu.Unlock()
	return ch
}

// Remove forgets a request (answered, timed out or cancelled).
func (t *Table[T]) Remove(id string) {
	t.mu.Lock()
	delete(t.m, id)
	t.mu.Unlock()
}

// Deliver hands reply to the request waiting under id, which it forgets,
// and reports whether one was waiting: a reply for an unknown id, or a
// second one for the same id, is dropped.
func (t *Table[T]) Deliver(id string, reply T) bool {
	t.mu.Lock()
	ch, ok := t.m[id]
	if ok {
		delete(t.m, id)
	}
	t.mu.Unlock()
	if ok {
		ch <- reply // buffered 1, and only one Deliver finds id
	}
	return ok
}
