// Package testaudit puts what live tests see into the test output, so that
// the suite's token scan (scripts/test, internal/testsupport/testlog) searches it: the
// scan covers the whole verbose run, so every plan, handle, result, event
// and log file a test hands to this package is proven free of interface
// tokens (T1). Only tests import it.
package testaudit

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// Log writes v as JSON into the test's output.
func Log(t testing.TB, what string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("audit %s: %v", what, err)
	}
	t.Logf("audit %s: %s", what, b)
}

// LogFiles writes every text file under dir whose name ends in ".log" (the
// host's stderr log, a harness's own logs) into the test's output.
func LogFiles(t testing.TB, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(path, ".log") {
			return nil
		}
		if data, err := os.ReadFile(path); err == nil && utf8.Valid(data) {
			t.Logf("audit file %s:\n%s", path, data)
		}
		return nil
	})
}
