package plan

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/catalog"
)

// TestInterfacesPlanning: planning rejects unknown interface names and
// fields from the descriptor alone (S8), using the settings fragment that
// `go generate ./adapterkit/harnessui` wrote into the descriptor, and rejects
// interfaces for adapters that declare none.
func TestInterfacesPlanning(t *testing.T) {
	generated, err := os.ReadFile("../../adapterkit/harnessui/testdata/demo.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Discover(catalog.Options{Bundled: []catalog.Bundled{
		{Name: "demo.json", Data: generated},
		// Declares interfaces, but its open settings_schema lacks the fragment.
		{Name: "loose.json", Data: testDescriptor("test.loose", nil, `{
			"interfaces": [{"name": "dashboard", "kind": "http"}],
			"settings_schema": {"type": "object"}}`)},
		// Declares no interfaces; its open settings_schema lets the key through.
		{Name: "none.json", Data: testDescriptor("test.none", nil, `{"settings_schema": {"type": "object"}}`)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	type obj = map[string]any
	tests := []struct {
		name     string
		adapter  string
		settings obj
		want     []finding // nil: plan succeeds
	}{
		{"enabled interfaces", "example.fabric.demo", obj{"interfaces": obj{
			"dashboard": obj{"port": 18789, "public_origins": []any{"https://agent.example.com", "http://[::1]:9000"}, "theme": "dark"},
			"api":       obj{"enabled": true, "port": 18790},
			"terminal":  obj{},
		}, "startup_timeout_seconds": 75}, nil},
		{"absent means off", "example.fabric.demo", obj{"agent_id": "a"}, nil},
		{"disabled needs no port", "example.fabric.demo", obj{"interfaces": obj{"dashboard": obj{"enabled": false}}}, nil},
		{"equal ports are left to start (S3)", "example.fabric.demo", obj{"interfaces": obj{
			"dashboard": obj{"port": 18789}, "api": obj{"port": 18789}}}, nil},
		{"unknown name", "example.fabric.demo", obj{"interfaces": obj{"tui": obj{}}},
			[]finding{{"invalid_settings", "harness.settings.interfaces"}}},
		{"unknown field", "example.fabric.demo", obj{"interfaces": obj{"dashboard": obj{"port": 18789, "colour": "red"}}},
			[]finding{{"invalid_settings", "harness.settings.interfaces.dashboard"}}},
		{"no optional field (S9)", "example.fabric.demo", obj{"interfaces": obj{"dashboard": obj{"port": 18789, "optional": true}}},
			[]finding{{"invalid_settings", "harness.settings.interfaces.dashboard"}}},
		{"http without port (S2)", "example.fabric.demo", obj{"interfaces": obj{"api": obj{}}},
			[]finding{{"invalid_settings", "harness.settings.interfaces.api"}}},
		{"port out of range", "example.fabric.demo", obj{"interfaces": obj{"api": obj{"port": 70000}}},
			[]finding{{"invalid_settings", "harness.settings.interfaces.api.port"}}},
		{"terminal with port (S4)", "example.fabric.demo", obj{"interfaces": obj{"terminal": obj{"port": 4000}}},
			[]finding{{"invalid_settings", "harness.settings.interfaces.terminal"}}},
		{"public_origins where unsupported (S5)", "example.fabric.demo", obj{"interfaces": obj{"api": obj{"port": 1, "public_origins": []any{"https://x.example"}}}},
			[]finding{{"invalid_settings", "harness.settings.interfaces.api"}}},
		{"origin with a path (S5)", "example.fabric.demo", obj{"interfaces": obj{"dashboard": obj{"port": 1, "public_origins": []any{"https://x.example/ui"}}}},
			[]finding{{"invalid_settings", "harness.settings.interfaces.dashboard.public_origins[0]"}}},
		{"enabled not boolean (S1)", "example.fabric.demo", obj{"interfaces": obj{"terminal": obj{"enabled": "yes"}}},
			[]finding{{"invalid_settings", "harness.settings.interfaces.terminal.enabled"}}},
		{"startup timeout above 75 (L3)", "example.fabric.demo", obj{"startup_timeout_seconds": 76},
			[]finding{{"invalid_settings", "harness.settings.startup_timeout_seconds"}}},
		{"adapter without interfaces", "test.none", obj{"interfaces": obj{"dashboard": obj{"port": 1}}},
			[]finding{{"interfaces_unsupported", "harness.settings.interfaces"}}},
		{"undeclared name, loose schema", "test.loose", obj{"interfaces": obj{"tui": obj{}}},
			[]finding{{"unknown_interface", "harness.settings.interfaces.tui"}, {"interfaces_schema_missing", "harness.settings.interfaces"}}},
		{"declared name, loose schema", "test.loose", obj{"interfaces": obj{"dashboard": obj{"port": 1}}},
			[]finding{{"interfaces_schema_missing", "harness.settings.interfaces"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := baseConfig(tt.adapter)
			cfg.Harness.Settings = tt.settings
			p, err := Resolve(cfg, Options{BaseDir: "/base", Catalog: cat})
			var got []finding
			if err != nil {
				got = findings(err)
			}
			slices.SortFunc(got, func(a, b finding) int { return strings.Compare(a.code+a.path, b.code+b.path) })
			want := slices.Clone(tt.want)
			slices.SortFunc(want, func(a, b finding) int { return strings.Compare(a.code+a.path, b.code+b.path) })
			if !slices.Equal(got, want) {
				t.Fatalf("findings %v, want %v (error: %v)", got, want, err)
			}
			if tt.want == nil && p == nil {
				t.Fatal("no plan")
			}
		})
	}
}

// TestInterfacesDeclaredInPlan: the plan carries the descriptor's
// interface declarations, so a consumer sees what the adapter supports.
func TestInterfacesDeclaredInPlan(t *testing.T) {
	generated, err := os.ReadFile("../../adapterkit/harnessui/testdata/demo.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Discover(catalog.Options{Bundled: []catalog.Bundled{{Name: "demo.json", Data: generated}}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(baseConfig("example.fabric.demo"), Options{BaseDir: "/base", Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	in, ok := p.AdapterDescriptor.Descriptor.Interface("dashboard")
	if !ok || in.Kind != contract.InterfaceHTTP || !in.Browser || in.Credential != contract.CredentialBearer {
		t.Fatalf("dashboard declaration = %+v, %v", in, ok)
	}
}
