package claude_test

import (
	"context"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/streamcheck"
)

// TestLiveInvokeStream: through InvokeStream, Claude Code's tool call and
// its text deltas reach the consumer while the turn runs (time-stamped),
// in order, and the result's output is the concatenated stream.
func TestLiveInvokeStream(t *testing.T) {
	l := newLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	rt := l.Start(l.config(map[string]any{"permission_mode": "bypassPermissions"}, nil))
	s, err := rt.InvokeStream(ctx, contract.RunRequest{Input: "STUBSTREAM: run the tool, then answer"})
	if err != nil {
		t.Fatal(err)
	}
	rec := streamcheck.Record(t, ctx, s)
	if rec.Result.Status != contract.StatusSucceeded {
		t.Fatalf("status %s, error %+v", rec.Result.Status, rec.Result.Error)
	}
	rec.InOrder(t)
	// The answer streams in 6 chunks 150 ms apart: its first delta is
	// at least ~0.5 s ahead of the end; the tool call comes before that.
	rec.ArrivedBeforeEnd(t, "tool_call", 500*time.Millisecond)
	rec.ArrivedBeforeEnd(t, "tool_result", 500*time.Millisecond)
	rec.ArrivedBeforeEnd(t, "output_delta", 300*time.Millisecond)
	if rec.Text() != rec.Result.Output {
		t.Fatalf("streamed text %q, result output %q", rec.Text(), rec.Result.Output)
	}
}
