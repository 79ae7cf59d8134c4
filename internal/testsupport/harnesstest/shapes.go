package harnesstest

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
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
