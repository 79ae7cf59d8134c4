//go:build linux

package claude_test

import (
	"context"
	"testing"

	"github.com/fabric-runtime/fabric/adapters/claude"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestLiveModelErrorsClassify: each failure of the model endpoint, as
// Claude Code reports it (max_retries 0), classifies with the descriptor's
// model_errors to the normalised model error code. The 401 is the fast path
// the batch runner relies on; the others record what Claude Code really
// returns.
func TestLiveModelErrorsClassify(t *testing.T) {
	harnesstest.ClassifyModelErrors(t, claude.Descriptor(), []harnesstest.ModelErrorCase{
		{Name: "401", Reply: modelstub.ErrorReply{Status: 401, Message: "invalid x-api-key"}, Want: contract.ModelAuth},
		{Name: "403", Reply: modelstub.ErrorReply{Status: 403, Message: "Your API key does not have permission to use the specified resource."}, Want: contract.ModelAuth},
		{Name: "404", Reply: modelstub.ErrorReply{Status: 404, Message: "model: claude-fabric-test"}, Want: contract.ModelNotFound},
		{Name: "429", Reply: modelstub.ErrorReply{Status: 429, RetryAfter: 1, Message: "Number of request tokens has exceeded your per-minute rate limit"}, Want: contract.ModelRateLimited},
		{Name: "400 credit", Reply: modelstub.ErrorReply{Status: 400, Message: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}, Want: contract.ModelQuotaExhausted},
		{Name: "500", Reply: modelstub.ErrorReply{Status: 500, Message: "Internal server error"}, Want: contract.ModelServerError},
		{Name: "529", Reply: modelstub.ErrorReply{Status: 529, Message: "Overloaded"}, Want: contract.ModelOverloaded},
		{Name: "context", Reply: modelstub.ErrorReply{Status: 400, Message: "prompt is too long: 215000 tokens > 200000 maximum"}, Want: contract.ModelContextExceeded},
	}, func(t *testing.T, reply modelstub.ErrorReply) (*contract.RunResult, []modelstub.Request) {
		l := newLive(t)
		if err := l.Stub.SetScript(&modelstub.Script{Default: &modelstub.Reply{Error: &reply}}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		rt := l.Start(l.config(map[string]any{"max_retries": 0}, nil))
		res, err := rt.Invoke(ctx, "hello")
		if err != nil {
			t.Fatal(err)
		}
		return res, l.Stub.Requests()
	})
}
