package livetest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The helpers are checked in child runs of this test binary, where -short
// and the requirement are set independently: a required test never skips.
func TestHelpers(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, run, require string
		short              bool
		want               string
	}{
		{"short skips naming the parts", "TestChildShort", "", true, "--- SKIP"},
		{"short is a failure when required", "TestChildShort", "1", true, "--- FAIL"},
		{"without -short it runs", "TestChildShort", "1", false, "--- PASS"},
		{"missing skips naming the part", "TestChildMissing", "", false, "--- SKIP"},
		{"missing is a failure when required", "TestChildMissing", "1", false, "--- FAIL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"-test.run=^" + c.run + "$", "-test.v"}
			if c.short {
				args = append(args, "-test.short")
			}
			cmd := exec.Command(exe, args...)
			cmd.Env = append(os.Environ(), envChild+"=1", EnvRequire+"="+c.require)
			out, _ := cmd.CombinedOutput()
			if !strings.Contains(string(out), c.want) {
				t.Fatalf("want %q in:\n%s", c.want, out)
			}
			if c.want != "--- PASS" && !strings.Contains(string(out), "the test part") {
				t.Errorf("the message does not name the part:\n%s", out)
			}
		})
	}
}

const envChild = "FABRIC_LIVETEST_CHILD"

func TestChildShort(t *testing.T) {
	if os.Getenv(envChild) != "1" {
		return // only as a child of TestHelpers
	}
	Short(t, "the test part")
}

func TestChildMissing(t *testing.T) {
	if os.Getenv(envChild) != "1" {
		return
	}
	Missing(t, "the test part", "install it", errors.New("not found"))
}

// Lookup reads an environment list, later entries winning.
func TestLookup(t *testing.T) {
	get := Lookup([]string{"A=1", "B=x=y", "A=2"})
	if v, _ := get("A"); v != "2" {
		t.Errorf("A = %q, want the later entry", v)
	}
	if v, _ := get("B"); v != "x=y" {
		t.Errorf("B = %q, want the value after the first =", v)
	}
	if _, ok := get("C"); ok {
		t.Error("C is not set")
	}
}
