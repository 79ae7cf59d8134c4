package harnessui

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// FuzzParseSettings: ParseSettings never panics, and what it accepts obeys
// the contract (ports in range and distinct among enabled HTTP interfaces,
// no port on a terminal, a deadline within L3).
func FuzzParseSettings(f *testing.F) {
	f.Add([]byte(`{"startup_timeout_seconds": 30, "interfaces": {"dashboard": {"port": 18789, "public_origins": ["https://x.example"], "theme": "dark"}, "terminal": {}}}`))
	f.Add([]byte(`{"interfaces": {"dashboard": {"port": 1}, "api": {"port": 1}}}`))
	f.Add([]byte(`{"interfaces": {"api": {"enabled": false}}}`))
	f.Add([]byte(`{"interfaces": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var settings map[string]any
		if json.Unmarshal(data, &settings) != nil {
			return
		}
		s, err := ParseSettings(settings, demoDecls)
		if err != nil {
			if codeOf(err) == "" {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		if s.StartupTimeout <= 0 || s.StartupTimeout > MaxStartupTimeout {
			t.Fatalf("startup timeout %v", s.StartupTimeout)
		}
		ports := map[int]bool{}
		for name, in := range s.Interfaces {
			decl, ok := declared(demoDecls, name)
			if !ok {
				t.Fatalf("undeclared interface %s accepted", name)
			}
			if decl.Kind == "terminal" && in.Port != 0 {
				t.Fatalf("terminal %s has port %d", name, in.Port)
			}
			if in.Enabled && decl.Kind == "http" {
				if in.Port < 1 || in.Port > 65535 || ports[in.Port] {
					t.Fatalf("port %d of %s", in.Port, name)
				}
				ports[in.Port] = true
			}
		}
	})
}

// FuzzUpdateDescriptor: the generator never panics, and a descriptor it
// writes checks and regenerates to itself.
func FuzzUpdateDescriptor(f *testing.F) {
	for _, p := range []string{"testdata/demo.fabric-adapter.json", "testdata/demo.golden.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"interfaces": [{"name": "t", "kind": "terminal"}], "settings_schema": {"properties": {}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := UpdateDescriptor(data)
		if err != nil {
			return
		}
		if err := CheckDescriptor(out); err != nil {
			t.Fatalf("generated descriptor does not check: %v", err)
		}
		again, err := UpdateDescriptor(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %v", err)
		}
	})
}
