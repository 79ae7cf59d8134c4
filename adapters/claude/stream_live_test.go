package claude_test

import (
	"context"
	"testing"

	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
)

// TestLiveInvokeStream: through InvokeStream, Claude Code's tool call and
// its text deltas reach the consumer while the turn runs (time-stamped),
// in order, and the result's output is the concatenated stream.
func TestLiveInvokeStream(t *testing.T) {
	l := newLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	rt := l.Start(l.config(map[string]any{"permission_mode": "bypassPermissions"}, nil))
	harnesstest.StreamToolTurn(t, ctx, rt, "STUBSTREAM: run the tool, then answer")
}
