package codex_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
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
	harnesstest.StreamToolTurn(t, ctx, rt, "STREAM_TOOL please")
	l.CheckOffline()
}
