package stream

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

func counter() func() uint64 {
	var n atomic.Uint64
	return func() uint64 { return n.Add(1) }
}

func ev(i int) contract.FabricEvent {
	return contract.FabricEvent{Kind: "output_delta", Message: "x", Metadata: map[string]any{"i": i}}
}

func produce(t *testing.T, l *Log, n int) {
	t.Helper()
	for i := range n {
		if _, err := l.Append(context.Background(), ev(i)); err != nil {
			t.Error(err)
			return
		}
	}
	l.Close()
}

// TestBlockSlowConsumerLosesNothing: 100,000 events through a small window
// to a consumer slower than the producer: all arrive, in order, and the
// window never exceeds its bounds.
func TestBlockSlowConsumerLosesNothing(t *testing.T) {
	const total = 100_000
	l := NewLog(Limits{Records: 64, Bytes: 8 << 10}, counter())
	c := l.Subscribe(0)
	go produce(t, l, total)
	var got int
	var last uint64
	for {
		rec, err := c.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Seq != last+1 || rec.Dropped != 0 || rec.Event.Metadata["i"] != got {
			t.Fatalf("record %d: seq %d after %d, dropped %d, i %v", got, rec.Seq, last, rec.Dropped, rec.Event.Metadata["i"])
		}
		last = rec.Seq
		got++
		if got%1000 == 0 {
			time.Sleep(time.Millisecond) // slower than the producer
		}
	}
	st := l.Stats()
	if got != total || st.Dropped != 0 || st.Records != total {
		t.Fatalf("got %d, stats %+v", got, st)
	}
	if st.PeakRecords > 64 || st.PeakBytes > 8<<10 {
		t.Fatalf("window exceeded its bounds: %+v", st)
	}
	if st.Blocked == 0 {
		t.Fatal("the producer never waited for the slow consumer")
	}
}

// TestDropOldestReportsEveryGap: a consumer that falls behind under
// DropOldest sees each gap; received + dropped = appended.
func TestDropOldestReportsEveryGap(t *testing.T) {
	const total = 20_000
	l := NewLog(Limits{Records: 32, Policy: DropOldest}, counter())
	c := l.Subscribe(0)
	var wg sync.WaitGroup
	wg.Go(func() { produce(t, l, total) })
	var got, dropped uint64
	var last uint64
	for {
		rec, err := c.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Seq != last+1+rec.Dropped {
			t.Fatalf("seq %d after %d with %d dropped", rec.Seq, last, rec.Dropped)
		}
		last = rec.Seq
		got++
		dropped += rec.Dropped
		if got%10 == 0 {
			time.Sleep(50 * time.Microsecond)
		}
	}
	wg.Wait()
	if got+dropped != total {
		t.Fatalf("received %d + dropped %d != %d", got, dropped, total)
	}
	if st := l.Stats(); st.Dropped != dropped || st.PeakRecords > 32 {
		t.Fatalf("stats %+v, consumer saw %d dropped", st, dropped)
	}
}

// TestResume: a consumer detaches mid-stream; a new one resuming from the
// last sequence number it saw gets exactly the missing records, none
// twice; past the window, the gap is reported.
func TestResume(t *testing.T) {
	l := NewLog(Limits{Records: 100}, counter())
	c := l.Subscribe(0)
	for i := range 50 {
		l.Append(context.Background(), ev(i))
	}
	var last uint64
	for range 20 {
		rec, err := c.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		last = rec.Seq
	}
	c.Close()
	if _, err := c.Next(context.Background()); !errors.Is(err, ErrDetached) {
		t.Fatalf("next after close: %v", err)
	}
	for i := 50; i < 120; i++ { // nobody attached: evicts beyond 100
		l.Append(context.Background(), ev(i))
	}
	l.Close()
	r := l.Subscribe(last)
	rec, err := r.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Window holds seqs 21..120; the consumer saw up to 20: nothing missing.
	if rec.Seq != 21 || rec.Dropped != 0 {
		t.Fatalf("resume: seq %d dropped %d", rec.Seq, rec.Dropped)
	}
	n := 1
	for {
		if _, err := r.Next(context.Background()); err == io.EOF {
			break
		}
		n++
	}
	if n != 100 {
		t.Fatalf("resumed %d records, want 100", n)
	}

	// Resuming from before the window reports what is gone.
	r = l.Subscribe(5)
	rec, _ = r.Next(context.Background())
	if rec.Seq != 21 || rec.Dropped != 15 {
		t.Fatalf("old offset: seq %d dropped %d", rec.Seq, rec.Dropped)
	}
}

func TestOversizedRecordIsReplaced(t *testing.T) {
	l := NewLog(Limits{RecordBytes: 1 << 10}, counter())
	c := l.Subscribe(0)
	l.Append(context.Background(), contract.FabricEvent{Kind: "big", Message: strings.Repeat("a", 4<<10)})
	l.Close()
	rec, err := c.Next(context.Background())
	if err != nil || rec.Event.Kind != EventOversized || rec.Event.Metadata["original_kind"] != "big" {
		t.Fatalf("got %+v, %v", rec, err)
	}
	if l.Stats().Oversized != 1 {
		t.Fatal("oversized not counted")
	}
}

// TestBlockedProducerFreedByCancelAndDetach: a producer waiting on a stuck
// consumer is freed by its context and by the consumer detaching.
func TestBlockedProducerFreedByCancelAndDetach(t *testing.T) {
	for _, how := range []string{"cancel", "detach", "relax"} {
		t.Run(how, func(t *testing.T) {
			l := NewLog(Limits{Records: 4}, counter())
			c := l.Subscribe(0)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := range 10 {
					l.Append(ctx, ev(i))
				}
			}()
			select {
			case <-done:
				t.Fatal("producer did not wait for the consumer")
			case <-time.After(50 * time.Millisecond):
			}
			switch how {
			case "cancel":
				cancel()
			case "detach":
				c.Close()
			case "relax":
				l.Relax()
			}
			<-done
			if st := l.Stats(); st.Records != 10 || st.PeakRecords > 4 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func TestConsumerContext(t *testing.T) {
	l := NewLog(Limits{}, counter())
	c := l.Subscribe(0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := c.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	if _, err := l.Append(context.Background(), ev(0)); err != nil {
		t.Fatal(err)
	}
	if rec, err := c.Next(context.Background()); err != nil || rec.Seq != 1 {
		t.Fatalf("%+v %v", rec, err)
	}
	l.Close()
	if _, err := l.Append(context.Background(), ev(1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
}

func BenchmarkAppendNext(b *testing.B) {
	l := NewLog(Limits{}, counter())
	c := l.Subscribe(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if _, err := c.Next(context.Background()); err != nil {
				return
			}
		}
	}()
	e := ev(0)
	b.ReportAllocs()
	for b.Loop() {
		l.Append(context.Background(), e)
	}
	l.Close()
	<-done
}

// TestClosedLogKeepsOnlyItsRecords: a closed log (the last turn of an idle
// runtime) holds no room for records that cannot come, and a late
// follower still reads every retained record in order.
func TestClosedLogKeepsOnlyItsRecords(t *testing.T) {
	tests := []struct {
		name           string
		window, events int
	}{
		{"empty", 0, 0},
		{"short turn", 0, 5},
		{"grown ring", 0, 70},
		{"wrapped window", 100, 150},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLog(Limits{Records: tt.window, Policy: DropOldest}, counter())
			produce(t, l, tt.events)
			want := min(tt.events, l.lim.Records)
			if l.n != want || len(l.buf) != want {
				t.Errorf("closed log holds %d records in a ring of %d, want %d in %d", l.n, len(l.buf), want, want)
			}
			c := l.Subscribe(0)
			next := uint64(tt.events - want + 1)
			for {
				rec, err := c.Next(context.Background())
				if err == io.EOF {
					break
				}
				if err != nil || rec.Seq != next {
					t.Fatalf("record %d: %+v %v", next, rec, err)
				}
				next++
			}
			if next != uint64(tt.events+1) {
				t.Errorf("read up to %d, want %d", next-1, tt.events)
			}
		})
	}
}
