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

func TestModelKey(t *testing.T) {
	t.Setenv("FABRIC_MODELKEY_SET", "sk-value")
	t.Setenv("FABRIC_MODELKEY_EMPTY", "")
	cases := []struct {
		env, want string
		bad       bool
	}{
		{"FABRIC_MODELKEY_SET", "sk-value", false},
		{"FABRIC_MODELKEY_EMPTY", "", true},
		{"FABRIC_MODELKEY_UNSET", "", true},
	}
	for _, c := range cases {
		got, err := ModelKey(c.env, "models.default.api_key_env")
		if got != c.want || (err != nil) != c.bad {
			t.Errorf("ModelKey(%s) = %q, %v", c.env, got, err)
		}
		if err != nil && (!strings.Contains(err.Error(), c.env) || !strings.Contains(err.Error(), "models.default.api_key_env")) {
			t.Errorf("the error does not name the variable and the field: %v", err)
		}
	}
}
