package adapterkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/pending"
	"github.com/fabric-runtime/fabric/proc"
)

// The health ladder and stop sequence of a harness that runs as one child
// process the adapter talks to over its stdin and stdout (a stream-json or
// JSON-RPC harness, an ACP agent). The adapters differ only in the data
// they pass.

// HealthRung is one condition of a health ladder: a check at Level, or at
// any level above it (live < active < ready), fails with Reason and
// Message when Failed is true.
type HealthRung struct {
	Level   string // contract.LevelLive, LevelActive or LevelReady
	Failed  bool
	Reason  string // a contract.Reason* code
	Message string
}

// HarnessHealth is what a session knows about its harness when a health
// check comes in.
type HarnessHealth struct {
	Source string
	// Busy: a turn is running.
	Busy bool
	// Exited: the harness process is gone or its output has ended; the
	// activity reported is then stopped.
	Exited   bool
	Metadata map[string]any
	// Rungs are checked in order; the first one that applies to the level
	// and failed decides the outcome.
	Rungs []HealthRung
}

// levelRank orders the check levels; ok is false for an unknown level.
// (A switch, not a package-level map: a map literal is built at init.)
func levelRank(level string) (rank int, ok bool) {
	switch level {
	case contract.LevelLive:
		return 0, true
	case contract.LevelActive:
		return 1, true
	case contract.LevelReady:
		return 2, true
	}
	return 0, false
}

// Check answers a health check at level: unsupported for a level other
// than live, active or ready, failed at the first failed rung at or below
// level, else passed.
func (hh HarnessHealth) Check(level string) Health {
	h := Health{Source: hh.Source, Activity: contract.ActivityIdle, ObservedAtMillis: time.Now().UnixMilli(), Metadata: hh.Metadata}
	switch {
	case hh.Exited:
		h.Activity = contract.ActivityStopped
	case hh.Busy:
		h.Activity = contract.ActivityBusy
	}
	rank, ok := levelRank(level)
	if !ok {
		h.Outcome, h.ReasonCode = contract.OutcomeUnsupported, contract.ReasonUnsupportedLevel
		return h
	}
	for _, r := range hh.Rungs {
		if rr, _ := levelRank(r.Level); r.Failed && rr <= rank {
			h.Outcome, h.ReasonCode, h.Message = contract.OutcomeFailed, r.Reason, r.Message
			return h
		}
	}
	h.Outcome = contract.OutcomePassed
	return h
}

// HarnessStop is the stop sequence of a harness child: end its input, give
// it ExitWait to exit on its own, stop its process group (SIGTERM, then
// SIGKILL after the process's grace), kill what left the group but still
// carries Sweep in its environment, let the reader of its output reach
// EOF (closing the output under it if a process outside the group still
// holds the pipe), and remove the private directories.
type HarnessStop struct {
	// CloseInput ends the harness's input (closes its stdin); nil: none.
	CloseInput func()
	// Proc is the harness process; nil: it never started.
	Proc *proc.Process
	// ExitWait bounds the wait for the harness to exit on end of input.
	ExitWait time.Duration
	// Sweep is a "NAME=value" environment entry unique to the runtime:
	// processes that carry it are killed once the group is stopped, for
	// at most SweepWait ("" for no sweep).
	Sweep     string
	SweepWait time.Duration
	// Output is the read end of the harness's stdout (nil: none) and
	// OutputDone is closed when its reader has ended (nil: no reader).
	Output     io.Closer
	OutputDone <-chan struct{}
	// OutputWait bounds the wait for the reader to end before Output is
	// closed under it (0: close at once); after the close, the reader is
	// waited for at most ClosedWait (0: until it ends).
	OutputWait time.Duration
	ClosedWait time.Duration
	// Remove is the private root removed last ("" for none).
	Remove string
	// Log reports the processes the sweep killed (nil: not reported).
	Log *slog.Logger
}

// Run runs the sequence once; ctx bounds the wait for the exit on end of
// input and the group's stop. It returns the group's stop error and the
// removal's, joined.
func (st HarnessStop) Run(ctx context.Context) error {
	var errs []error
	if st.CloseInput != nil {
		st.CloseInput()
	}
	if st.Proc != nil {
		wait(ctx, st.Proc.Done(), st.ExitWait)
		if err := st.Proc.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
		if st.Sweep != "" {
			if pids := proc.KillByEnv(st.Sweep, st.SweepWait); len(pids) > 0 && st.Log != nil {
				st.Log.Info("killed processes that had left the harness's process group", "pids", pids)
			}
		}
	}
	if st.OutputDone != nil && st.OutputWait > 0 {
		wait(context.Background(), st.OutputDone, st.OutputWait)
	}
	if st.Output != nil {
		_ = st.Output.Close()
	}
	if st.OutputDone != nil {
		if st.ClosedWait > 0 {
			wait(context.Background(), st.OutputDone, st.ClosedWait)
		} else {
			<-st.OutputDone
		}
	}
	if st.Remove != "" {
		if err := os.RemoveAll(st.Remove); err != nil {
			errs = append(errs, fmt.Errorf("remove private directories: %w", err))
		}
	}
	return errors.Join(errs...)
}

// wait returns when done is closed, d has passed or ctx is done.
func wait(ctx context.Context, done <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// ExitNote waits up to d for p to be reaped (a harness's output ends just
// before its exit is seen) and returns how it exited, with ok false while
// it still runs or when p is nil.
func ExitNote(p *proc.Process, d time.Duration) (proc.ExitInfo, bool) {
	if p == nil {
		return proc.ExitInfo{}, false
	}
	wait(context.Background(), p.Done(), d)
	return p.ExitState()
}

// StartPiped starts spec's process (see proc.Start) with its stdin and
// stdout on new pipes, which replace spec.Stdin and spec.Stdout; it
// returns the write end of the process's stdin and the read end of its
// stdout, for the caller to close.
func StartPiped(ctx context.Context, spec proc.Spec) (p *proc.Process, stdin, stdout *os.File, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, fmt.Errorf("pipe: %w", err)
	}
	spec.Stdin, spec.Stdout = inR, outW
	p, err = proc.Start(ctx, spec)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, nil, fmt.Errorf("start %s: %w", spec.Path, err)
	}
	return p, inW, outR, nil
}

// LineWriter writes one JSON document per line to a harness's input,
// one write at a time, each bounded by the writer's timeout.
type LineWriter struct {
	mu      sync.Mutex
	f       *os.File
	timeout time.Duration
}

// NewLineWriter writes to f (the write end of a harness's stdin), each
// line within timeout.
func NewLineWriter(f *os.File, timeout time.Duration) *LineWriter {
	return &LineWriter{f: f, timeout: timeout}
}

// Send writes v as one JSON line.
func (w *LineWriter) Send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.f.SetWriteDeadline(time.Now().Add(w.timeout))
	_, err = w.f.Write(b)
	return err
}

// Close ends the harness's input, after a write in progress.
func (w *LineWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Close()
}

// ExitedError is the lifecycle error, with code, of a harness named name
// whose output has ended: "<name> exited", with how it exited once p is
// reaped (waiting up to wait: the output ends just before the exit is
// seen).
func ExitedError(code, name string, p *proc.Process, wait time.Duration) *Error {
	msg := name + " exited"
	if info, ok := ExitNote(p, wait); ok {
		msg += " (" + info.String() + ")"
	}
	return &Error{Code: code, Message: msg}
}

// Calls pairs the requests a session writes to its harness with the
// replies its output reader routes back by id. The zero value is ready to
// use; name is the harness's name for errors ("claude closed its output").
type Calls[T any] struct {
	name    string
	seq     atomic.Int64
	pending pending.Table[T]
}

// NewCalls returns a call table whose errors name the harness name.
func NewCalls[T any](name string) *Calls[T] { return &Calls[T]{name: name} }

// NewID returns a fresh request id, for a request sent without waiting
// for its reply.
func (c *Calls[T]) NewID() string { return fmt.Sprintf("fabric-%d", c.seq.Add(1)) }

// Call sends one request with a fresh id ("fabric-1", "fabric-2", ...)
// through send and waits for Deliver of the same id, for closed (the
// output reader has stopped), or for ctx.
func (c *Calls[T]) Call(ctx context.Context, closed <-chan struct{}, send func(id string) error) (T, error) {
	var zero T
	id := c.NewID()
	ch := c.pending.Add(id)
	defer c.pending.Remove(id)
	if err := send(id); err != nil {
		return zero, err
	}
	select {
	case r := <-ch:
		return r, nil
	case <-closed:
		return zero, fmt.Errorf("%s closed its output", c.name)
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// Deliver hands reply to the call waiting for id and reports whether one
// was: a reply nobody waits for (late, or for an id we never sent) is
// dropped.
func (c *Calls[T]) Deliver(id string, reply T) bool { return c.pending.Deliver(id, reply) }

// HandshakeFailed ends a start whose first exchange with the harness
// failed: it stops the session (stop gets 5 s), and returns the error with
// code, "<name> did not answer <what>: <err>", with how the harness
// exited when it has.
func HandshakeFailed(code, name, what string, err error, stop func(context.Context) error, p *proc.Process) *Error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = stop(ctx)
	msg := err.Error()
	if p != nil {
		if info, ok := p.ExitState(); ok {
			msg += " (" + name + " " + info.String() + "; its stderr is in the host's diagnostics)"
		}
	}
	return Errorf(code, "%s did not answer %s: %s", name, what, msg)
}
