//go:build linux

package codex_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapters/codex"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestLiveModelErrorsClassify: each failure of the model endpoint, as Codex
// reports it (no retries), classifies with the descriptor's model_errors to
// the normalised model error code. The 401 is the fast path the batch
// runner relies on; the others record what Codex really returns.
func TestLiveModelErrorsClassify(t *testing.T) {
	var d contract.AdapterDescriptor
	if err := json.Unmarshal(codex.Descriptor, &d); err != nil {
		t.Fatal(err)
	}
	if err := d.ValidateModelErrors(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  modelstub.ErrorReply
		want string
	}{
		{"401", modelstub.ErrorReply{Status: 401, Message: "Incorrect API key provided"}, contract.ModelAuth},
		{"403", modelstub.ErrorReply{Status: 403, Message: "You are not allowed to use this model"}, contract.ModelAuth},
		{"404", modelstub.ErrorReply{Status: 404, Message: "The model `gpt-5.1-codex` does not exist or you do not have access to it."}, contract.ModelNotFound},
		{"429", modelstub.ErrorReply{Status: 429, RetryAfter: 1, Message: "Rate limit reached for requests"}, contract.ModelRateLimited},
		{"429 quota", modelstub.ErrorReply{Status: 429, Type: "insufficient_quota", Message: "You exceeded your current quota, please check your plan and billing details."}, contract.ModelQuotaExhausted},
		{"500", modelstub.ErrorReply{Status: 500, Message: "The server had an error while processing your request."}, contract.ModelServerError},
		{"503", modelstub.ErrorReply{Status: 503, Message: "The engine is currently overloaded, please try again later."}, contract.ModelOverloaded},
		{"context", modelstub.ErrorReply{Status: 400, Type: "context_length_exceeded", Message: "Your input exceeds the context window of this model. Please adjust your input and try again."}, contract.ModelContextExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := tt.err
			l := newLive(t, &modelstub.Script{Default: &modelstub.Reply{Error: &e}})
			rt := l.Start(l.config(noRetries(), nil))
			t0 := time.Now()
			res := l.Invoke(t, rt, "hello")
			took := time.Since(t0)
			if res.Status != contract.StatusFailed || res.Error == nil {
				t.Fatalf("result %s %+v, want failed", res.Status, res.Error)
			}
			got, retryable, ok := d.ClassifyModelError(res.Error)
			t.Logf("%s after %s (%d requests): code %q retryable %v message %q metadata %v -> %q retryable %v",
				tt.name, took.Round(time.Millisecond), len(l.Stub.Requests()), res.Error.Code, res.Error.Retryable, res.Error.Message, res.Error.Metadata, got, retryable)
			if !ok || got != tt.want {
				t.Errorf("classified %q (ok %v), want %q", got, ok, tt.want)
			}
		})
	}
}
