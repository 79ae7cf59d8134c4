package scripted

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
)

// TestSettingsFast: what settingsFast takes, it decodes as
// adapterkit.DecodeSettings does; what it declines is what it does not
// know exactly.
func TestSettingsFast(t *testing.T) {
	for _, c := range []struct {
		doc  string
		fast bool
	}{
		{`{"response":"ok"}`, true},
		{`{}`, true},
		{`{"response":null,"responses":["a",null,"c"],"mode":"slow_stream","fail_on_turn":2,"events":3,"event_interval_ms":0,"delay_ms":-0,"stderr":"e","service_token_env":"T","relay_records":1,"relay_stray":9007199254740992,"model_role":"r","max_steps":8,"tool_timeout_ms":30000}`, true},
		{`{"responses":[],"events":null,"mode":null}`, true},
		{`{"events":1.5}`, false},
		{`{"events":1e300}`, false},
		{`{"delay_ms":"1"}`, false},
		{`{"response":1}`, false},
		{`{"responses":"a"}`, false},
		{`{"responses":[1]}`, false},
		{`{"usage":{"input_tokens":1}}`, false},
		{`{"Response":"ok"}`, false},
		{`{"unknown":1}`, false},
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(c.doc), &m); err != nil {
			t.Fatal(err)
		}
		var fast Settings
		if got := settingsFast(m, &fast); got != c.fast {
			t.Errorf("settingsFast(%s) = %v, want %v", c.doc, got, c.fast)
			continue
		}
		if !c.fast {
			continue
		}
		var slow Settings
		if err := adapterkit.DecodeSettings(&contract.AgentHarnessConfig{Settings: m}, &slow); err != nil {
			t.Fatalf("%s: DecodeSettings: %v", c.doc, err)
		}
		if diff := cmp.Diff(slow, fast); diff != "" {
			t.Errorf("%s (-DecodeSettings +settingsFast):\n%s", c.doc, diff)
		}
	}
}

// TestSettingsFastKnowsEveryField: settingsFast takes every field of
// Settings but usage (left to DecodeSettings), so that a field added to
// Settings must be taught to it; until then a start that sets it decodes
// its settings with reflection again.
func TestSettingsFastKnowsEveryField(t *testing.T) {
	for f := range reflect.TypeFor[Settings]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "usage" {
			continue
		}
		var v any
		switch typ := f.Type; {
		case typ.Kind() == reflect.String || typ.Kind() == reflect.Pointer && typ.Elem().Kind() == reflect.String:
			v = "x"
		case typ.Kind() == reflect.Int || typ.Kind() == reflect.Pointer && typ.Elem().Kind() == reflect.Int:
			v = 2.0
		case typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.String:
			v = []any{"x"}
		default:
			t.Fatalf("settings field %s has a type this test does not know: %v", name, typ)
		}
		var set Settings
		if !settingsFast(map[string]any{name: v}, &set) {
			t.Errorf("settingsFast declines %s", name)
		}
	}
}
