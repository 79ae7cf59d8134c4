package config_test

import (
	"errors"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/config"
)

// finding is the part of an error or warning that tests compare.
type finding struct {
	Code string
	Path string
	Line int
}

// configErrors unpacks the joined errors of a load; every one must be a
// *contract.ConfigError with Stage "config".
func configErrors(t testing.TB, err error) []*contract.ConfigError {
	t.Helper()
	if err == nil {
		return nil
	}
	var list []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		list = joined.Unwrap()
	} else {
		list = []error{err}
	}
	out := make([]*contract.ConfigError, 0, len(list))
	for _, e := range list {
		var ce *contract.ConfigError
		if !errors.As(e, &ce) {
			t.Fatalf("error %T %q is not a *contract.ConfigError", e, e)
		}
		if ce.Stage != "config" {
			t.Errorf("error %q has stage %q, want config", ce, ce.Stage)
		}
		out = append(out, ce)
	}
	return out
}

func errorFindings(t testing.TB, err error) []finding {
	t.Helper()
	var out []finding
	for _, e := range configErrors(t, err) {
		line, _ := e.Metadata["line"].(int)
		out = append(out, finding{e.Code, e.Path, line})
	}
	return out
}

func warningFindings(l *config.Loaded) []finding {
	if l == nil {
		return nil
	}
	var out []finding
	for _, w := range l.Warnings {
		line, _ := w.Metadata["line"].(int)
		out = append(out, finding{w.Code, w.Path, line})
	}
	return out
}

// env is a fake environment for interpolation.
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// head is a valid config start: 4 lines, so cases appended to it begin on
// line 5.
const head = `schema_version: fabric.agent/v1alpha1
metadata:
  name: demo
runtime: {}
`
