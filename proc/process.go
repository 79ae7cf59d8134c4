package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Defaults for the zero values of Spec.
const (
	DefaultGrace     = 2 * time.Second // SIGTERM to SIGKILL
	DefaultWaitDelay = time.Second     // exit to forced close of stdio pipes
)

// KillWait bounds how long Stop waits, after SIGKILL, for the leader to be
// reaped and the group to empty. SIGKILL cannot be caught, so this is reached
// only by processes stuck in the kernel (uninterruptible sleep).
const KillWait = 5 * time.Second

// ErrPidReused reports that the process group's id now belongs to another
// process (its start time differs from the one recorded at Start), so the
// group is not signalled.
var ErrPidReused = errors.New("proc: process id reused")

// ErrStillRunning reports that Stop gave up while the leader was not reaped
// or live processes were left in the group.
var ErrStillRunning = errors.New("proc: process group still running")

// Spec describes a child process to start.
type Spec struct {
	// Path is the program. A name without a slash is looked up in PATH.
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Dir is the working directory; empty means the caller's.
	Dir string
	// Env is the environment; nil means the caller's environment.
	Env []string
	// Stdin, Stdout and Stderr are connected as in os/exec: nil means the
	// null device, an *os.File is passed to the child directly, and anything
	// else is copied through a pipe by a goroutine that is joined before Done
	// is closed. A Stdin reader whose Read never returns keeps that
	// goroutine until it does (as in os/exec); Done does not wait for it
	// beyond WaitDelay.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// ExtraFiles become file descriptors 3, 4, ... in the child. The caller
	// keeps ownership of its copies and may close them after Start.
	ExtraFiles []*os.File
	// Grace is how long Stop waits after SIGTERM before SIGKILL. Zero means
	// DefaultGrace; a negative value means no wait.
	Grace time.Duration
	// WaitDelay bounds how long, after the child exits, stdio copying may
	// continue (a grandchild may hold the pipes open) before the pipes are
	// closed and ExitInfo.Err is set. Zero means DefaultWaitDelay.
	WaitDelay time.Duration
	// EnvMarker, when set, is a whole "NAME=value" entry of Env unique to
	// this child's tree (a runtime's private home, say). Once the group is
	// gone, Stop also kills every process still carrying it in its
	// environment: those that left the group (setsid, a detached spawn)
	// and outlived their parent.
	EnvMarker string
}

func (s Spec) grace() time.Duration {
	switch {
	case s.Grace == 0:
		return DefaultGrace
	case s.Grace < 0:
		return 0
	}
	return s.Grace
}

func (s Spec) waitDelay() time.Duration {
	if s.WaitDelay <= 0 {
		return DefaultWaitDelay
	}
	return s.WaitDelay
}

// ExitInfo is how a process ended.
type ExitInfo struct {
	// Code is the exit status, or -1 when a signal ended the process.
	Code int
	// Signal names the signal that ended the process ("SIGKILL"), or is
	// empty.
	Signal string
	// Err is a failure of waiting for the process or of copying its stdio
	// (for example exec.ErrWaitDelay). A non-zero exit status is not an
	// error here; it is in Code.
	Err error
}

// String describes the exit for logs: "exit status 3", "signal SIGKILL".
func (e ExitInfo) String() string {
	s := fmt.Sprintf("exit status %d", e.Code)
	if e.Signal != "" {
		s = "signal " + e.Signal
	}
	if e.Err != nil {
		s += " (" + e.Err.Error() + ")"
	}
	return s
}
