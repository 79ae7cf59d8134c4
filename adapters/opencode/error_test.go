//go:build linux

package opencode_test

import (
	"context"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapters/opencode"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestLiveModelError: an endpoint error fails the turn with model_error,
// and so does the next turn on the same session (neither hangs), and a
// good turn after them succeeds.
func TestLiveModelError(t *testing.T) {
	livetest.Short(t, "the real opencode server from harnesses/opencode")
	l := newLive(t, &modelstub.Script{Rules: []modelstub.Rule{
		{Name: "fail", Match: modelstub.Match{Contains: "FAIL_QUESTION"}, Reply: modelstub.Reply{Error: &modelstub.ErrorReply{Status: 400, Message: "scripted bad request", Headers: map[string]string{"x-should-retry": "false"}}}},
	}, Default: &modelstub.Reply{Text: "fine"}})
	rt := l.Start(l.config(nil))
	for i, in := range []string{"FAIL_QUESTION one", "FAIL_QUESTION two", "GOOD_QUESTION"} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		t0 := time.Now()
		res, err := rt.Invoke(ctx, in)
		cancel()
		if err != nil {
			t.Fatalf("invoke %d: %v", i, err)
		}
		t.Logf("invoke %d: %s in %s (%+v)", i, res.Status, time.Since(t0).Round(time.Millisecond), res.Error)
		want := contract.StatusFailed
		if i == 2 {
			want = contract.StatusSucceeded
		}
		if res.Status != want {
			t.Errorf("invoke %d: status %s, want %s", i, res.Status, want)
		}
		if want == contract.StatusFailed && (res.Error == nil || res.Error.Code != opencode.CodeModelError) {
			t.Errorf("invoke %d: error %+v, want %s", i, res.Error, opencode.CodeModelError)
		}
	}
}
