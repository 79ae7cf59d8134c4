package config_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/internal/config"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testdataEnv holds the variables the testdata configs interpolate.
var testdataEnv = env(map[string]string{
	"MCP_BASE": "https://mcp.example.com", "GITHUB_TOKEN": "gh-token", "HOME_DIR": "/home/agent", "FILES_TOKEN": "files-token",
})

func TestValidTestdata(t *testing.T) {
	wantWarnings := map[string][]finding{
		"stdio.json": {{"unknown_key", "x_team", 11}},
	}
	files, err := filepath.Glob("testdata/valid/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			l, err := config.LoadFile(file, config.Options{LookupEnv: testdataEnv})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantWarnings[filepath.Base(file)], warningFindings(l)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if _, err := json.Marshal(l.Config); err != nil {
				t.Errorf("marshal: %v", err)
			}
		})
	}
}

// TestFullConfig checks that YAML and JSON give the same config, and a few
// values of each kind of processing.
func TestFullConfig(t *testing.T) {
	fromYAML, err := config.LoadFile("testdata/valid/full.yaml", config.Options{LookupEnv: testdataEnv})
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := config.LoadFile("testdata/valid/full.json", config.Options{LookupEnv: testdataEnv})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromYAML.Config, fromJSON.Config); diff != "" {
		t.Errorf("YAML and JSON differ (-yaml +json):\n%s", diff)
	}
	c := fromYAML.Config
	base := fromYAML.BaseDir
	checks := map[string][2]string{
		"github url":        {c.MCP.Servers["github"].URL, "https://mcp.example.com/github"},
		"github header":     {c.MCP.Servers["github"].CustomHeaders["Authorization"], "Bearer gh-token"},
		"files arg":         {strings.Join(c.MCP.Servers["files"].Args, " "), "-y @mcp/files --root /home/agent ${LITERAL}"},
		"files env":         {c.MCP.Servers["files"].Env["TOKEN"], "files-token"},
		"api_key_env":       {*c.Models["default"].APIKeyEnv, "OPENAI_API_KEY"},
		"runtime artifacts": {*c.Runtime.Artifacts, filepath.Join(base, "out/artifacts")},
		"skills":            {strings.Join(c.Skills.Paths, " "), filepath.Join(base, "skills/review") + " /opt/skills/shared"},
		"discovery":         {c.Discovery.LocalPaths[1], filepath.Join(filepath.Dir(base), "shared/adapters")},
		"description":       {*c.Metadata.Description, "Uses every section; ${NOT_INTERPOLATED} in prose is fine."},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}
}

// TestManyErrorsGolden shows every error of one bad file, as a user sees
// them. Run with -update to rewrite the golden file.
func TestManyErrorsGolden(t *testing.T) {
	_, err := config.LoadFile("testdata/invalid/many.yaml", config.Options{LookupEnv: env(nil)})
	if err == nil {
		t.Fatal("many.yaml loaded")
	}
	configErrors(t, err)
	got := err.Error() + "\n"
	golden := "testdata/invalid/many.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("errors (-golden +got):\n%s", diff)
	}
}
