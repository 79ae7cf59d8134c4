package config_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/config"
)

func TestWarnings(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		strict bool
		errs   []finding
		warns  []finding
	}{
		{"clean", head, false, nil, nil},
		{"unknown top-level", head + "x_team: {owner: me}\n", false, nil,
			[]finding{{"unknown_key", "x_team", 5}}},
		{"unknown top-level strict", head + "x_team: {owner: me}\n", true,
			[]finding{{"unknown_key", "x_team", 5}}, nil},
		{"unknown nested", "schema_version: fabric.agent/v1alpha1\nmetadata:\n  name: a\n  nmae: b\nruntime: {}\n", false, nil,
			[]finding{{"unknown_key", "metadata.nmae", 4}}},
		{"unknown nested strict stays a warning", head + model("temprature: 1"), true, nil,
			[]finding{{"unknown_key", "models.default.temprature", 9}}},
		{"case matters", head + "Metadata: {name: b}\n", false, nil,
			[]finding{{"unknown_key", "Metadata", 5}}},
		{"reference in plain field", head + model("base_url: ${BASE_URL}/v1"), false, nil,
			[]finding{{"interpolation_not_allowed", "models.default.base_url", 9}}},
		{"escaped reference is fine", head + model("base_url: $${BASE_URL}"), false, nil, nil},
		{"reference in prose is fine", head + "instructions:\n  system: {content: 'echo ${HOME}'}\n", false, nil, nil},
		{"reference in settings is fine", head + "harness: {adapter_id: a, settings: {cmd: '${X}'}}\n", false, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := config.Parse([]byte(tt.src), "a.yaml", config.Options{BaseDir: "/base", Strict: tt.strict})
			if diff := cmp.Diff(tt.errs, errorFindings(t, err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warns, warningFindings(l)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if l != nil {
				for _, w := range l.Warnings {
					if w.Severity != contract.SeverityWarning || !strings.HasPrefix(w.Message, "a.yaml:") {
						t.Errorf("warning %+v: want severity warning and a file:line message", w)
					}
				}
			}
		})
	}
}

func TestUnknownTopLevelKeysKept(t *testing.T) {
	src := head + "x_team: {owner: me, n: 1}\nmetadata2: [a]\n"
	l, err := config.Parse([]byte(src), "a.yaml", config.Options{BaseDir: "/base"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]json.RawMessage{"x_team": json.RawMessage(`{"owner":"me","n":1}`), "metadata2": json.RawMessage(`["a"]`)}
	if diff := cmp.Diff(want, l.Config.Extra); diff != "" {
		t.Errorf("Extra (-want +got):\n%s", diff)
	}
	out, err := json.Marshal(l.Config)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"x_team":{"owner":"me","n":1}`) {
		t.Errorf("marshalled config lost the unknown key: %s", out)
	}
}

func TestDefaults(t *testing.T) {
	src := head + "instructions:\n  system: {content: hi}\nenvironment:\n  provider: local\n"
	l, err := config.Parse([]byte(src), "a.yaml", config.Options{BaseDir: "/base"})
	if err != nil {
		t.Fatal(err)
	}
	c := l.Config
	got := []string{c.Runtime.InputSchema, c.Runtime.OutputSchema, string(c.Instructions.System.Mode), c.Environment.ControlLocation, c.Environment.Ownership}
	want := []string{"text", "text", "replace", "in_env_control", "caller_owned"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if c.Tools != nil || c.Harness != nil {
		t.Errorf("absent sections were created: tools %v harness %v", c.Tools, c.Harness)
	}

	src = head + "instructions:\n  system: {content: hi, mode: append}\nenvironment:\n  provider: local\n  control_location: external_control\n  ownership: fabric_owned\n"
	l, err = config.Parse([]byte(src), "a.yaml", config.Options{BaseDir: "/base"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Config.Instructions.System.Mode != "append" || l.Config.Environment.ControlLocation != "external_control" || l.Config.Environment.Ownership != "fabric_owned" {
		t.Errorf("explicit values were replaced by defaults: %+v %+v", l.Config.Instructions.System, l.Config.Environment)
	}
}

func TestToolsEnabledNullVersusEmpty(t *testing.T) {
	for src, wantNil := range map[string]bool{
		head + "tools: {enabled: null}\n": true,
		head + "tools: {blocked: [x]}\n":  true,
		head + "tools: {enabled: []}\n":   false,
	} {
		l, err := config.Parse([]byte(src), "a.yaml", config.Options{BaseDir: "/base"})
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Config.Tools.Enabled == nil; got != wantNil {
			t.Errorf("%q: Enabled == nil is %v, want %v", src, got, wantNil)
		}
	}
}

func TestPathResolution(t *testing.T) {
	local := head + "skills: {paths: [s, /abs/s]}\ndiscovery: {local_paths: [d]}\nenvironment: {provider: local, workspace: w, artifacts: ../a}\n"
	noEnv := "schema_version: fabric.agent/v1alpha1\nmetadata: {name: a}\nruntime: {artifacts: out}\nskills: {paths: [s]}\n"
	docker := "schema_version: fabric.agent/v1alpha1\nmetadata: {name: a}\nruntime: {artifacts: out}\nskills: {paths: [s]}\ndiscovery: {local_paths: [d]}\nenvironment: {provider: docker, workspace: w, artifacts: a}\n"

	l := mustParse(t, local, "/base/dir")
	got := []string{l.Config.Skills.Paths[0], l.Config.Skills.Paths[1], l.Config.Discovery.LocalPaths[0], *l.Config.Environment.Workspace, *l.Config.Environment.Artifacts}
	want := []string{"/base/dir/s", "/abs/s", "/base/dir/d", "/base/dir/w", "/base/a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("local (-want +got):\n%s", diff)
	}

	l = mustParse(t, noEnv, "/base")
	if got := []string{*l.Config.Runtime.Artifacts, l.Config.Skills.Paths[0]}; !cmp.Equal(got, []string{"/base/out", "/base/s"}) {
		t.Errorf("no environment: %v", got)
	}

	l = mustParse(t, docker, "/base")
	got = []string{*l.Config.Runtime.Artifacts, l.Config.Skills.Paths[0], l.Config.Discovery.LocalPaths[0], *l.Config.Environment.Workspace, *l.Config.Environment.Artifacts}
	want = []string{"out", "s", "/base/d", "w", "a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("docker (-want +got):\n%s", diff)
	}
}

func mustParse(t *testing.T, src, base string) *config.Loaded {
	t.Helper()
	l, err := config.Parse([]byte(src), "a.yaml", config.Options{BaseDir: base})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestBaseDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "agent.yaml")
	writeFile(t, file, head+"skills: {paths: [s]}\n")

	l, err := config.LoadFile(file, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Path != file || l.BaseDir != dir || l.Config.Skills.Paths[0] != filepath.Join(dir, "s") {
		t.Errorf("LoadFile: path %q base %q skills %v", l.Path, l.BaseDir, l.Config.Skills.Paths)
	}

	l, err = config.LoadFile(file, config.Options{BaseDir: "/elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	if l.BaseDir != "/elsewhere" || l.Config.Skills.Paths[0] != "/elsewhere/s" {
		t.Errorf("LoadFile with BaseDir: base %q skills %v", l.BaseDir, l.Config.Skills.Paths)
	}

	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	l, err = config.Parse([]byte(head), "", config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Path != "" || l.BaseDir != wd {
		t.Errorf("Parse: path %q base %q, want \"\" and %q", l.Path, l.BaseDir, wd)
	}
	l, err = config.Parse([]byte(head), "x.yaml", config.Options{BaseDir: "rel"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Path != filepath.Join(wd, "x.yaml") || l.BaseDir != filepath.Join(wd, "rel") {
		t.Errorf("Parse with name: path %q base %q", l.Path, l.BaseDir)
	}
}

func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()

	_, err := config.LoadFile(filepath.Join(dir, "missing.yaml"), config.Options{})
	if errs := configErrors(t, err); len(errs) != 1 || errs[0].Code != "config_unreadable" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}

	_, err = config.LoadFile(dir, config.Options{})
	if errs := configErrors(t, err); len(errs) != 1 || errs[0].Code != "config_unreadable" {
		t.Errorf("directory: %v", err)
	}

	// A sparse file over the limit is refused from its size, unread.
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = config.LoadFile(big, config.Options{})
	if errs := configErrors(t, err); len(errs) != 1 || errs[0].Code != "config_too_large" || errs[0].Metadata["file"] != big {
		t.Errorf("big file: %v", err)
	}
}

func TestErrorLocation(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "agent.yaml")
	writeFile(t, file, head+"harness:\n  adapter_id: ''\n")
	_, err := config.LoadFile(file, config.Options{})
	errs := configErrors(t, err)
	if len(errs) != 1 {
		t.Fatalf("got %v", err)
	}
	e := errs[0]
	wantMeta := map[string]any{"file": file, "line": 6}
	if diff := cmp.Diff(wantMeta, e.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	wantMsg := "config: harness.adapter_id: " + file + ":6: must not be blank [invalid_value]"
	if e.Error() != wantMsg {
		t.Errorf("Error() = %q\nwant      %q", e.Error(), wantMsg)
	}

	_, err = config.Parse([]byte(head+"harness:\n  adapter_id: ''\n"), "", config.Options{BaseDir: "/base"})
	if errs := configErrors(t, err); len(errs) != 1 || errs[0].Metadata["file"] != nil || !strings.HasPrefix(errs[0].Message, "line 6: ") {
		t.Errorf("unnamed source: %v", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
