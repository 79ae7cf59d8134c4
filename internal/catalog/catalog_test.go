package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

func desc(id string) string {
	return `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"` + id + `","adapter_kind":"process","runner":{"command":"node","script":"dist/cli.js"}}`
}

func write(t *testing.T, path, data string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDiscoveryOrderAndDuplicates(t *testing.T) {
	root := t.TempDir()
	prefix := filepath.Join(root, "prefix")
	installed := write(t, filepath.Join(prefix, "share/nemo-fabric/adapters/a/a.fabric-adapter.json"), desc("x.a"))
	write(t, filepath.Join(prefix, "share/nemo-fabric/adapters/b/b.fabric-adapter.json"), desc("x.b"))
	nm := filepath.Join(root, "node_modules")
	pkgDesc := write(t, filepath.Join(nm, "some-pkg/pi.fabric-adapter.json"), desc("x.pi"))
	write(t, filepath.Join(nm, "@scope/pkg/share/nemo-fabric/adapters/s/s.fabric-adapter.json"), desc("x.s"))
	write(t, filepath.Join(nm, "plain/package.json"), `{}`)
	base := filepath.Join(root, "base")
	baseDesc := write(t, filepath.Join(base, "adapters/a.fabric-adapter.json"), desc("x.a"))
	local := write(t, filepath.Join(root, "local/mine.fabric-adapter.json"), desc("x.b"))

	cat, err := Discover(Options{
		Bundled:           []Bundled{{Name: "bundled.json", Data: []byte(desc("x.bundled"))}, {Name: "a.json", Data: []byte(desc("x.a"))}},
		InstalledPrefixes: []string{prefix},
		NodeModules:       []string{nm},
		BaseDir:           base,
		LocalPaths:        []string{local},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ path, source string }{
		"x.bundled": {"bundled:bundled.json", contract.SourceBundled},
		"x.a":       {baseDesc, contract.SourceBaseDir},
		"x.b":       {local, contract.SourceLocal},
		"x.pi":      {pkgDesc, contract.SourceInstalled},
		"x.s":       {filepath.Join(nm, "@scope/pkg/share/nemo-fabric/adapters/s/s.fabric-adapter.json"), contract.SourceInstalled},
	}
	if got := strings.Join(cat.IDs(), ","); got != "x.a,x.b,x.bundled,x.pi,x.s" {
		t.Fatalf("ids = %s", got)
	}
	for id, w := range want {
		e, ok := cat.Lookup(id)
		if !ok || e.Path != w.path || e.Source != w.source {
			t.Errorf("%s: got %+v, want %+v", id, e, w)
		}
	}
	if e, _ := cat.Lookup("x.pi"); e.Root != filepath.Join(nm, "some-pkg") {
		t.Errorf("root of package descriptor = %s", e.Root)
	}
	var dups []string
	for _, d := range cat.Diagnostics() {
		if d.Code == "duplicate_adapter_id" {
			dups = append(dups, d.Message)
		}
	}
	// x.a: bundled -> installed -> base_dir (2 replacements); x.b: installed -> local.
	if len(dups) != 3 {
		t.Fatalf("duplicate diagnostics = %v", dups)
	}
	if !strings.Contains(dups[0], "bundled:a.json") || !strings.Contains(dups[0], installed) {
		t.Errorf("duplicate message must name both paths: %s", dups[0])
	}
}

func TestInvalidDescriptorInScannedDirIsDiagnostic(t *testing.T) {
	base := t.TempDir()
	write(t, filepath.Join(base, "adapters/bad.fabric-adapter.json"), `{"contract_version":"fabric.adapter/v9","adapter_id":"x","adapter_kind":"process"}`)
	write(t, filepath.Join(base, "adapters/good.fabric-adapter.json"), desc("x.good"))
	cat, err := Discover(Options{BaseDir: base})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cat.Lookup("x.good"); !ok {
		t.Fatal("good descriptor missing")
	}
	d := cat.Diagnostics()
	if len(d) != 1 || d[0].Code != "invalid_descriptor" || !strings.Contains(d[0].Message, "contract_version") {
		t.Fatalf("diagnostics = %+v", d)
	}
}

func TestMissingLocalPathIsConfigError(t *testing.T) {
	_, err := Discover(Options{LocalPaths: []string{"/nonexistent/x.fabric-adapter.json"}})
	var ce *contract.ConfigError
	if !errors.As(err, &ce) || ce.Code != "discovery_path_not_found" || ce.Path != "discovery.local_paths[0]" {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadDescriptorRules(t *testing.T) {
	tests := []struct {
		name, doc, field string // field "" = valid
	}{
		{"v1alpha2", desc("a"), ""},
		{"v1alpha1 with harness", `{"contract_version":"fabric.adapter/v1alpha1","adapter_id":"a","harness":"h","adapter_kind":"python","runner":{"module":"m"}}`, ""},
		{"v1alpha1 without harness", `{"contract_version":"fabric.adapter/v1alpha1","adapter_id":"a","adapter_kind":"python"}`, "harness"},
		{"missing version", `{"adapter_id":"a","adapter_kind":"process"}`, "contract_version"},
		{"blank id", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":" ","adapter_kind":"process"}`, "adapter_id"},
		{"bad kind", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"docker"}`, "adapter_kind"},
		{"unknown accept", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","config":{"accepts":["models","teleport"]}}`, "config.accepts[1]"},
		{"coarse accept in v1alpha2", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","config":{"accepts":["tools"]}}`, "config.accepts[0]"},
		{"bad mode", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","config":{"system_instruction_modes":["prepend"]}}`, "config.system_instruction_modes[0]"},
		{"wrong type", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","config":{"accepts":"models"}}`, "config.accepts"},
		{"duplicate key", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_id":"b","adapter_kind":"process"}`, "-"},
		{"not an object", `[1]`, "-"},
		{"remote ref refused", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","settings_schema":{"$ref":"https://example.com/s.json"}}`, "settings_schema"},
		{"file ref refused", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","settings_schema":{"$ref":"file:///etc/passwd"}}`, "settings_schema"},
		{"local ref ok", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","settings_schema":{"$defs":{"p":{"type":"integer"}},"type":"object","properties":{"x":{"$ref":"#/$defs/p"}}}}`, ""},
		{"invalid schema", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","model_schema":{"type":"objekt"}}`, "model_schema"},
		{"unknown extension point", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","extension_schemas":{"nope":{}}}`, "extension_schemas.nope"},
		{"model error rules", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","model_errors":[{"code":"x","normalized":"model_auth"},{"message":"rate.?limit","normalized":"model_rate_limited","retryable":true}]}`, ""},
		{"model error rule matching nothing", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","model_errors":[{"code":"x","normalized":"model_auth"},{"normalized":"model_auth"}]}`, "model_errors[1]"},
		{"model error rule bad code", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","model_errors":[{"code":"x","normalized":"model_sad"}]}`, "model_errors[0].normalized"},
		{"model error rule bad regexp", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","model_errors":[{"code":"x","normalized":"model_auth"},{"code":"y","normalized":"model_auth"},{"message":"rate(limit","normalized":"model_rate_limited"}]}`, "model_errors[2].message"},
		{"unknown telemetry provider", `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","telemetry":{"providers":{"x":{}}}}`, "telemetry.providers.x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := LoadDescriptor([]byte(tt.doc), "d.json")
			if tt.field == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if e.Descriptor.AdapterID == "" {
					t.Fatal("empty entry")
				}
				return
			}
			if err == nil {
				t.Fatal("want error")
			}
			var de *DescriptorError
			if !errors.As(err, &de) {
				t.Fatalf("want DescriptorError, got %T %v", err, err)
			}
			if tt.field != "-" && de.Field != tt.field {
				t.Fatalf("field = %q, want %q (%v)", de.Field, tt.field, err)
			}
		})
	}
}

func TestRemoteRefErrorMentionsRefusal(t *testing.T) {
	_, err := CompileSchema("x", []byte(`{"$ref":"https://example.com/s.json"}`))
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v", err)
	}
}

func TestValidateViolationPaths(t *testing.T) {
	s, err := CompileSchema("s", []byte(`{"type":"object","properties":{"list":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer","minimum":3}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	v := s.Validate(map[string]any{"list": []any{map[string]any{"n": 5}, map[string]any{"n": 1}}})
	if len(v) != 1 || v[0].Path("harness.settings") != "harness.settings.list[1].n" {
		t.Fatalf("violations = %+v", v)
	}
	if v[0].Message == "" {
		t.Fatal("empty message")
	}
}

func FuzzLoadDescriptor(f *testing.F) {
	f.Add([]byte(desc("a")))
	f.Add([]byte(`{"contract_version":"fabric.adapter/v1alpha1","adapter_id":"a","harness":"h","adapter_kind":"python"}`))
	f.Add([]byte(`{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"a","adapter_kind":"process","settings_schema":{"type":"object","properties":{"x":{"$ref":"#/$defs/y"}},"$defs":{"y":{"type":"string"}}}}`))
	if data, err := os.ReadFile("../../adapters/scripted/packages/fabric.scripted/scripted.fabric-adapter.json"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := LoadDescriptor(data, "fuzz.json")
		if err != nil {
			var de *DescriptorError
			if !errors.As(err, &de) {
				t.Fatalf("error is not a DescriptorError: %T %v", err, err)
			}
			return
		}
		if e.Descriptor.AdapterID == "" || e.Settings == nil && len(e.Descriptor.SettingsSchema) > 0 && string(e.Descriptor.SettingsSchema) != "null" {
			t.Fatalf("inconsistent entry: %+v", e.Descriptor)
		}
		_ = e.Resolved()
	})
}

// A bundled descriptor is loaded once per process; every catalog gets its
// own entry, with the Root of its own options, also when planned at once.
func TestBundledLoadedOnceEntriesOwn(t *testing.T) {
	data := []byte(desc("x.shared"))
	done := make(chan *Entry, 8)
	for i := range 8 {
		go func() {
			c, err := Discover(Options{Bundled: []Bundled{{Name: "shared.json", Data: data, Root: "/r" + string(rune('0'+i))}}})
			if err != nil {
				t.Error(err)
				done <- nil
				return
			}
			e, _ := c.Lookup("x.shared")
			done <- e
		}()
	}
	roots := map[string]bool{}
	seen := map[*Entry]bool{}
	for range 8 {
		e := <-done
		if e == nil {
			continue
		}
		if seen[e] {
			t.Fatal("two catalogs share one entry")
		}
		seen[e] = true
		roots[e.Root] = true
		if e.Source != contract.SourceBundled || e.Path != "bundled:shared.json" {
			t.Errorf("entry %+v", e)
		}
	}
	if len(roots) != 8 {
		t.Errorf("roots %v: each catalog's entry has its own", roots)
	}
}
