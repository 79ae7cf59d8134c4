package adapterkit

import (
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

func TestInputText(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, ""}, {"x", "x"}, {map[string]any{"a": 1}, `{"a":1}`}, {[]any{1, "b"}, `[1,"b"]`}, {3.5, "3.5"},
	} {
		if got := InputText(tc.in); got != tc.want {
			t.Errorf("InputText(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDecodeSettings(t *testing.T) {
	type settings struct {
		Mode string `json:"mode"`
	}
	var s settings
	if err := DecodeSettings(&contract.AgentHarnessConfig{Settings: map[string]any{"mode": "x"}}, &s); err != nil || s.Mode != "x" {
		t.Fatalf("%+v %v", s, err)
	}
	err := DecodeSettings(&contract.AgentHarnessConfig{Settings: map[string]any{"nope": 1}}, &s)
	if err == nil || !strings.HasPrefix(err.Error(), "settings: ") || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown field: %v", err)
	}
	if err := DecodeSettings(nil, &s); err != nil {
		t.Fatal(err)
	}
}
