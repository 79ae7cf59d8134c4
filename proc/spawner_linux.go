//go:build linux

package proc

import (
	"context"
	"os/exec"
	"runtime"
	"sync"
)

// Pdeathsig is delivered to a child when the OS thread that forked it exits,
// not when the supervising process exits. A goroutine's thread may exit under
// it (the runtime ends the thread of a goroutine that exits while locked to
// it), so every child is forked from one dedicated thread: the spawner's.
//
// The spawner is a goroutine locked to its OS thread for its whole life. It
// runs while at least one Start is in progress or one child it forked has not
// been reaped: each Start takes a reference before asking it to fork, and
// the reference is released only after the child has been reaped (or the
// start failed). While a child it forked is unreaped the spawner does not
// unlock or return, so its thread lives as long as the supervisor does, and
// Pdeathsig fires only when the supervisor dies. When the last reference goes
// the spawner unlocks and returns; no live child is bound to its thread any
// more, and the next Start starts a new spawner.
//
// Ending the spawner when it is unused (rather than keeping it for the life
// of the program) keeps the package free of background goroutines while it
// supervises nothing: callers check for goroutine leaks after their tests.
//
// The spawner is the package's only mutable package-level state. It models a
// per-process OS resource (the one thread children are forked from), so it
// cannot be per-Process; it is guarded by its own mutex.
var forker spawner

type spawner struct {
	mu   sync.Mutex
	reqs chan spawnRequest // nil while no spawner goroutine runs
	refs int               // Starts in progress plus started children not yet reaped
}

type spawnRequest struct {
	ctx    context.Context
	cmd    *exec.Cmd
	result chan<- error
}

// start starts cmd from the spawner's thread. Starts are served one at a
// time; ctx ends the wait for the spawner, and is checked once more just
// before forking. Once the spawner has taken the request, start waits for the
// outcome even when ctx is done meanwhile: fork and exec are not
// interruptible, and a forked child must not be left unowned. On success the
// caller holds a reference on the spawner and must call release once the
// child has been reaped; on error it holds none.
func (s *spawner) start(ctx context.Context, cmd *exec.Cmd) error {
	result := make(chan error, 1)
	reqs := s.acquire()
	select {
	case reqs <- spawnRequest{ctx: ctx, cmd: cmd, result: result}:
	case <-ctx.Done():
		s.release()
		return ctx.Err()
	}
	err := <-result
	if err != nil {
		s.release()
	}
	return err
}

// acquire takes a reference, starting the spawner goroutine if none runs, and
// returns its request channel. The channel stays open while the reference is
// held.
func (s *spawner) acquire() chan<- spawnRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reqs == nil {
		s.reqs = make(chan spawnRequest)
		go spawnLoop(s.reqs)
	}
	s.refs++
	return s.reqs
}

// release drops a reference; the last one ends the spawner goroutine.
func (s *spawner) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refs--
	switch {
	case s.refs < 0:
		panic("proc: spawner released more often than acquired")
	case s.refs == 0:
		close(s.reqs)
		s.reqs = nil
	}
}

// spawnLoop forks the children requested on reqs from one locked OS thread
// until reqs is closed, which happens only when no child forked here is left
// unreaped. While it waits for a request its thread sleeps; it costs one
// thread however many children it forked.
func spawnLoop(reqs <-chan spawnRequest) {
	runtime.LockOSThread()
	for r := range reqs {
		if err := r.ctx.Err(); err != nil {
			r.result <- err
			continue
		}
		r.result <- r.cmd.Start()
	}
	// Every child forked from this thread has been reaped: the thread may go
	// back to the scheduler, and may later exit, without killing anything.
	runtime.UnlockOSThread()
}
