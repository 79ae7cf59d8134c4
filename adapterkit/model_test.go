package adapterkit_test

import (
	"errors"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
)

func TestModel(t *testing.T) {
	m := func(model string) contract.AgentModel { return contract.AgentModel{Provider: "p", Model: model} }
	for _, tc := range []struct {
		name      string
		models    map[string]contract.AgentModel
		role      string
		model     string
		ambiguous bool
	}{
		{"none", nil, "", "", true},
		{"the only role", map[string]contract.AgentModel{"fast": m("f")}, "fast", "f", false},
		{"default alone", map[string]contract.AgentModel{"default": m("d")}, "default", "d", false},
		{"default among several", map[string]contract.AgentModel{"a": m("a"), "default": m("d"), "z": m("z")}, "default", "d", false},
		{"several without default", map[string]contract.AgentModel{"a": m("a"), "b": m("b")}, "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			role, got, err := adapterkit.Model(contract.AgentConfig{Models: tc.models})
			if (err != nil) != tc.ambiguous {
				t.Fatalf("err %v, want ambiguous=%v", err, tc.ambiguous)
			}
			if role != tc.role || got.Model != tc.model {
				t.Fatalf("got %q/%q, want %q/%q", role, got.Model, tc.role, tc.model)
			}
		})
	}
}

// TestModelAgreesWithPlan: the kit's rule is the plan's, role for role.
func TestModelAgreesWithPlan(t *testing.T) {
	for _, roles := range [][]string{nil, {"a"}, {"default"}, {"a", "b"}, {"a", "default"}, {"b", "a", "c"}} {
		fc := contract.FabricConfig{Models: map[string]contract.ModelConfig{}}
		ac := contract.AgentConfig{Models: map[string]contract.AgentModel{}}
		for _, r := range roles {
			fc.Models[r] = contract.ModelConfig{}
			ac.Models[r] = contract.AgentModel{}
		}
		want, _, wantErr := fc.SelectedModel()
		got, _, err := adapterkit.Model(ac)
		if errors.Is(err, adapterkit.ErrNoModel) {
			err = nil // the plan's "no model" is ok=false, not an error
		}
		if got != want || (err != nil) != (wantErr != nil) {
			t.Errorf("%v: kit %q %v, plan %q %v", roles, got, err, want, wantErr)
		}
	}
}
