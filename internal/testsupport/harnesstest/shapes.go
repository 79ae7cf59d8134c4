package harnesstest

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/streamcheck"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

// The shapes several adapters' live tests share: the same checks, run
// against each harness's own runtime.

// ModelErrorCase is one failure of the model endpoint, as a provider
// words it, and the normalised model error code it must classify to.
type ModelErrorCase struct {
	Name  string
	Reply modelstub.ErrorReply
	Want  string
}

// ClassifyModelErrors checks that each case's failed turn classifies, with
// the model_errors of descriptor (an adapter descriptor document), to the
// case's code; the descriptor's model_errors must be valid. turn runs the
// case (in parallel with the others): a runtime whose endpoint fails with
// reply, one turn; it returns the turn's result and the endpoint's
// requests. It logs what the harness really returned.
func ClassifyModelErrors(t *testing.T, descriptor []byte, cases []ModelErrorCase,
	turn func(t *testing.T, reply modelstub.ErrorReply) (*contract.RunResult, []modelstub.Request)) {
	t.Helper()
	var d contract.AdapterDescriptor
	if err := json.Unmarshal(descriptor, &d); err != nil {
		t.Fatal(err)
	}
	if err := d.ValidateModelErrors(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			t0 := time.Now()
			res, reqs := turn(t, tt.Reply)
			took := time.Since(t0)
			if res.Status != contract.StatusFailed || res.Error == nil {
				t.Fatalf("result %s %+v, want failed", res.Status, res.Error)
			}
			got, retryable, ok := d.ClassifyModelError(res.Error)
			t.Logf("%s after %s (%d requests): code %q retryable %v message %q metadata %v -> %q retryable %v",
				tt.Name, took.Round(time.Millisecond), len(reqs), res.Error.Code, res.Error.Retryable, res.Error.Message, res.Error.Metadata, got, retryable)
			if !ok || got != tt.Want {
				t.Errorf("classified %q (ok %v), want %q", got, ok, tt.Want)
			}
		})
	}
}

// StreamToolTurn runs input, a turn whose model calls a tool and then
// streams its answer in chunks at least 150 ms apart, through
// InvokeStream, and checks that the events arrive in order and while the
// turn runs (the tool call and its result at least 500 ms, the first text
// delta at least 300 ms before the end), and that the result's output is
// the streamed text.
func StreamToolTurn(t testing.TB, ctx context.Context, rt *fabric.Runtime, input string) {
	t.Helper()
	s, err := rt.InvokeStream(ctx, contract.RunRequest{Input: input})
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
}

// StopLeavesNothing waits (up to 5 s) until at least want processes carry
// root, the runtime's private directory, in their environment (the
// harness and what its commands detached), stops rt, and fails on a
// process left of the harness's group pgid, of members or of those
// processes, and on root left behind.
func StopLeavesNothing(t testing.TB, rt *fabric.Runtime, pgid int, members []int, root string, want int) {
	t.Helper()
	var mentioning []int
	for deadline := time.Now().Add(5 * time.Second); ; {
		if mentioning = testproc.Mentioning(root); len(mentioning) >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(mentioning) < want {
		t.Errorf("before stop, processes with the runtime's environment: %v; want %d (the harness and what it detached)", mentioning, want)
	}
	t.Logf("before stop: harness group %d %v; processes with the runtime's environment %v", pgid, members, mentioning)
	t0 := time.Now()
	if _, err := rt.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("stop took %s", time.Since(t0).Round(time.Millisecond))
	if left := testproc.Group(pgid); len(left) > 0 {
		t.Errorf("processes %v of the harness's group %d survived stop", left, pgid)
	}
	for _, p := range append(members, mentioning...) {
		if _, _, comm, ok := testproc.Stat(p); ok {
			t.Errorf("process %d (%s) survived stop", p, comm)
		}
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("private directory %s remains: %v", root, err)
	}
}

// SlowStreamScript is the endpoint CancelSlowStream needs: an input with
// SLOW_STREAM streams its answer in 20 chunks 500 ms apart, any other
// answers "quick".
func SlowStreamScript() *modelstub.Script {
	return &modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Contains: "SLOW_STREAM"}, Reply: modelstub.Reply{Text: strings.Repeat("slow ", 20), Chunks: 20, IntervalMS: 500}},
	}, Default: &modelstub.Reply{Text: "quick"}}
}

// CancelSlowStream cancels a turn of rt (whose rig r serves
// SlowStreamScript) at its first text delta, and checks that the result
// is cancelled within 2 s of the cancel, that the runtime stays active and
// that it takes the next turn.
func CancelSlowStream(t testing.TB, r *adaptertest.Rig, rt *fabric.Runtime) {
	t.Helper()
	res, took := CancelOnEvent(t, rt, "SLOW_STREAM please", "output_delta")
	t.Logf("cancel to result: %s", took.Round(time.Millisecond))
	if res.Status != contract.StatusCancelled || took > 2*time.Second {
		t.Fatalf("status %s after %s (error %+v), want cancelled within 2s", res.Status, took, res.Error)
	}
	if rt.State() != "active" {
		t.Fatalf("state after cancel %s", rt.State())
	}
	if res := r.Invoke(t, rt, "and now quickly"); res.Status != contract.StatusSucceeded || res.Output != "quick" {
		t.Fatalf("turn after cancel: %s %v %+v", res.Status, res.Output, res.Error)
	}
}
