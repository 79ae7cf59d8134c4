//go:build linux

package claude_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapters/claude"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestLiveModelErrorsClassify: each failure of the model endpoint, as
// Claude Code reports it (max_retries 0), classifies with the descriptor's
// model_errors to the normalised model error code. The 401 is the fast path
// the batch runner relies on; the others record what Claude Code really
// returns.
func TestLiveModelErrorsClassify(t *testing.T) {
	var d contract.AdapterDescriptor
	if err := json.Unmarshal(claude.Descriptor, &d); err != nil {
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
		{"401", modelstub.ErrorReply{Status: 401, Message: "invalid x-api-key"}, contract.ModelAuth},
		{"403", modelstub.ErrorReply{Status: 403, Message: "Your API key does not have permission to use the specified resource."}, contract.ModelAuth},
		{"404", modelstub.ErrorReply{Status: 404, Message: "model: claude-fabric-test"}, contract.ModelNotFound},
		{"429", modelstub.ErrorReply{Status: 429, RetryAfter: 1, Message: "Number of request tokens has exceeded your per-minute rate limit"}, contract.ModelRateLimited},
		{"400 credit", modelstub.ErrorReply{Status: 400, Message: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}, contract.ModelQuotaExhausted},
		{"500", modelstub.ErrorReply{Status: 500, Message: "Internal server error"}, contract.ModelServerError},
		{"529", modelstub.ErrorReply{Status: 529, Message: "Overloaded"}, contract.ModelOverloaded},
		{"context", modelstub.ErrorReply{Status: 400, Message: "prompt is too long: 215000 tokens > 200000 maximum"}, contract.ModelContextExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := newLive(t)
			e := tt.err
			if err := l.Stub.SetScript(&modelstub.Script{Default: &modelstub.Reply{Error: &e}}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			rt := l.Start(l.config(map[string]any{"max_retries": 0}, nil))
			t0 := time.Now()
			res, err := rt.Invoke(ctx, "hello")
			took := time.Since(t0)
			if err != nil {
				t.Fatal(err)
			}
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
