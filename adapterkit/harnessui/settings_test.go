package harnessui

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
)

var demoDecls = []contract.InterfaceDeclaration{
	{Name: "dashboard", Kind: "http", Browser: true, PublicOrigins: true, Credential: "bearer",
		Settings: map[string]any{"theme": map[string]any{"enum": []any{"light", "dark"}}}},
	{Name: "api", Kind: "http", Credential: "bearer"},
	{Name: "terminal", Kind: "terminal"},
}

func TestParseSettings(t *testing.T) {
	var settings map[string]any
	if err := json.Unmarshal([]byte(`{
		"agent_id": "x",
		"startup_timeout_seconds": 30,
		"interfaces": {
			"dashboard": {"port": 18789, "public_origins": ["https://agent.example.com"], "theme": "dark"},
			"api": {"enabled": false},
			"terminal": {}
		}}`), &settings); err != nil {
		t.Fatal(err)
	}
	got, err := ParseSettings(settings, demoDecls)
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{StartupTimeout: 30 * time.Second, Interfaces: map[string]InterfaceSettings{
		"dashboard": {Enabled: true, Port: 18789, PublicOrigins: []string{"https://agent.example.com"}, Fields: map[string]any{"theme": "dark"}},
		"api":       {Enabled: false},
		"terminal":  {Enabled: true},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"dashboard", "terminal"}, got.EnabledNames()); diff != "" {
		t.Errorf("EnabledNames: %s", diff)
	}
	if _, on := got.Enabled("api"); on {
		t.Error("api is disabled")
	}
	// S1: absent means off; L3: the default deadline.
	got, err = ParseSettings(map[string]any{"agent_id": "x"}, demoDecls)
	if err != nil || got.StartupTimeout != DefaultStartupTimeout || len(got.EnabledNames()) != 0 {
		t.Errorf("absent: %+v, %v", got, err)
	}
}

func TestParseSettingsRejects(t *testing.T) {
	type obj = map[string]any
	for _, tc := range []struct {
		name     string
		settings obj
		code     string
		want     string
	}{
		{"timeout above max (L3)", obj{"startup_timeout_seconds": 76}, CodeInvalid, "L3"},
		{"timeout zero (L3)", obj{"startup_timeout_seconds": 0}, CodeInvalid, "L3"},
		{"timeout fraction", obj{"startup_timeout_seconds": 1.5}, CodeInvalid, "L3"},
		{"not an object (S1)", obj{"interfaces": []any{}}, CodeInvalid, "S1"},
		{"unknown name (S8)", obj{"interfaces": obj{"tui": obj{}}}, CodeInvalid, "S8"},
		{"unknown field (S8)", obj{"interfaces": obj{"api": obj{"port": 1, "x": 1}}}, CodeInvalid, "S6, S8"},
		{"no optional field (S9)", obj{"interfaces": obj{"api": obj{"port": 1, "optional": true}}}, CodeInvalid, "S8"},
		{"enabled not boolean (S1)", obj{"interfaces": obj{"api": obj{"enabled": "no"}}}, CodeInvalid, "S1"},
		{"no port (S2)", obj{"interfaces": obj{"api": obj{}}}, CodeInvalid, "S2"},
		{"port out of range (S2)", obj{"interfaces": obj{"api": obj{"port": 65536}}}, CodeInvalid, "S2"},
		{"terminal port (S4)", obj{"interfaces": obj{"terminal": obj{"port": 1000}}}, CodeInvalid, "S4"},
		{"public_origins unsupported (S5)", obj{"interfaces": obj{"api": obj{"port": 1, "public_origins": []any{}}}}, CodeInvalid, "S5"},
		{"origin with path (S5)", obj{"interfaces": obj{"dashboard": obj{"port": 1, "public_origins": []any{"https://x/y"}}}}, CodeInvalid, "S5"},
		{"equal ports (S3)", obj{"interfaces": obj{"dashboard": obj{"port": 9}, "api": obj{"port": 9}}}, CodePortsEqual, "S3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSettings(tc.settings, demoDecls)
			if codeOf(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %s mentioning %s", err, tc.code, tc.want)
			}
		})
	}
	// Disabled interfaces need no port and take no part in S3.
	if _, err := ParseSettings(obj{"interfaces": obj{"dashboard": obj{"port": 9}, "api": obj{"port": 9, "enabled": false}}}, demoDecls); err != nil {
		t.Error(err)
	}
}

func TestSpecRejects(t *testing.T) {
	good := func() Spec {
		return Spec{RuntimeID: "runtime-1", ArtifactRoot: "/tmp/x", AdapterName: "demo", Children: []Child{
			{Name: "dashboard", Kind: "http", Port: 1000, Command: "x", HealthPath: "/health"},
			{Name: "terminal", Kind: "terminal", Launcher: &Launcher{Argv: []string{"x"}}},
		}}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Spec)
		code   string
	}{
		{"timeout above max (L3)", func(s *Spec) { s.StartupTimeout = 76 * time.Second }, CodeInvalid},
		{"relative artifact root (P1)", func(s *Spec) { s.ArtifactRoot = "artifacts" }, CodeInvalid},
		{"runtime id with a slash (P3)", func(s *Spec) { s.RuntimeID = "../x" }, CodeInvalid},
		{"adapter name (P2)", func(s *Spec) { s.AdapterName = "Open Claw" }, CodeInvalid},
		{"interface name", func(s *Spec) { s.Children[0].Name = "../dash" }, CodeInvalid},
		{"duplicate name", func(s *Spec) { s.Children[1].Name = "dashboard" }, CodeInvalid},
		{"http without port (S2)", func(s *Spec) { s.Children[0].Port = 0 }, CodeInvalid},
		{"http without health (L2)", func(s *Spec) { s.Children[0].HealthPath = "" }, CodeInvalid},
		{"terminal with port (S4)", func(s *Spec) { s.Children[1].Port = 1001 }, CodeInvalid},
		{"terminal with a child", func(s *Spec) { s.Children[1].Command = "x" }, CodeInvalid},
		{"terminal without launcher (P4)", func(s *Spec) { s.Children[1].Launcher = nil }, CodeInvalid},
		{"token env without credential (T1)", func(s *Spec) { s.Children[0].TokenEnv = "TOKEN" }, CodeInvalid},
		{"unknown kind", func(s *Spec) { s.Children[0].Kind = "stdio" }, CodeInvalid},
		{"equal derived port (S3)", func(s *Spec) { s.Children[0].CheckPorts = []int{1000} }, CodePortsEqual},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good()
			tc.mutate(&s)
			_, err := Start(t.Context(), s)
			if codeOf(err) != tc.code {
				t.Errorf("got %v, want %s", err, tc.code)
			}
		})
	}
	// No interfaces: nothing to do.
	set, err := Start(t.Context(), Spec{RuntimeID: "r", ArtifactRoot: t.TempDir(), AdapterName: "demo"})
	if err != nil || len(set.Interfaces()) != 0 || set.Stop(t.Context()) != nil {
		t.Errorf("empty spec: %v", err)
	}
}

func TestArtifactRoot(t *testing.T) {
	s := func(v string) *string { return &v }
	in := adapterkit.StartInput{BaseDir: "/base"}
	if got := ArtifactRoot(in); got != "/base/artifacts" {
		t.Errorf("unset: %s, want exactly <base>/artifacts (P1)", got)
	}
	in.Artifacts = "/env"
	in.RuntimeContext.Environment.Artifacts = s("/environment")
	if got := ArtifactRoot(in); got != "/environment" {
		t.Errorf("environment: %s", got)
	}
	in.RuntimeContext.Artifacts.Root = s("/sandbox/artifacts")
	if got := ArtifactRoot(in); got != "/sandbox/artifacts" {
		t.Errorf("runtime context: %s", got)
	}
	if got := InterfacesDir("/sandbox/artifacts", "openclaw", "runtime-1"); got != "/sandbox/artifacts/.fabric/openclaw/runtimes/runtime-1/interfaces" {
		t.Errorf("InterfacesDir: %s (P3)", got)
	}
}

// TestLauncherQuoting: launcher arguments and environment reach the command
// verbatim, whatever characters they hold.
func TestLauncherQuoting(t *testing.T) {
	dir := t.TempDir()
	s := &Set{spec: Spec{RuntimeID: "r'1", AdapterName: "demo"}, dir: dir}
	nasty := "a'b \"c\" $(touch " + filepath.Join(dir, "pwned") + ") `x` \\ \n;|&"
	c := &child{Child: Child{Name: "terminal", Kind: "terminal", Launcher: &Launcher{
		Argv: []string{"sh", "-c", `printf '%s|%s|%s' "$1" "$NASTY" "$2"`, "sh", nasty},
		Env:  []string{"NASTY=" + nasty},
	}}}
	launcher := filepath.Join(dir, "terminal")
	if err := os.WriteFile(launcher, s.launcherScript(c), 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(launcher).CombinedOutput(); err == nil || !strings.Contains(string(out), "of runtime r'1 is not running") {
		t.Errorf("without marker: %v %q", err, out)
	}
	if err := os.WriteFile(markerFile(dir, "terminal"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(launcher, "extra arg").CombinedOutput()
	if err != nil || string(out) != nasty+"|"+nasty+"|extra arg" {
		t.Errorf("launcher: %v %q", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("the launcher evaluated an argument")
	}
}
