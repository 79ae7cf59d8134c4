package harnessui

import (
	"fmt"

	"github.com/fabric-runtime/fabric/adapterkit"
)

// Stable error codes. An adapter returns a start failure from
// Adapter.Start unchanged: *Error unwraps to an *adapterkit.Error with the
// same code, which the host reports to the core.
const (
	// CodeInvalid: a Spec or harness.settings value breaks the contract
	// (S1-S9, L3, P1-P4).
	CodeInvalid = "interface_invalid"
	// CodePortsEqual: two interfaces of one runtime use one port (S3).
	CodePortsEqual = "interface_ports_equal"
	// CodePortTaken: something listened on the port before launch, or after
	// health the port's listening socket was not the child's (S2, Q5, L6).
	CodePortTaken = "interface_port_taken"
	// CodeNotLoopback: the child listens on a non-loopback address (A1).
	CodeNotLoopback = "interface_not_loopback"
	// CodeLaunchFailed: the child process could not be started.
	CodeLaunchFailed = "interface_launch_failed"
	// CodeChildExited: the child exited before start finished (L2).
	CodeChildExited = "interface_child_exited"
	// CodeStartTimeout: a child did not pass health within the one startup
	// deadline (L2, L3).
	CodeStartTimeout = "interface_start_timeout"
	// CodeStartCancelled: the caller's context was cancelled during start.
	CodeStartCancelled = "interface_start_cancelled"
	// CodeFilesFailed: a token file, launcher or marker could not be
	// written (T1, P3, P4), or could not be removed at stop (L5).
	CodeFilesFailed = "interface_files_failed"
	// CodeStopFailed: a child's process group was still running after
	// SIGKILL (L5).
	CodeStopFailed = "interface_stop_failed"
)

// Error is a failure of the interfaces contract. Its message never
// contains a credential value.
type Error struct {
	Code      string // one of the Code* constants
	Interface string // the interface concerned, "" when none
	Message   string
	Err       error // the underlying cause, if any
}

func (e *Error) Error() string {
	s := e.Code + ": "
	if e.Interface != "" {
		s += "interface " + e.Interface + ": "
	}
	s += e.Message
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause and an *adapterkit.Error with e's code, so that
// errors.As finds either and an adapter host reports the code.
func (e *Error) Unwrap() []error {
	lifecycle := &adapterkit.Error{Code: e.Code, Message: e.Error()}
	if e.Interface != "" {
		lifecycle.Metadata = map[string]any{"interface": e.Interface}
	}
	if e.Err == nil {
		return []error{lifecycle}
	}
	return []error{e.Err, lifecycle}
}

func errorf(code, name string, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Interface: name, Message: fmt.Sprintf(format, args...), Err: cause}
}
