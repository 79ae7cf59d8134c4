package fabric_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
)

func startScripted(t *testing.T, settings string) *fabric.Runtime {
	t.Helper()
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(t.TempDir()))
	cfg, err := client.ParseConfig([]byte(`
schema_version: fabric.agent/v1alpha1
metadata: {name: stream}
runtime: {}
harness:
  adapter_id: fabric.scripted
  settings: `+settings+`
`), "agent.yaml", fabric.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := client.StartRuntime(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Stop(context.Background()) })
	return rt
}

func streamStats(t *testing.T, res *contract.RunResult) fabric.StreamStats {
	t.Helper()
	st, ok := res.Metadata["stream"].(fabric.StreamStats)
	if !ok {
		t.Fatalf("no stream stats in %v", res.Metadata)
	}
	return st
}

// TestInvokeStream100kSlowConsumer: 100,000 adapter events through a small
// window to a slow consumer: nothing lost, order holds, the window stays
// within its bounds, and the result's output is the concatenated stream.
func TestInvokeStream100kSlowConsumer(t *testing.T) {
	const n = 100_000
	answer := strings.Repeat("abcdefghij", n/10)
	rt := startScripted(t, `{response: "`+answer+`", events: 100000}`)
	ctx := context.Background()
	s, err := rt.InvokeStream(ctx, contract.RunRequest{Input: "go"}, fabric.WithStreamWindow(256, 64<<10))
	if err != nil {
		t.Fatal(err)
	}
	// A second invocation while this one runs is refused at once.
	if _, err := rt.InvokeStream(ctx, contract.RunRequest{Input: "again"}); !isState(err, "runtime_busy") {
		t.Fatalf("concurrent InvokeStream: %v", err)
	}
	var text strings.Builder
	var deltas int
	var last uint64
	kinds := []string{}
	for rec, err := range s.Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Seq <= last || rec.Dropped != 0 {
			t.Fatalf("seq %d after %d, dropped %d", rec.Seq, last, rec.Dropped)
		}
		last = rec.Seq
		if rec.Event.Kind == "output_delta" {
			if idx, _ := rec.Event.Metadata["index"].(float64); int(idx) != deltas {
				t.Fatalf("delta %d has index %v", deltas, rec.Event.Metadata["index"])
			}
			deltas++
			text.WriteString(rec.Event.Message)
			if deltas%5000 == 0 {
				time.Sleep(2 * time.Millisecond) // a slow consumer
			}
		} else {
			kinds = append(kinds, rec.Event.Kind)
		}
	}
	res, err := s.Result(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "succeeded" || deltas != n || text.String() != res.Output {
		t.Fatalf("status %s, %d deltas, concatenation matches output: %t", res.Status, deltas, text.String() == res.Output)
	}
	st := streamStats(t, res)
	if st.Dropped != 0 || st.PeakRecords > 256 || st.PeakBytes > 64<<10 {
		t.Fatalf("stats %+v", st)
	}
	if len(kinds) < 2 || kinds[len(kinds)-1] != "invocation_end" {
		t.Fatalf("lifecycle records %v", kinds)
	}
	// The result keeps lifecycle events only; the stream is the record.
	for _, ev := range res.Events {
		if ev.Kind == "output_delta" {
			t.Fatal("streamed result carries adapter events")
		}
	}
}

// TestStreamResume: a consumer disconnects mid-stream and resumes from the
// last sequence number it saw: exactly the missing records, none twice.
// Resuming from an offset older than the window reports the gap.
func TestStreamResume(t *testing.T) {
	rt := startScripted(t, `{response: "`+strings.Repeat("z", 3000)+`", events: 3000}`)
	ctx := context.Background()
	s, err := rt.InvokeStream(ctx, contract.RunRequest{Input: "go"}, fabric.WithStreamWindow(1000, 0))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for range 500 {
		rec, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen[rec.Seq] = true
	}
	offset := s.LastSeq()
	s.Close()
	// While nobody is attached the turn goes on (never blocked).
	res, err := s.Result(ctx)
	if err != nil || res.Status != "succeeded" {
		t.Fatalf("result after detach: %+v %v", res, err)
	}
	st := streamStats(t, res)
	r, err := rt.ResumeStream(s.InvocationID(), offset)
	if err != nil {
		t.Fatal(err)
	}
	var got, dropped uint64
	first := true
	for rec, err := range r.Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if seen[rec.Seq] {
			t.Fatalf("record %d delivered twice", rec.Seq)
		}
		if first && rec.Seq != offset+1+rec.Dropped {
			t.Fatalf("resumed at %d from offset %d with %d dropped", rec.Seq, offset, rec.Dropped)
		}
		first = false
		got++
		dropped += rec.Dropped
	}
	// Every record after the offset arrived or was reported dropped.
	if want := st.LastSeq - offset; got+dropped != want {
		t.Fatalf("resumed %d + dropped %d, want %d (stats %+v)", got, dropped, want, st)
	}
	if dropped != st.Dropped {
		t.Fatalf("consumer saw %d dropped, stats say %d", dropped, st.Dropped)
	}

	// A resume within the window loses nothing.
	s2, err := rt.InvokeStream(ctx, contract.RunRequest{Input: "go"}, fabric.WithStreamWindow(10_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := s2.Next(ctx)
	s2.Close()
	<-s2.Done()
	r2, err := rt.ResumeStream(s2.InvocationID(), rec.Seq)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rec2, err := range r2.Records(ctx) {
		if err != nil || rec2.Dropped != 0 || rec2.Seq != rec.Seq+1+uint64(n) {
			t.Fatalf("record %d: %+v %v", n, rec2, err)
		}
		n++
	}
	if res2, _ := s2.Result(ctx); uint64(n) != streamStats(t, res2).LastSeq-rec.Seq {
		t.Fatalf("resumed %d records", n)
	}
	if _, err := rt.ResumeStream("invocation-other", 0); !isState(err, "stream_not_found") {
		t.Fatalf("resume of another invocation: %v", err)
	}
}

// TestStreamCloseDoesNotCancel and cancelling the context does.
func TestStreamCloseAndCancel(t *testing.T) {
	rt := startScripted(t, `{response: "done", mode: slow_stream, events: 5, event_interval_ms: 20}`)
	ctx := context.Background()
	s, err := rt.InvokeStream(ctx, contract.RunRequest{Input: "x"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := s.Next(ctx); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("next after close: %v", err)
	}
	res, _ := s.Result(ctx)
	if res.Status != "succeeded" || res.Output != "done" {
		t.Fatalf("closing the stream changed the turn: %s %v", res.Status, res.Output)
	}

	cctx, cancel := context.WithCancel(ctx)
	s, err = rt.InvokeStream(cctx, contract.RunRequest{Input: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	res, _ = s.Result(ctx)
	if res.Status != "cancelled" {
		t.Fatalf("cancelled turn: %s", res.Status)
	}
}

func isState(err error, code string) bool {
	var se *fabric.StateError
	return errors.As(err, &se) && se.Code == code
}

// TestFollowAcrossTurns: a watcher that attached before any turn follows
// plain Invoke turns of a runtime started WithFollowableTurns, one Stream
// per turn, with sequence numbers that go on across turns; a watcher that
// comes back with its offset gets exactly what it missed.
func TestFollowAcrossTurns(t *testing.T) {
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(t.TempDir()))
	cfg, err := client.ParseConfig([]byte(`
schema_version: fabric.agent/v1alpha1
metadata: {name: follow}
runtime: {}
harness:
  adapter_id: fabric.scripted
  settings: {response: "abcdefghij", events: 10}
`), "agent.yaml", fabric.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt, err := client.StartRuntime(ctx, cfg, fabric.WithFollowableTurns())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Stop(context.Background()) })

	// Attached before the first turn: Follow waits for it.
	first := make(chan *fabric.Stream, 1)
	go func() {
		s, err := rt.Follow(ctx, 0)
		if err != nil {
			t.Error(err)
		}
		first <- s
	}()
	res, err := rt.Invoke(ctx, "one")
	if err != nil || res.Status != "succeeded" {
		t.Fatalf("invoke: %+v %v", res, err)
	}
	if len(res.Events) < 10 {
		t.Fatalf("a followable Invoke keeps every event in its result: %d events", len(res.Events))
	}
	s := <-first
	if s == nil {
		t.Fatal("no stream")
	}
	var seqs []uint64
	for rec, err := range s.Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, rec.Seq)
	}
	if len(seqs) != len(res.Events) || seqs[0] != 1 {
		t.Fatalf("followed %d records from %v, the result has %d events", len(seqs), seqs[:1], len(res.Events))
	}
	last := s.LastSeq()

	// The turn is over and fully seen: Follow waits for the next one.
	wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	if _, err := rt.Follow(wctx, last); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("follow after a fully seen turn: %v, want it to wait", err)
	}
	cancel()

	// A watcher that was away during the second turn resumes at its offset.
	if _, err := rt.Invoke(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	s2, err := rt.Follow(ctx, last)
	if err != nil {
		t.Fatal(err)
	}
	n := uint64(0)
	for rec, err := range s2.Records(ctx) {
		if err != nil || rec.Dropped != 0 || rec.Seq != last+1+n {
			t.Fatalf("record %d of the second turn: %+v %v", n, rec, err)
		}
		n++
	}
	if n < 10 || s2.InvocationID() == s.InvocationID() {
		t.Fatalf("second turn: %d records, invocation %s (first %s)", n, s2.InvocationID(), s.InvocationID())
	}

	// A stopped runtime ends a waiting Follow.
	done := make(chan error, 1)
	go func() { _, err := rt.Follow(ctx, s2.LastSeq()); done <- err }()
	rt.Stop(ctx)
	if err := <-done; !isState(err, "runtime_stopped") {
		t.Fatalf("follow on a stopped runtime: %v", err)
	}
}
