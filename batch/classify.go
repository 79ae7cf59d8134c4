package batch

import (
	"context"
	"strings"

	"github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
)

// Model errors that retrying cannot fix: they open the quota key's
// circuit (no more trials start on it) instead of being retried.
var circuitCodes = map[string]bool{
	contract.ModelQuotaExhausted: true,
	contract.ModelAuth:           true,
	contract.ModelNotFound:       true,
}

var notRetryable = map[string]bool{
	contract.ModelQuotaExhausted:  true,
	contract.ModelAuth:            true,
	contract.ModelNotFound:        true,
	contract.ModelContextExceeded: true,
}

// classify gives a failed run its error class from Fabric's codes: the
// stage says where it failed, and the adapter's descriptor says which of
// its errors are the model's (normalised to model_* codes). Nothing here
// knows any harness.
func (r *Runner) classify(cfg *agentConfig, err error, res *contract.RunResult) *contract.TrialError {
	var info *contract.ErrorInfo
	if res != nil && res.Error != nil {
		info = res.Error
	} else if i := fabric.ErrorInfo(err); i != nil {
		info = i
	}
	if info == nil {
		msg := "the run failed"
		if err != nil {
			msg = err.Error()
		}
		return &contract.TrialError{Class: contract.ErrorClassFabric, Code: "fabric_error", Message: msg, Retryable: false}
	}
	te := &contract.TrialError{Code: info.Code, Stage: info.Stage, Message: info.Message, Retryable: info.Retryable}
	if v, ok := info.Metadata["retry_after_seconds"].(float64); ok {
		te.RetryAfterSeconds = v
	}
	if code, retryable, ok := r.modelError(cfg, info); ok {
		te.Class, te.Code, te.Retryable = contract.ErrorClassModel, code, retryable && !notRetryable[code]
		return te
	}
	switch info.Stage {
	case contract.StageConfig, contract.StagePlan, contract.StageArtifact:
		te.Class = contract.ErrorClassFabric
	case contract.StagePrepare:
		te.Class = contract.ErrorClassSetup
	default:
		te.Class = contract.ErrorClassHarness
		te.Retryable = true
	}
	return te
}

// modelError asks the config's adapter descriptor whether info is a model
// error; without a descriptor rule, a code already normalised (model_*)
// is one.
func (r *Runner) modelError(cfg *agentConfig, info *contract.ErrorInfo) (string, bool, bool) {
	if code, retryable, ok := r.descriptor(cfg).ClassifyModelError(info); ok {
		return code, retryable, true
	}
	if strings.HasPrefix(info.Code, "model_") {
		return info.Code, info.Retryable, true
	}
	return "", false, false
}

// descriptor is the config's adapter descriptor, from a plan made once.
func (r *Runner) descriptor(cfg *agentConfig) *contract.AdapterDescriptor {
	cfg.planOnce.Do(func() {
		p, err := r.client.Plan(context.Background(), cfg.loaded)
		if err == nil && p.AdapterDescriptor != nil {
			d := p.AdapterDescriptor.Descriptor
			cfg.desc = &d
		}
	})
	return cfg.desc
}

// isCircuit says whether an error stops the trials of its quota key.
func isCircuit(e *contract.TrialError) bool {
	return e != nil && e.Class == contract.ErrorClassModel && circuitCodes[e.Code]
}
