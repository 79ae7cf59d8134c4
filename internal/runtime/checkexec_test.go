package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

// CheckExec sees the host command and every required binary found on the
// host's PATH before anything is launched; its error fails the start with
// the error's code, leaving no runtime home behind.
func TestCheckExec(t *testing.T) {
	tools := t.TempDir()
	tool := filepath.Join(tools, "fab-tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	changed := &contract.RuntimeError{Failure: contract.Failure{Stage: contract.StageStart, Code: "artifact_digest_mismatch", Path: tool, Message: "changed"}}
	for _, tc := range []struct {
		name  string
		check func(string) error
		code  string
	}{
		{"passes", func(string) error { return nil }, ""},
		{"runtime error kept", func(p string) error {
			if p == tool {
				return changed
			}
			return nil
		}, "artifact_digest_mismatch"},
		{"plain error wrapped", func(p string) error {
			if p == tool {
				return errors.New("unreadable")
			}
			return nil
		}, "runtime_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPlan(t, scriptedV2, map[string]any{"response": "ok"})
			p.AdapterDescriptor.Descriptor.Requirements.Binaries = []string{"fab-tool", "not-installed-anywhere"}
			opts := testOptions(t)
			opts.ExtraPath = []string{tools}
			var seen []string
			opts.CheckExec = func(p string) error { seen = append(seen, p); return tc.check(p) }
			rt, err := Start(context.Background(), p, opts)
			if !slices.Equal(seen, []string{opts.HostBinary, tool}) {
				t.Errorf("checked %v; want the host binary and %s", seen, tool)
			}
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				rt.Stop(context.Background())
				return
			}
			var re *contract.RuntimeError
			if !errors.As(err, &re) || re.Code != tc.code || re.Stage != contract.StageStart {
				t.Fatalf("start: %v; want a start RuntimeError %s", err, tc.code)
			}
			if ents, _ := os.ReadDir(opts.StateDir); len(ents) != 0 {
				t.Errorf("a failed start left %d entries in the state dir", len(ents))
			}
		})
	}
}
