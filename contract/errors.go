package contract

import (
	"fmt"
	"strings"
)

// Redacted is what every secret value (a credential the config names, an
// interface token) is replaced with in the diagnostics an error carries,
// such as an adapter host's stderr.
const Redacted = "[REDACTED]"

// Failure is the structured detail shared by Fabric's public error types.
// Codes are stable strings listed in docs/errors.md.
type Failure struct {
	Stage     string
	Code      string
	Path      string // dotted config path or file path, when one applies
	Message   string
	Retryable bool
	Metadata  map[string]any
	Err       error // underlying cause, if any
}

func (f Failure) describe() string {
	var b strings.Builder
	if f.Path != "" {
		b.WriteString(f.Path)
		b.WriteString(": ")
	}
	b.WriteString(f.Message)
	if f.Code != "" {
		fmt.Fprintf(&b, " [%s]", f.Code)
	}
	if f.Err != nil && !strings.Contains(f.Message, f.Err.Error()) {
		b.WriteString(": ")
		b.WriteString(f.Err.Error())
	}
	return b.String()
}

// Info converts the failure to the ErrorInfo carried by results.
func (f Failure) Info() *ErrorInfo {
	md := map[string]any{}
	for k, v := range f.Metadata {
		md[k] = v
	}
	if f.Path != "" {
		md["path"] = f.Path
	}
	if len(md) == 0 {
		md = nil
	}
	return &ErrorInfo{Stage: f.Stage, Code: f.Code, Message: f.describe(), Retryable: f.Retryable, Metadata: md}
}

// Unwrap returns the underlying cause.
func (f Failure) Unwrap() error { return f.Err }

// ConfigError reports an invalid config, request or override.
type ConfigError struct{ Failure }

func (e *ConfigError) Error() string { return "config: " + e.describe() }

// CapabilityError reports that the selected adapter does not support what
// the config asks for.
type CapabilityError struct{ Failure }

func (e *CapabilityError) Error() string { return "capability: " + e.describe() }

// RuntimeError reports that a runtime lifecycle operation failed before a
// normalized result could be returned.
type RuntimeError struct{ Failure }

func (e *RuntimeError) Error() string { return "runtime: " + e.describe() }

// StateError reports an invalid runtime state transition, such as invoking
// after stop or overlapping invocations.
type StateError struct{ Failure }

func (e *StateError) Error() string { return "state: " + e.describe() }
