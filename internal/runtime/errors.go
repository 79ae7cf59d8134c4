package runtime

import (
	"errors"
	"fmt"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/host"
)

// State error codes.
const (
	CodeRuntimeBusy      = "runtime_busy"
	CodeRuntimeStopped   = "runtime_stopped"
	CodeRuntimeFailed    = "runtime_failed"
	CodeRuntimeStarting  = "runtime_starting"
	CodeHandleMismatch   = "runtime_handle_mismatch"
	CodeCancelled        = "cancelled"
	CodeArtifactRejected = "artifact_rejected"
	CodeInvalidRequest   = "invalid_request"
)

func stateErr(code, msg string) error {
	return &contract.StateError{Failure: contract.Failure{Stage: contract.StageInvoke, Code: code, Message: msg, Retryable: code == CodeRuntimeBusy}}
}

// runtimeErr converts a host failure into a RuntimeError carrying the
// scrubbed diagnostics.
func runtimeErr(stage string, err error) error {
	var he *host.Error
	if errors.As(err, &he) {
		md := map[string]any{}
		for k, v := range he.Metadata {
			md[k] = v
		}
		if he.Diagnostics != "" {
			md["diagnostics"] = he.Diagnostics
		}
		if len(md) == 0 {
			md = nil
		}
		return &contract.RuntimeError{Failure: contract.Failure{Stage: stage, Code: he.Code, Message: he.Message, Retryable: he.Retryable, Metadata: md, Err: he.Err}}
	}
	return &contract.RuntimeError{Failure: contract.Failure{Stage: stage, Code: "runtime_error", Message: fmt.Sprint(err), Err: err}}
}

// errorInfo turns any error into the ErrorInfo of a result.
func errorInfo(stage string, err error) *contract.ErrorInfo {
	var re *contract.RuntimeError
	if errors.As(err, &re) {
		return re.Info()
	}
	return &contract.ErrorInfo{Stage: stage, Code: "runtime_error", Message: err.Error()}
}

// CheckPlan fails with a *contract.ConfigError (invalid_plan) at stage
// unless p is a plan a host can be started from.
func CheckPlan(p *contract.RunPlan, stage string) error {
	if p == nil || p.AdapterDescriptor == nil {
		return &contract.ConfigError{Failure: contract.Failure{Stage: stage, Code: "invalid_plan", Message: "the plan has no adapter descriptor"}}
	}
	return nil
}
