package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/fabric-runtime/fabric/internal/config"
)

// FuzzParse checks that no input makes Parse panic, that every error is a
// *contract.ConfigError, and that every loaded config marshals.
func FuzzParse(f *testing.F) {
	valid, _ := filepath.Glob("testdata/valid/*")
	invalid, _ := filepath.Glob("testdata/invalid/*")
	for _, file := range append(valid, invalid...) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, filepath.Ext(file) == ".json")
	}
	f.Add([]byte(head+"relay: &r {a: *r}\n"), false)
	f.Add([]byte(head+"models: {default: {<<: {provider: p}, model: m}}\n"), false)
	f.Add([]byte(`{"a": {"b": [1, 2, {"c": null}]}, "a": 1e999}`), true)
	f.Add([]byte(head+"mcp: {servers: {s: {transport: stdio, url: '${A}$${B}${', exposure: harness_native}}}\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, asJSON bool) {
		name := "fuzz.yaml"
		if asJSON {
			name = "fuzz.json"
		}
		opts := config.Options{BaseDir: "/base", LookupEnv: env(map[string]string{"A": "a"})}
		l, err := config.Parse(data, name, opts)
		if err != nil {
			configErrors(t, err) // fails unless every error is a ConfigError
			if l != nil {
				t.Fatal("both a config and an error")
			}
			return
		}
		if _, err := json.Marshal(l.Config); err != nil {
			t.Fatalf("loaded config does not marshal: %v", err)
		}
	})
}
