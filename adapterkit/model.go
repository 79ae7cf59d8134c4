package adapterkit

import (
	"errors"
	"fmt"

	"github.com/fabric-runtime/fabric/contract"
)

// ErrNoModel is Model's error for a config without models.
var ErrNoModel = errors.New("models: no model configured (models.default)")

// Model returns the model role a harness uses and that role's model, by
// the rule the plan applies (contract.FabricConfig.SelectedModel, whose
// answer the plan records as RunPlan.ModelRole): "default" when it is
// configured, else the only role. With no models the error is ErrNoModel
// (for a harness that can run without one); several roles without
// "default" are an error. Errors start with "models: ".
func Model(cfg contract.AgentConfig) (role string, m contract.AgentModel, err error) {
	if len(cfg.Models) == 0 {
		return "", m, ErrNoModel
	}
	roles := contract.FabricConfig{Models: make(map[string]contract.ModelConfig, len(cfg.Models))}
	for r := range cfg.Models {
		roles.Models[r] = contract.ModelConfig{}
	}
	role, _, err = roles.SelectedModel()
	if err != nil {
		return "", m, fmt.Errorf("models: %w", err)
	}
	return role, cfg.Models[role], nil
}
