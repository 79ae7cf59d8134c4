package codex_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/streamcheck"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestLiveInvokeStream: through InvokeStream, Codex's tool call and its
// text deltas reach the consumer while the turn runs (time-stamped), in
// order, and the result's output is the concatenated stream.
func TestLiveInvokeStream(t *testing.T) {
	l := newLive(t, &modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Contains: "STREAM_TOOL"}, Reply: modelstub.Reply{ToolCall: &modelstub.ToolCall{Command: "echo streamed-tool-ran"}}},
		{Match: modelstub.Match{Contains: "STREAM_TOOL"}, Reply: modelstub.Reply{Text: "Streaming the answer in several parts for the consumer.", Chunks: 6, IntervalMS: 150}},
	}})
	sandbox := "workspace-write"
	if _, err := exec.LookPath("bwrap"); err != nil {
		sandbox = "danger-full-access"
	}
	rt := l.Start(l.config(map[string]any{"sandbox": sandbox}, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := rt.InvokeStream(ctx, contract.RunRequest{Input: "STREAM_TOOL please"})
	if err != nil {
		t.Fatal(err)
	}
	rec := streamcheck.Record(t, ctx, s)
	if rec.Result.Status != contract.StatusSucceeded {
		t.Fatalf("status %s, error %+v", rec.Result.Status, rec.Result.Error)
	}
	rec.InOrder(t)
	rec.ArrivedBeforeEnd(t, "tool_call", 500*time.Millisecond)
	rec.ArrivedBeforeEnd(t, "tool_result", 500*time.Millisecond)
	rec.ArrivedBeforeEnd(t, "output_delta", 300*time.Millisecond)
	if rec.Text() != rec.Result.Output {
		t.Fatalf("streamed text %q, result output %q", rec.Text(), rec.Result.Output)
	}
	l.CheckOffline()
}
