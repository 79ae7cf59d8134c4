//go:build !linux

package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
)

var errUnsupported = fmt.Errorf("proc: process supervision needs Linux: %w", errors.ErrUnsupported)

// Process is a child started by Start. Supervision is implemented on Linux
// only; elsewhere Start always fails.
type Process struct{ done chan struct{} }

// Start returns an error wrapping errors.ErrUnsupported outside Linux.
func Start(ctx context.Context, spec Spec) (*Process, error) { return nil, errUnsupported }

// Pid returns the child's pid, which is also its process group id.
func (p *Process) Pid() int { return 0 }

// Done returns a channel closed when the child has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited returns a context cancelled when Done is closed.
func (p *Process) Exited() context.Context { return context.Background() }

// ExitState returns how the child ended, and false while Done is not closed.
func (p *Process) ExitState() (ExitInfo, bool) { return ExitInfo{}, false }

// Signal sends sig to every process in the child's group.
func (p *Process) Signal(sig os.Signal) error { return errUnsupported }

// Kill sends SIGKILL to every process in the child's group.
func (p *Process) Kill() error { return errUnsupported }

// GroupPids returns the live processes in the child's process group.
func (p *Process) GroupPids() ([]int, error) { return nil, errUnsupported }

// OwnsListener reports whether a process in the child's group listens on port.
func (p *Process) OwnsListener(port uint16) (bool, error) { return false, errUnsupported }

// Stop ends the child's whole process group.
func (p *Process) Stop(ctx context.Context) error { return errUnsupported }
