package runtimetaint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

func TestRecordAndRead(t *testing.T) {
	home := filepath.Join(t.TempDir(), "runtime-1-abc")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if tainted, ts, err := Read(home); tainted || ts != nil || err != nil {
		t.Fatalf("no record: %v %v %v", tainted, ts, err)
	}
	many := make([]string, MaxViolations+5)
	for i := range many {
		many[i] = "modified /x"
	}
	for _, op := range []string{"a", "b"} {
		if err := Record(home, contract.RuntimeTaint{Package: "p@1", Operation: op, Mode: "read", Violations: many}); err != nil {
			t.Fatal(err)
		}
	}
	tainted, ts, err := Read(home)
	if err != nil || !tainted || len(ts) != 2 || ts[0].Operation != "a" || ts[1].Operation != "b" || len(ts[0].Violations) != MaxViolations || !ts[0].Truncated {
		t.Fatalf("%v %+v %v", tainted, ts, err)
	}
	if st, err := os.Stat(Path(home)); err != nil || st.Mode().Perm() != 0o600 || filepath.Dir(Path(home)) != filepath.Dir(home) {
		t.Errorf("record %s: %v %v", Path(home), st, err)
	}
	got, err := FindHome(filepath.Dir(home), "runtime-1")
	if err != nil || got != home {
		t.Errorf("FindHome: %q %v", got, err)
	}
	for _, bad := range []string{"", "runtime-2", "../x", "runtime-*", ".."} {
		if _, err := FindHome(filepath.Dir(home), bad); err == nil {
			t.Errorf("FindHome(%q) found one", bad)
		}
	}
}

// A record, however damaged, is a taint: Read never says untainted for a
// file that exists.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"package":"p@1","operation":"x","mode":"read","at":"t","enforcement":"none"}` + "\n"))
	f.Add([]byte(""))
	f.Add([]byte("{\n"))
	f.Add([]byte(strings.Repeat("x", 5000)))
	f.Fuzz(func(t *testing.T, data []byte) {
		home := filepath.Join(t.TempDir(), "h")
		if err := os.WriteFile(Path(home), data, 0o600); err != nil {
			t.Fatal(err)
		}
		tainted, ts, _ := Read(home)
		if !tainted || len(ts) == 0 {
			t.Fatalf("untainted for %q", data)
		}
		for _, tt := range ts {
			if tt.Operation == "" {
				t.Fatalf("a taint without an operation: %+v", tt)
			}
		}
	})
}
