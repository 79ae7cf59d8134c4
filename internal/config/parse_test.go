package config_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/internal/config"
)

// TestDocumentErrors covers what is wrong with a document before its
// fields are looked at: syntax, duplicate keys, documents, top level,
// YAML features without a JSON meaning.
func TestDocumentErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		src  string
		want []finding
	}{
		{"yaml duplicate top-level", "a.yaml", head + "metadata: {name: b}\n",
			[]finding{{"duplicate_key", "metadata", 5}}},
		{"yaml duplicate nested", "a.yaml", "schema_version: fabric.agent/v1alpha1\nmetadata:\n  name: a\n  name: b\nruntime: {}\n",
			[]finding{{"duplicate_key", "metadata.name", 4}}},
		{"yaml duplicate in flow", "a.yaml", head + "harness: {adapter_id: a, adapter_id: b}\n",
			[]finding{{"duplicate_key", "harness.adapter_id", 5}}},
		{"yaml duplicates and field errors", "a.yaml", "schema_version: x\nmetadata: {name: a}\nruntime: {}\nruntime: {}\n",
			[]finding{{"duplicate_key", "runtime", 4}, {"unsupported_schema_version", "schema_version", 1}}},
		{"yaml quoted key collides", "a.yaml", head + "'runtime': {}\n",
			[]finding{{"duplicate_key", "runtime", 5}}},
		{"json duplicate top-level", "a.json", "{\n\"schema_version\": \"fabric.agent/v1alpha1\",\n\"metadata\": {\"name\": \"a\"},\n\"runtime\": {},\n\"runtime\": {}\n}\n",
			[]finding{{"duplicate_key", "runtime", 5}}},
		{"json duplicate nested", "a.json", "{\"schema_version\": \"fabric.agent/v1alpha1\",\n\"metadata\": {\"name\": \"a\",\n  \"name\": \"b\"},\n\"runtime\": {}}",
			[]finding{{"duplicate_key", "metadata.name", 3}}},
		{"json duplicate in settings", "a.json", `{"schema_version": "fabric.agent/v1alpha1", "metadata": {"name": "a"}, "runtime": {}, "harness": {"adapter_id": "x", "settings": {"k": 1, "k": 2}}}`,
			[]finding{{"duplicate_key", "harness.settings.k", 1}}},
		{"json field error line", "a.json", "{\n  \"schema_version\": \"fabric.agent/v1alpha1\",\n  \"metadata\": {\"name\": \"a\"},\n  \"runtime\": {\n    \"max_turns\": 0\n  }\n}\n",
			[]finding{{"invalid_value", "runtime.max_turns", 5}}},
		{"json wrong type", "a.json", `{"schema_version": "fabric.agent/v1alpha1", "metadata": {"name": "a"}, "runtime": {}, "skills": {"paths": "x"}}`,
			[]finding{{"invalid_type", "skills.paths", 1}}},
		{"multiple documents", "a.yaml", head + "---\n" + head,
			[]finding{{"multiple_documents", "", 5}}},
		{"second document broken", "a.yaml", head + "---\n[\n",
			[]finding{{"config_syntax", "", 7}}},
		{"empty yaml", "a.yaml", "", []finding{{"invalid_type", "", 0}}},
		{"comments only", "a.yaml", "# nothing\n", []finding{{"invalid_type", "", 0}}},
		{"explicit null document", "a.yaml", "---\n", []finding{{"invalid_type", "", 2}}},
		{"empty json", "a.json", " \n", []finding{{"invalid_type", "", 0}}},
		{"top-level list", "a.yaml", "- a\n- b\n", []finding{{"invalid_type", "", 1}}},
		{"top-level scalar", "a.yaml", "hello\n", []finding{{"invalid_type", "", 1}}},
		{"top-level json array", "a.json", "[1]", []finding{{"invalid_type", "", 1}}},
		{"yaml syntax", "a.yaml", head + "harness: [a\n", []finding{{"config_syntax", "", 6}}},
		{"yaml bad indent", "a.yaml", "metadata:\n  name: a\n bad: b\n", []finding{{"config_syntax", "", 3}}},
		{"json trailing comma", "a.json", "{\n\"a\": 1,\n}\n", []finding{{"config_syntax", "", 3}}},
		{"json trailing data", "a.json", "{\"a\": 1}\n{\"b\": 2}\n", []finding{{"config_syntax", "", 2}}},
		{"json truncated", "a.json", "{\"a\": [1,\n", []finding{{"config_syntax", "", 2}}},
		{"json number out of range", "a.json", `{"schema_version": "fabric.agent/v1alpha1", "metadata": {"name": "a"}, "runtime": {}, "relay": {"n": 1e400}}`,
			[]finding{{"invalid_value", "relay.n", 1}}},
		{"yaml infinity", "a.yaml", head + "relay: {n: .inf}\n", []finding{{"invalid_value", "relay.n", 5}}},
		{"yaml nan", "a.yaml", head + "runtime2: .nan\n", []finding{{"invalid_value", "runtime2", 5}}},
		{"yaml merge key", "a.yaml", head + "base: &b {provider: p}\nmodels:\n  default:\n    <<: *b\n    model: m\n",
			[]finding{{"unsupported_yaml", "models.default", 8}, {"missing_field", "models.default.provider", 8}}},
		{"yaml complex key", "a.yaml", head + "relay:\n  ? [a, b]\n  : c\n", []finding{{"unsupported_yaml", "relay", 6}}},
		{"yaml alias cycle", "a.yaml", head + "relay: &r\n  self: *r\n", []finding{{"unsupported_yaml", "relay.self", 6}}},
		{"deep nesting", "a.json", strings.Repeat("[", 1001) + strings.Repeat("]", 1001), []finding{{"config_too_large", "", 1}}},
		{"deep yaml", "a.yaml", strings.Repeat("- ", 1001) + "x\n", []finding{{"config_too_large", "", 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tt.src), tt.file, config.Options{BaseDir: "/base"})
			if diff := cmp.Diff(tt.want, errorFindings(t, err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}

// aliasBomb is a "billion laughs" document: each level repeats the one
// before ten times.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("relay:\n  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 6; i++ {
		prev := "*l" + string(rune('0'+i-1))
		b.WriteString("  l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [")
		b.WriteString(strings.Repeat(prev+", ", 9) + prev + "]\n")
	}
	return b.String()
}

func TestAliasBomb(t *testing.T) {
	_, err := config.Parse([]byte(head+aliasBomb()), "a.yaml", config.Options{BaseDir: "/base"})
	errs := configErrors(t, err)
	if len(errs) != 1 || errs[0].Code != "config_too_large" || !strings.HasPrefix(errs[0].Path, "relay.l") {
		t.Errorf("got %v, want one config_too_large error below relay", err)
	}
}

func TestAliasesExpand(t *testing.T) {
	src := head + "models:\n  default: &m {provider: p, model: m}\n  reviewer: *m\n"
	l, err := config.Parse([]byte(src), "a.yaml", config.Options{BaseDir: "/base"})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Config.Models["reviewer"]; got.Provider != "p" || got.Model != "m" {
		t.Errorf("reviewer = %+v, want the aliased model", got)
	}
}

func TestYAMLScalars(t *testing.T) {
	src := head + "relay:\n  hex: 0x1F\n  exp: 1e3\n  yes: yes\n  on: true\n  date: 2001-01-01\n  none: ~\n"
	l, err := config.Parse([]byte(src), "a.yaml", config.Options{BaseDir: "/base"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"hex": 31.0, "exp": 1000.0, "yes": "yes", "on": true, "date": "2001-01-01", "none": nil}
	if diff := cmp.Diff(want, l.Config.Relay); diff != "" {
		t.Errorf("relay (-want +got):\n%s", diff)
	}
}

func TestFormatDetection(t *testing.T) {
	jsonDoc := `{"schema_version": "fabric.agent/v1alpha1", "metadata": {"name": "a"}, "runtime": {}}`
	tests := []struct {
		name, file, src string
		wantCode        string // "" = loads
	}{
		{"json by extension", "a.json", jsonDoc, ""},
		{"json by content", "", "  \n" + jsonDoc, ""},
		{"json by content, other extension", "agent.conf", "\xEF\xBB\xBF" + jsonDoc, ""},
		{"yaml by extension", "a.yml", head, ""},
		{"yaml by content", "", head, ""},
		// JSON is valid YAML, but a .json file is read as strict JSON.
		{"yaml in json file", "a.JSON", head, "config_syntax"},
		// With a .yaml name a JSON document is read as YAML, which also
		// rejects its duplicate keys.
		{"json in yaml file", "a.yaml", `{"a": 1, "a": 2}`, "duplicate_key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tt.src), tt.file, config.Options{BaseDir: "/base"})
			var got string
			if errs := configErrors(t, err); len(errs) > 0 {
				got = errs[0].Code
			}
			if got != tt.wantCode {
				t.Errorf("code = %q, want %q (error: %v)", got, tt.wantCode, err)
			}
		})
	}
}

func TestTooLarge(t *testing.T) {
	big := head + "relay:\n  pad: '" + strings.Repeat("x", config.MaxConfigSize) + "'\n"
	_, err := config.Parse([]byte(big), "big.yaml", config.Options{BaseDir: "/base"})
	if diff := cmp.Diff([]finding{{"config_too_large", "", 0}}, errorFindings(t, err)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	exact := head + "relay:\n  pad: '"
	exact += strings.Repeat("x", config.MaxConfigSize-len(exact)-2) + "'\n"
	if _, err := config.Parse([]byte(exact), "exact.yaml", config.Options{BaseDir: "/base"}); err != nil {
		t.Errorf("a config of exactly MaxConfigSize bytes: %v", err)
	}
}
