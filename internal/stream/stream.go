// Package stream is the bounded event log behind live invocation streams.
//
// A Log holds the most recent records of one invocation in a window bounded
// by record count and bytes. Producers append; any number of consumers read
// in order, each from its own offset, and may detach and resume later from
// the last sequence number they saw. Memory never grows past the window:
// under the default Block policy a producer waits while an attached
// consumer is a full window behind (backpressure); under DropOldest the
// oldest record is evicted instead. Either way nothing is lost silently: a
// consumer that skips records learns how many from Record.Dropped, and the
// log's Stats count every record evicted before anyone read it.
package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/fabric-runtime/fabric/contract"
)

// Policy says what a full window does to a producer.
type Policy int

const (
	// Block makes the producer wait until every attached consumer has read
	// the oldest record (backpressure). With no consumer attached, the
	// oldest record is evicted and counted.
	Block Policy = iota
	// DropOldest never blocks: the oldest record is evicted and counted,
	// and a consumer that had not read it sees the gap in Record.Dropped.
	DropOldest
)

func (p Policy) String() string {
	if p == DropOldest {
		return "drop_oldest"
	}
	return "block"
}

// ParsePolicy parses "block" or "drop_oldest".
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "", "block":
		return Block, nil
	case "drop_oldest":
		return DropOldest, nil
	}
	return Block, fmt.Errorf("stream policy must be block or drop_oldest, got %q", s)
}

// Default limits.
const (
	DefaultRecords     = 1024
	DefaultBytes       = 16 << 20
	DefaultRecordBytes = 1 << 20
)

// Limits bound a log. Zero fields take the defaults.
type Limits struct {
	Records     int   // records in the window
	Bytes       int64 // estimated bytes in the window
	RecordBytes int64 // largest record kept as is; larger ones are replaced by a notice
	Policy      Policy
}

func (l Limits) withDefaults() Limits {
	if l.Records <= 0 {
		l.Records = DefaultRecords
	}
	if l.Bytes <= 0 {
		l.Bytes = DefaultBytes
	}
	if l.RecordBytes <= 0 {
		l.RecordBytes = DefaultRecordBytes
	}
	l.RecordBytes = min(l.RecordBytes, l.Bytes)
	return l
}

// Record is one event with its sequence number. Dropped counts the records
// this consumer missed just before this one (evicted before it read them).
type Record struct {
	Seq     uint64               `json:"seq"`
	Dropped uint64               `json:"dropped,omitempty"`
	Event   contract.FabricEvent `json:"event"`
}

// EventOversized replaces an event larger than Limits.RecordBytes.
const EventOversized = "stream_record_oversized"

// Stats describe a log's life so far.
type Stats struct {
	Records     uint64 `json:"records"`             // appended
	FirstSeq    uint64 `json:"first_seq,omitempty"` // of the first record appended
	LastSeq     uint64 `json:"last_seq,omitempty"`  // of the last record appended
	Evicted     uint64 `json:"evicted"`             // left the window
	Dropped     uint64 `json:"dropped"`             // evicted before any consumer read them
	Oversized   uint64 `json:"oversized"`           // replaced by a notice
	Blocked     uint64 `json:"blocked"`             // appends that waited for a consumer
	PeakRecords int    `json:"peak_records"`        // most records held at once
	PeakBytes   int64  `json:"peak_bytes"`          // most estimated bytes held at once
	Policy      string `json:"policy"`
}

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("stream: log closed")

type entry struct {
	rec  Record
	size int64
	read bool // some consumer has read it
}

// Log is one invocation's bounded event log. Safe for concurrent use.
type Log struct {
	lim Limits
	seq func() uint64 // next sequence number (per runtime)

	mu        sync.Mutex
	buf       []entry // ring
	head, n   int
	bytes     int64
	closed    bool
	relaxed   bool // producer no longer waits (turn cancelled)
	consumers map[*Consumer]struct{}
	lastSeq   uint64 // of the newest record
	stats     Stats
	wake      chan struct{} // closed to wake waiters; replaced after
	waiters   int           // goroutines waiting on wake
}

// NewLog returns a log. seq gives sequence numbers; they must increase.
func NewLog(lim Limits, seq func() uint64) *Log {
	lim = lim.withDefaults()
	return &Log{
		lim: lim, seq: seq,
		buf:       make([]entry, min(lim.Records, 64)),
		consumers: map[*Consumer]struct{}{},
		wake:      make(chan struct{}),
		stats:     Stats{Policy: lim.Policy.String()},
	}
}

// broadcast wakes every waiter. Called with mu held.
func (l *Log) broadcast() {
	if l.waiters == 0 {
		return
	}
	close(l.wake)
	l.wake = make(chan struct{})
}

// wait releases mu until a broadcast or ctx's end; it reports whether it
// was woken (not ended by ctx). Called with mu held; returns with it held.
func (l *Log) wait(ctx context.Context) bool {
	wake := l.wake
	l.waiters++
	l.mu.Unlock()
	woken := true
	select {
	case <-wake:
	case <-ctx.Done():
		woken = false
	}
	l.mu.Lock()
	l.waiters--
	return woken
}

func (l *Log) at(i int) *entry { return &l.buf[(l.head+i)%len(l.buf)] }

// Append adds ev with the next sequence number and returns it. Under Block
// it waits while an attached consumer has not read the oldest record of a
// full window, until ctx ends (then the record is appended anyway, evicting
// the oldest: a cancelled producer is never stuck).
func (l *Log) Append(ctx context.Context, ev contract.FabricEvent) (uint64, error) {
	size := Size(ev)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, ErrClosed
	}
	if size > l.lim.RecordBytes {
		l.stats.Oversized++
		ev = contract.FabricEvent{
			EventID: ev.EventID, TimestampMillis: ev.TimestampMillis, Kind: EventOversized,
			Message:  fmt.Sprintf("a %s event of about %d bytes exceeded the %d-byte record limit and was not kept", ev.Kind, size, l.lim.RecordBytes),
			Metadata: map[string]any{"original_kind": ev.Kind, "bytes": size},
		}
		size = Size(ev)
	}
	blocked := false
	for l.n > 0 && (l.n >= l.lim.Records || l.bytes+size > l.lim.Bytes) {
		if l.lim.Policy == Block && !l.relaxed && l.unreadByAttached() {
			if !blocked {
				blocked = true
				l.stats.Blocked++
			}
			if !l.wait(ctx) {
				l.relaxed = true
			}
			if l.closed {
				return 0, ErrClosed
			}
			continue
		}
		l.evictOldest()
	}
	if l.n == len(l.buf) {
		l.grow()
	}
	seq := l.seq()
	*l.at(l.n) = entry{rec: Record{Seq: seq, Event: ev}, size: size}
	l.n++
	l.bytes += size
	l.stats.PeakRecords = max(l.stats.PeakRecords, l.n)
	l.stats.PeakBytes = max(l.stats.PeakBytes, l.bytes)
	l.lastSeq = seq
	if l.stats.Records == 0 {
		l.stats.FirstSeq = seq
	}
	l.stats.Records++
	l.stats.LastSeq = seq
	l.broadcast()
	return seq, nil
}

// unreadByAttached reports whether an attached consumer has yet to read
// the oldest record.
func (l *Log) unreadByAttached() bool {
	oldest := l.at(0).rec.Seq
	for c := range l.consumers {
		if c.next <= oldest {
			return true
		}
	}
	return false
}

func (l *Log) evictOldest() {
	e := l.at(0)
	if !e.read {
		l.stats.Dropped++
	}
	l.stats.Evicted++
	l.bytes -= e.size
	*e = entry{}
	l.head = (l.head + 1) % len(l.buf)
	l.n--
}

func (l *Log) grow() { l.resize(min(max(2*len(l.buf), 1), l.lim.Records)) }

// resize moves the window into a ring of size entries (at least l.n).
func (l *Log) resize(size int) {
	nb := make([]entry, size)
	for i := range l.n {
		nb[i] = *l.at(i)
	}
	l.buf, l.head = nb, 0
}

// Relax stops producers from waiting from now on (the turn was cancelled
// or nobody will read); the window keeps its bounds by eviction.
func (l *Log) Relax() {
	l.mu.Lock()
	l.relaxed = true
	l.broadcast()
	l.mu.Unlock()
}

// Close ends the log: consumers drain what is left and then get io.EOF.
// The log then keeps only the room its records take.
func (l *Log) Close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		if len(l.buf) > l.n {
			// Nothing is appended any more: a closed log (the last turn
			// of an idle runtime, kept for late followers) holds its
			// records, not the room it had for more.
			l.resize(l.n)
		}
		l.broadcast()
	}
	l.mu.Unlock()
}

// Stats returns the log's counters.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// Subscribe attaches a consumer that reads the records after sequence
// number after (0: from the oldest retained record).
func (l *Log) Subscribe(after uint64) *Consumer {
	c := &Consumer{log: l, next: after + 1}
	l.mu.Lock()
	l.consumers[c] = struct{}{}
	l.mu.Unlock()
	return c
}

// Consumer reads a log in order. Not safe for concurrent use.
type Consumer struct {
	log  *Log
	next uint64 // sequence number wanted next
	gone bool
}

// Next returns the next record, waiting for one until ctx ends. It returns
// io.EOF once the log is closed and everything retained was read, and
// ErrDetached after Close.
func (c *Consumer) Next(ctx context.Context) (Record, error) {
	l := c.log
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if c.gone {
			return Record{}, ErrDetached
		}
		if l.n > 0 {
			oldest := l.at(0).rec.Seq
			var dropped uint64
			if c.next < oldest {
				// Records between what this consumer saw and the window.
				dropped = l.skipped(c.next, oldest)
				c.next = oldest
			}
			if c.next <= l.lastSeq {
				i := l.index(c.next)
				e := l.at(i)
				e.read = true
				rec := e.rec
				rec.Dropped = dropped
				c.next = rec.Seq + 1
				if l.lim.Policy == Block && i == 0 {
					l.broadcast() // the producer may be waiting on the oldest
				}
				return rec, nil
			}
		}
		if l.closed {
			return Record{}, io.EOF
		}
		if !l.wait(ctx) {
			return Record{}, ctx.Err()
		}
	}
}

// index finds the window position of seq (sequence numbers increase but
// need not be contiguous: other logs of the runtime share the counter).
func (l *Log) index(seq uint64) int {
	lo, hi := 0, l.n
	for lo < hi {
		m := (lo + hi) / 2
		if l.at(m).rec.Seq < seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// skipped counts records of this log with sequence numbers in [from, to)
// that are no longer retained. Sequence numbers of one log are contiguous
// unless the runtime interleaves logs, which it does not within a turn.
func (l *Log) skipped(from, to uint64) uint64 {
	first := l.stats.FirstSeq
	if from < first {
		from = first
	}
	if to <= from {
		return 0
	}
	return to - from
}

// Pending is the number of records the consumer can read now without
// waiting.
func (c *Consumer) Pending() int {
	l := c.log
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.gone || l.n == 0 || c.next > l.lastSeq {
		return 0
	}
	return l.n - l.index(c.next)
}

// Close detaches the consumer; a producer no longer waits for it.
func (c *Consumer) Close() {
	l := c.log
	l.mu.Lock()
	if !c.gone {
		c.gone = true
		delete(l.consumers, c)
		l.broadcast()
	}
	l.mu.Unlock()
}

// ErrDetached is returned by Next after Close.
var ErrDetached = errors.New("stream: consumer closed")

// Size estimates the bytes an event holds (its strings and metadata).
func Size(ev contract.FabricEvent) int64 {
	n := int64(64 + len(ev.EventID) + len(ev.Kind) + len(ev.Message))
	for k, v := range ev.Metadata {
		n += int64(len(k)) + valueSize(v, 0)
	}
	return n
}

func valueSize(v any, depth int) int64 {
	if depth > 32 {
		return 16
	}
	switch v := v.(type) {
	case string:
		return int64(16 + len(v))
	case []byte:
		return int64(24 + len(v))
	case map[string]any:
		n := int64(48)
		for k, x := range v {
			n += int64(len(k)) + valueSize(x, depth+1)
		}
		return n
	case []any:
		n := int64(24)
		for _, x := range v {
			n += valueSize(x, depth+1)
		}
		return n
	case []string:
		n := int64(24)
		for _, x := range v {
			n += int64(16 + len(x))
		}
		return n
	}
	return 16
}
