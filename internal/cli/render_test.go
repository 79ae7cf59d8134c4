package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

func TestTurnRendererPlain(t *testing.T) {
	var out, errw bytes.Buffer
	r := newTurnRenderer(&out, &errw, true)
	for _, ev := range []contract.FabricEvent{
		{Kind: "output_delta", Message: "Let me "},
		{Kind: "output_delta", Message: "check."},
		{Kind: "tool_call", Message: "ls -la", Metadata: map[string]any{"item_id": "c1", "tool": "shell"}},
		{Kind: "tool_result", Message: "ls -la", Metadata: map[string]any{"item_id": "c1", "exit_code": float64(0)}},
		{Kind: "tool_call", Message: "Bash", Metadata: map[string]any{"id": "t2", "name": "Bash"}},
		{Kind: "tool_result", Message: "boom", Metadata: map[string]any{"tool_use_id": "t2", "is_error": true}},
		{Kind: "output_delta", Message: "Done"},
	} {
		r.event(ev)
	}
	in, outTok, cost := uint64(12), uint64(5), 0.0021
	r.finish(&contract.RunResult{Status: "succeeded", InvocationID: "invocation-1", Output: "Let me check.Done",
		Usage: &contract.RunUsage{InputTokens: &in, OutputTokens: &outTok, CostUSD: &cost}}, 1500*time.Millisecond)
	if got, want := out.String(), "Let me check.\nDone\n"; got != want {
		t.Fatalf("stdout %q, want %q", got, want)
	}
	want := "→ shell ls -la\n  ✓ shell ls -la (exit 0)\n→ Bash\n  ✗ Bash\n[succeeded] invocation-1 · 1.5s · tokens 12 in / 5 out · $0.0021\n"
	if errw.String() != want {
		t.Fatalf("stderr\n%s\nwant\n%s", errw.String(), want)
	}
	if strings.Contains(out.String()+errw.String(), "\x1b") {
		t.Fatal("escape sequences in plain output")
	}
}

// The result is authoritative: text the stream did not show is printed.
func TestTurnRendererCompletesFromResult(t *testing.T) {
	var out, errw bytes.Buffer
	r := newTurnRenderer(&out, &errw, true)
	r.event(contract.FabricEvent{Kind: "output_delta", Message: "par"})
	r.finish(&contract.RunResult{Status: "succeeded", InvocationID: "i", Output: "partial answer"}, time.Second)
	if out.String() != "partial answer\n" {
		t.Fatalf("%q", out.String())
	}
	out.Reset()
	r = newTurnRenderer(&out, &errw, true)
	r.event(contract.FabricEvent{Kind: "output_delta", Message: "draft"})
	r.finish(&contract.RunResult{Status: "failed", InvocationID: "i", Output: "final", Error: &contract.ErrorInfo{Code: "x", Message: "bad"}}, time.Second)
	if out.String() != "draft\nfinal\n" || !strings.HasSuffix(errw.String(), "· x: bad\n") {
		t.Fatalf("%q %q", out.String(), errw.String())
	}
}
