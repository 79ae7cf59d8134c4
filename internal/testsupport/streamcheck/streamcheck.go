// Package streamcheck records a live invocation stream with the time each
// record arrived, for tests that must show events arrive before the turn
// ends.
package streamcheck

import (
	"context"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
)

// Stamped is a record and when it reached the consumer.
type Stamped struct {
	At     time.Time
	Record fabric.StreamRecord
}

// Recording is one consumed turn.
type Recording struct {
	Records []Stamped
	// Ended is when the turn's result became available (Stream.Done).
	Ended  time.Time
	Result *contract.RunResult
}

// Record consumes s to its end, stamping each record, and waits for the
// result. The turn's end is taken from Stream.Done as it happens, not
// after the records were read.
func Record(t testing.TB, ctx context.Context, s *fabric.Stream) *Recording {
	t.Helper()
	rec := &Recording{}
	ended := make(chan time.Time, 1)
	go func() {
		<-s.Done()
		ended <- time.Now()
	}()
	for r, err := range s.Records(ctx) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		rec.Records = append(rec.Records, Stamped{At: time.Now(), Record: r})
	}
	res, err := s.Result(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec.Result = res
	rec.Ended = <-ended
	return rec
}

// Kind returns the stamped records of one event kind.
func (r *Recording) Kind(kind string) []Stamped {
	var out []Stamped
	for _, s := range r.Records {
		if s.Record.Event.Kind == kind {
			out = append(out, s)
		}
	}
	return out
}

// Text concatenates the output_delta messages.
func (r *Recording) Text() string {
	var b strings.Builder
	for _, s := range r.Kind("output_delta") {
		b.WriteString(s.Record.Event.Message)
	}
	return b.String()
}

// ArrivedBeforeEnd fails the test unless the first record of kind arrived
// at least margin before the turn ended, and logs the evidence.
func (r *Recording) ArrivedBeforeEnd(t testing.TB, kind string, margin time.Duration) {
	t.Helper()
	recs := r.Kind(kind)
	if len(recs) == 0 {
		t.Fatalf("no %s record in the stream", kind)
	}
	lead := r.Ended.Sub(recs[0].At)
	t.Logf("first %s arrived %s before the turn ended (%d records of that kind)", kind, lead.Round(time.Millisecond), len(recs))
	if lead < margin {
		t.Fatalf("first %s arrived only %s before the turn ended, want at least %s", kind, lead, margin)
	}
}

// InOrder fails the test if sequence numbers do not increase or a record
// was dropped.
func (r *Recording) InOrder(t testing.TB) {
	t.Helper()
	var last uint64
	for _, s := range r.Records {
		if s.Record.Seq <= last || s.Record.Dropped != 0 {
			t.Fatalf("record %d after %d (dropped %d)", s.Record.Seq, last, s.Record.Dropped)
		}
		last = s.Record.Seq
	}
}
