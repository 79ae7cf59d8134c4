package fabric

import (
	"context"
	"io"
	"iter"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/runtime"
	"github.com/fabric-runtime/fabric/internal/stream"
)

// StreamRecord is one event of a live invocation stream: Seq is the
// runtime's sequence number for it; Dropped counts the records this
// consumer missed just before it (only under StreamDropOldest, or when
// resuming from an offset older than the retention window).
type StreamRecord = stream.Record

// StreamStats are a stream's counters, also in the result's
// metadata["stream"].
type StreamStats = stream.Stats

// StreamPolicy says what a full retention window does to the producer.
type StreamPolicy = stream.Policy

const (
	// StreamBlock (default) holds the harness back while an attached
	// consumer is a full window behind: nothing is lost.
	StreamBlock = stream.Block
	// StreamDropOldest never holds the harness back: the oldest record is
	// evicted and consumers see the gap in StreamRecord.Dropped.
	StreamDropOldest = stream.DropOldest
)

// StreamOption configures InvokeStream.
type StreamOption func(*streamConfig)

type streamConfig struct {
	lim stream.Limits
}

// WithStreamWindow bounds the retention window (records, estimated bytes;
// zero keeps the default of 1,024 records and 16 MiB). Records larger than
// 1 MiB are replaced by a stream_record_oversized notice.
func WithStreamWindow(records int, bytes int64) StreamOption {
	return func(c *streamConfig) { c.lim.Records, c.lim.Bytes = records, bytes }
}

// WithStreamPolicy sets the policy of a full window (default StreamBlock).
func WithStreamPolicy(p StreamPolicy) StreamOption {
	return func(c *streamConfig) { c.lim.Policy = p }
}

// Stream is a live invocation: its events as they happen, and its
// RunResult out of band. Closing a Stream detaches this consumer and never
// cancels the turn; cancelling the context given to InvokeStream does.
type Stream struct {
	turn *runtime.Turn
	cons *stream.Consumer
	last uint64
}

// InvokeStream starts an invocation and returns once it has begun. State
// errors (runtime_busy, runtime_stopped, runtime_failed) are returned at
// once as *StateError.
func (r *Runtime) InvokeStream(ctx context.Context, req contract.RunRequest, opts ...StreamOption) (*Stream, error) {
	var sc streamConfig
	for _, o := range opts {
		o(&sc)
	}
	ctx, span, inv := r.invocationSpan(ctx, nil)
	turn, err := r.rt.InvokeStream(ctx, req, sc.lim, inv)
	if err != nil {
		span.End(nil, err)
		return nil, err
	}
	if span != nil {
		go func() {
			<-turn.Done()
			if st := turn.Stats(); st.Dropped > 0 {
				r.obs.tel.RecordDrops(int64(st.Dropped))
			}
			span.End(turn.Result(), nil)
		}()
	}
	return &Stream{turn: turn, cons: turn.Consumer}, nil
}

// ResumeStream attaches a new consumer to the runtime's most recent
// streamed invocation, from the record after sequence number after: it
// receives every record it missed that is still in the retention window,
// none twice, and learns how many are gone from StreamRecord.Dropped.
func (r *Runtime) ResumeStream(invocationID string, after uint64) (*Stream, error) {
	turn := r.rt.LastTurn()
	if turn == nil || turn.InvocationID != invocationID {
		return nil, &StateError{Failure: contract.Failure{Stage: contract.StageInvoke, Code: "stream_not_found", Message: "invocation " + invocationID + " is not the runtime's most recent streamed invocation"}}
	}
	return &Stream{turn: turn, cons: turn.Log.Subscribe(after), last: after}, nil
}

// Follow attaches a consumer to the runtime's turns from the record after
// sequence number after (sequence numbers grow across a runtime's turns):
// to the most recent streamed or followable turn when it still has records
// past after or is still running, else to the next one to begin, waiting
// for it until ctx ends. A watcher follows one turn per Stream and calls
// Follow again with LastSeq after its io.EOF.
func (r *Runtime) Follow(ctx context.Context, after uint64) (*Stream, error) {
	for {
		begun := r.rt.TurnBegun()
		if turn := r.rt.LastTurn(); turn != nil {
			cons := turn.Log.Subscribe(after)
			select {
			case <-turn.Done():
				if cons.Pending() == 0 {
					cons.Close()
					break // over and fully seen: wait for the next turn
				}
				return &Stream{turn: turn, cons: cons, last: after}, nil
			default:
				return &Stream{turn: turn, cons: cons, last: after}, nil
			}
		}
		select {
		case <-begun:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-r.Exited():
			return nil, &StateError{Failure: contract.Failure{Stage: contract.StageInvoke, Code: "runtime_stopped", Message: "runtime " + r.ID() + " has ended"}}
		}
	}
}

// InvocationID is the streamed invocation's id.
func (s *Stream) InvocationID() string { return s.turn.InvocationID }

// RequestID is the streamed invocation's request id.
func (s *Stream) RequestID() string { return s.turn.RequestID }

// LastSeq is the sequence number of the last record Next returned (the
// offset to resume from).
func (s *Stream) LastSeq() uint64 { return s.last }

// Next returns the next record, waiting until one arrives or ctx ends. It
// returns io.EOF after the turn's last record.
func (s *Stream) Next(ctx context.Context) (StreamRecord, error) {
	rec, err := s.cons.Next(ctx)
	if err == nil {
		s.last = rec.Seq
	}
	return rec, err
}

// Records iterates over the remaining records until the end of the turn;
// a non-nil error (ctx's, or a closed stream's) ends the iteration.
func (s *Stream) Records(ctx context.Context) iter.Seq2[StreamRecord, error] {
	return func(yield func(StreamRecord, error) bool) {
		for {
			rec, err := s.Next(ctx)
			if err == io.EOF {
				return
			}
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

// Result waits for the end of the turn and returns its RunResult, the
// authoritative outcome. It does not need the records to be read.
func (s *Stream) Result(ctx context.Context) (*contract.RunResult, error) {
	select {
	case <-s.turn.Done():
		return s.turn.Result(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Pending is the number of records Next can return now without waiting.
func (s *Stream) Pending() int { return s.cons.Pending() }

// Done is closed when the turn has ended.
func (s *Stream) Done() <-chan struct{} { return s.turn.Done() }

// Close detaches this consumer; the turn goes on.
func (s *Stream) Close() error {
	s.cons.Close()
	return nil
}
