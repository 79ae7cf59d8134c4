//go:build linux

package codex_test

import (
	"testing"

	"github.com/fabric-runtime/fabric/adapters/codex"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestLiveModelErrorsClassify: each failure of the model endpoint, as Codex
// reports it (no retries), classifies with the descriptor's model_errors to
// the normalised model error code. The 401 is the fast path the batch
// runner relies on; the others record what Codex really returns.
func TestLiveModelErrorsClassify(t *testing.T) {
	harnesstest.ClassifyModelErrors(t, codex.Descriptor(), []harnesstest.ModelErrorCase{
		{Name: "401", Reply: modelstub.ErrorReply{Status: 401, Message: "Incorrect API key provided"}, Want: contract.ModelAuth},
		{Name: "403", Reply: modelstub.ErrorReply{Status: 403, Message: "You are not allowed to use this model"}, Want: contract.ModelAuth},
		{Name: "404", Reply: modelstub.ErrorReply{Status: 404, Message: "The model `gpt-5.1-codex` does not exist or you do not have access to it."}, Want: contract.ModelNotFound},
		{Name: "429", Reply: modelstub.ErrorReply{Status: 429, RetryAfter: 1, Message: "Rate limit reached for requests"}, Want: contract.ModelRateLimited},
		{Name: "429 quota", Reply: modelstub.ErrorReply{Status: 429, Type: "insufficient_quota", Message: "You exceeded your current quota, please check your plan and billing details."}, Want: contract.ModelQuotaExhausted},
		{Name: "500", Reply: modelstub.ErrorReply{Status: 500, Message: "The server had an error while processing your request."}, Want: contract.ModelServerError},
		{Name: "503", Reply: modelstub.ErrorReply{Status: 503, Message: "The engine is currently overloaded, please try again later."}, Want: contract.ModelOverloaded},
		{Name: "context", Reply: modelstub.ErrorReply{Status: 400, Type: "context_length_exceeded", Message: "Your input exceeds the context window of this model. Please adjust your input and try again."}, Want: contract.ModelContextExceeded},
	}, func(t *testing.T, reply modelstub.ErrorReply) (*contract.RunResult, []modelstub.Request) {
		l := newLive(t, &modelstub.Script{Default: &modelstub.Reply{Error: &reply}})
		rt := l.Start(l.config(noRetries(), nil))
		return l.Invoke(t, rt, "hello"), l.Stub.Requests()
	})
}
