package config

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/fabric-runtime/fabric/contract"
)

// report collects the errors and warnings of one load, in the order found.
type report struct {
	file     string // the source name as the caller gave it; "" when unnamed
	errs     []error
	warnings []contract.Diagnostic
}

// failf records an error and returns it so that the caller can add metadata.
func (r *report) failf(code, path string, line int, format string, args ...any) *contract.ConfigError {
	e := &contract.ConfigError{Failure: contract.Failure{
		Stage:    stage,
		Code:     code,
		Path:     path,
		Message:  r.prefix(line) + fmt.Sprintf(format, args...),
		Metadata: r.metadata(line),
	}}
	r.errs = append(r.errs, e)
	return e
}

// warnf records a warning.
func (r *report) warnf(code, path string, line int, format string, args ...any) {
	r.warnings = append(r.warnings, contract.Diagnostic{
		Severity: contract.SeverityWarning,
		Code:     code,
		Path:     path,
		Message:  r.prefix(line) + fmt.Sprintf(format, args...),
		Metadata: r.metadata(line),
	})
}

// failed reports whether any error has been recorded.
func (r *report) failed() bool { return len(r.errs) > 0 }

// err joins every recorded error, or returns nil.
func (r *report) err() error { return errors.Join(r.errs...) }

// prefix is the "file:line: " that starts a message.
func (r *report) prefix(line int) string {
	switch {
	case r.file != "" && line > 0:
		return r.file + ":" + strconv.Itoa(line) + ": "
	case r.file != "":
		return r.file + ": "
	case line > 0:
		return "line " + strconv.Itoa(line) + ": "
	}
	return ""
}

func (r *report) metadata(line int) map[string]any {
	md := map[string]any{}
	if r.file != "" {
		md["file"] = r.file
	}
	if line > 0 {
		md["line"] = line
	}
	return md
}
