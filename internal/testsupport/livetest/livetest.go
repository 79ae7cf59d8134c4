// Package livetest decides whether a test that drives real outside parts
// (harness binaries and the upstream npm packages from harnesses/, Node,
// a browser, tmux) runs. Such a test skips only when told to (-short) or
// when a part is missing, names that part when it does, and never skips
// where FABRIC_REQUIRE_HARNESSES=1 (scripts/test, and so CI, sets it):
// there a missing part or -short is a failure, so CI always runs every
// live test. Only tests import it.
package livetest

import (
	"os"
	"testing"
)

// EnvRequire makes every live test mandatory when set to 1.
const EnvRequire = "FABRIC_REQUIRE_HARNESSES"

// Required reports whether live tests must run (EnvRequire=1).
func Required() bool { return os.Getenv(EnvRequire) == "1" }

// Short skips t under -short, naming the real parts it needs. Where live
// tests are required, -short fails the test instead of skipping it.
func Short(t testing.TB, needs string) {
	t.Helper()
	if !testing.Short() {
		return
	}
	if Required() {
		t.Fatalf("-short with %s=1: this test needs %s and must run", EnvRequire, needs)
	}
	t.Skipf("needs %s; skipped with -short (CI runs it: %s=1 turns this skip into a failure)", needs, EnvRequire)
}

// Missing stops t because a real part it needs is not there: what names
// it, install says how to get it, err is what finding it said. Where live
// tests are required it is a failure, else a skip.
func Missing(t testing.TB, what, install string, err error) {
	t.Helper()
	msg := what + " is not installed (" + install + ")"
	if err != nil {
		msg += ": " + err.Error()
	}
	if Required() {
		t.Fatal(msg)
	}
	t.Skip(msg + "; " + EnvRequire + "=1 makes this a failure")
}
