package relay

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

// Event kinds of correlated records. Metadata["atof"] holds the record.
const (
	EventScopeStart = "relay.scope_start" // scope record, scope_category start
	EventScopeEnd   = "relay.scope_end"   // scope record, scope_category end
	EventMark       = "relay.mark"        // mark record
	// A record of another kind K (a lowercase identifier) becomes
	// "relay.K"; a scope with another category "relay.scope"; anything
	// else EventRecord.
	EventRecord = "relay.record"
)

// Metadata keys of relay events.
const (
	MetaATOF         = "atof"           // the record as sent (map[string]any, numbers as json.Number)
	MetaSequence     = "relay_sequence" // 1-based order among the turn's correlated records
	MetaRuntimeID    = "runtime_id"
	MetaInvocationID = "invocation_id"
	MetaRequestID    = "request_id"
)

// Relay metadata conventions used to find a turn's root.
const (
	metaRequestID = "nemo_fabric_request_id" // on a scope start, the Fabric request id
	metaScopeRole = "nemo_relay_scope_role"  // "turn" on a gateway turn scope
	metaTurnIndex = "turn_index"             // 1-based, with metaScopeRole
	metaPlatform  = "platform"               // "fabric" on a turn-start mark
	metaTaskID    = "task_id"                // the Fabric request id, on a turn-start mark
	metaTurnID    = "turn_id"                // on a turn-start mark and every record of its turn
)

// maxScopes caps the scope uuids a turn remembers; children of scopes
// beyond it are uncorrelated.
const maxScopes = 1 << 16

// TurnKey identifies a turn.
type TurnKey struct {
	RuntimeID    string // required: routes the runtime's uploads (SinkConfig puts it in the URL)
	InvocationID string
	RequestID    string // matched against metadata.nemo_fabric_request_id and task_id
	// Index is the runtime's 1-based invocation count, matched against a
	// Relay turn scope's metadata.turn_index; 0 means unknown. With no
	// RequestID and no Index every record of the runtime during the turn is
	// correlated (upstream does the same).
	Index int
}

// Sink receives a turn's correlated records as events, one at a time, in
// order. It may block (backpressure), but must return once ctx is done;
// an error counts the event as dropped.
type Sink func(ctx context.Context, ev contract.FabricEvent) error

// Stats count a turn's records. Every record offered to the turn ends in
// exactly one of Correlated, Uncorrelated and Dropped; Malformed and
// Oversized count lines that never became records.
type Stats struct {
	Correlated   int `json:"correlated"`   // delivered to the sink
	Uncorrelated int `json:"uncorrelated"` // belonged to no turn (including records whose parent never came)
	Dropped      int `json:"dropped"`      // correlated but not delivered: buffer full past BackpressureWait, sink error, turn ended or listener closed first
	Malformed    int `json:"malformed"`    // lines of the turn's uploads that were not a JSON object
	Oversized    int `json:"oversized"`    // lines of the turn's uploads longer than MaxRecordBytes
	Uploads      int `json:"uploads"`      // uploads that could feed the turn (open at BeginTurn or started during it); 0 means Relay never connected
	Interrupted  int `json:"interrupted"`  // of those, uploads that broke off before their body ended
}

// Turn is one invocation's view of the listener. End it exactly once
// (more calls return the same Stats).
type Turn struct {
	l        *Listener
	key      TurnKey
	sink     Sink
	matchAll bool
	idSuffix string

	ctx    context.Context // the sink's; cancelled when End gives up or the listener closes
	cancel context.CancelFunc
	done   chan struct{} // the delivery goroutine has returned

	rootEnded chan struct{} // closed when the root scope's end record is admitted
	endOnce   sync.Once
	final     Stats

	mu         sync.Mutex
	wake       chan struct{} // closed and replaced on a change someone waits for
	waiters    int           // goroutines waiting on wake
	ended      bool
	offering   int // offers in progress (End waits for them)
	stats      Stats
	rootFound  bool
	rootUUID   string
	rootClosed bool
	markTurnID string
	scopes     map[string]struct{}
	queue      []item // admitted, not yet handed to the sink
	pending    []item // parked until their parent is admitted
	bufRecords int    // len(queue) + len(pending)
	bufBytes   int64
	seq        int
}

type item struct {
	rec *Record
	at  time.Time // arrival, the fallback timestamp
}

// BeginTurn opens a turn for key.RuntimeID: from now until End, that
// runtime's records are correlated and delivered to sink. A runtime has at
// most one active turn (ErrTurnActive).
func (l *Listener) BeginTurn(key TurnKey, sink Sink) (*Turn, error) {
	if key.RuntimeID == "" {
		return nil, errors.New("relay: BeginTurn needs a runtime id")
	}
	if sink == nil {
		return nil, errors.New("relay: BeginTurn needs a sink")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Turn{
		l:         l,
		key:       key,
		sink:      sink,
		matchAll:  key.RequestID == "" && key.Index == 0,
		idSuffix:  eventIDSuffix(key),
		ctx:       ctx,
		cancel:    cancel,
		done:      make(chan struct{}),
		rootEnded: make(chan struct{}),
		wake:      make(chan struct{}),
		scopes:    make(map[string]struct{}),
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		cancel()
		return nil, ErrClosed
	}
	if l.turns[key.RuntimeID] != nil {
		cancel()
		return nil, ErrTurnActive
	}
	t.stats.Uploads = l.uploads[key.RuntimeID] + l.uploads[""]
	l.turns[key.RuntimeID] = t
	l.order = append(l.order, t)
	go t.deliver()
	return t, nil
}

// Key returns the turn's key.
func (t *Turn) Key() TurnKey { return t.key }

// Stats returns the counts so far.
func (t *Turn) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stats
}

// End closes the turn and returns its final counts. It first keeps
// admitting late records for Options.DrainWindow, unless the turn's root
// scope has already ended; then it detaches the turn (later records of the
// runtime are discarded), counts parked records as uncorrelated, and waits
// until every queued event has been handed to the sink. If ctx ends first,
// the sink's context is cancelled and what is left is counted as dropped.
// End never cancels the invocation; it only stops observing it.
func (t *Turn) End(ctx context.Context) Stats {
	t.end(ctx, true)
	return t.final
}

func (t *Turn) end(ctx context.Context, drain bool) {
	t.endOnce.Do(func() {
		if d := t.l.opts.DrainWindow; drain && d > 0 {
			timer := time.NewTimer(d)
			select {
			case <-t.rootEnded:
			case <-timer.C:
			case <-ctx.Done():
			case <-t.l.closing:
			}
			timer.Stop()
		}
		l := t.l
		l.mu.Lock()
		if l.turns[t.key.RuntimeID] == t {
			delete(l.turns, t.key.RuntimeID)
		}
		if i := slices.Index(l.order, t); i >= 0 {
			l.order = slices.Delete(l.order, i, i+1)
		}
		l.mu.Unlock()

		t.mu.Lock()
		t.ended = true
		t.broadcast()
		for t.offering > 0 { // offers waiting for room give up now
			t.wait(nil, false)
		}
		for len(t.pending) > 0 {
			t.evictPending()
		}
		t.mu.Unlock()

		select {
		case <-t.done:
		case <-ctx.Done():
			t.cancel()
			<-t.done
		}
		t.cancel()
		t.final = t.Stats()
	})
}

// broadcast wakes every waiter. Called with t.mu held.
func (t *Turn) broadcast() {
	if t.waiters > 0 {
		close(t.wake)
		t.wake = make(chan struct{})
	}
}

// wait releases t.mu until the next broadcast, or, when interruptible,
// until timeout fires (timedOut), the sink's context ends or the listener
// closes. It returns with t.mu held.
func (t *Turn) wait(timeout <-chan time.Time, interruptible bool) (timedOut bool) {
	w := t.wake
	t.waiters++
	t.mu.Unlock()
	if interruptible {
		select {
		case <-w:
		case <-timeout:
			timedOut = true
		case <-t.ctx.Done():
		case <-t.l.closing:
		}
	} else {
		<-w
	}
	t.mu.Lock()
	t.waiters--
	return timedOut
}

// deliver hands queued records to the sink in order until the turn has
// ended and the queue is empty.
func (t *Turn) deliver() {
	defer close(t.done)
	for {
		t.mu.Lock()
		for len(t.queue) == 0 && !t.ended {
			t.wait(nil, false)
		}
		if len(t.queue) == 0 {
			t.mu.Unlock()
			return
		}
		it := t.queue[0]
		t.queue[0] = item{}
		t.queue = t.queue[1:]
		if len(t.queue) == 0 {
			t.queue = t.queue[:0:0] // let the backing array go
		}
		t.bufRecords--
		t.bufBytes -= int64(it.rec.Size)
		t.seq++
		n := t.seq
		t.broadcast() // room for waiting producers
		t.mu.Unlock()

		err := t.ctx.Err()
		if err == nil {
			err = t.sink(t.ctx, t.event(it, n))
		}
		t.mu.Lock()
		if err != nil {
			t.stats.Dropped++
		} else {
			t.stats.Correlated++
		}
		t.mu.Unlock()
	}
}

type verdict int

const (
	rejectRecord verdict = iota
	admitRecord
	parkRecord
)

// offer hands a record to the turn. strict allows only unambiguous
// evidence (request id, task id, a known parent or turn id) and never
// parks; false means the record was not taken and the caller counts it.
// A non-strict offer takes every record unless the turn has ended.
func (t *Turn) offer(rec *Record, strict bool) bool {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return false
	}
	t.offering++
	defer func() {
		if t.offering--; t.offering == 0 && t.ended {
			t.broadcast()
		}
	}()
	v, newScope := t.correlate(rec, strict)
	switch v {
	case rejectRecord:
		if strict {
			return false
		}
		t.stats.Uncorrelated++
		return true
	case parkRecord:
		t.park(item{rec, now})
		return true
	}
	if t.waitForRoom(rec.Size) {
		t.queue = append(t.queue, item{rec, now})
		t.bufRecords++
		t.bufBytes += int64(rec.Size)
		t.broadcast()
	} else {
		t.stats.Dropped++
	}
	if rec.UUID != "" && rec.UUID == t.rootUUID && rec.IsScopeEnd() && !t.rootClosed {
		t.rootClosed = true
		close(t.rootEnded)
	}
	if newScope {
		t.addScope(rec.UUID)
	}
	return true
}

// waitForRoom waits, with t.mu held (released while waiting), until the
// buffer has room for a record of size bytes. False: no room in time, or
// the turn ended.
func (t *Turn) waitForRoom(size int) bool {
	lim := &t.l.opts
	full := func() bool {
		return t.bufRecords+1 > lim.MaxRecords || t.bufBytes+int64(size) > lim.MaxBytes
	}
	for full() && len(t.pending) > 0 {
		t.evictPending() // correlated records come first
	}
	if !full() {
		return true
	}
	if lim.BackpressureWait < 0 {
		return false
	}
	timer := time.NewTimer(lim.BackpressureWait)
	defer timer.Stop()
	for full() && !t.ended {
		timedOut := t.wait(timer.C, true)
		if t.ctx.Err() != nil || t.l.isClosing() {
			return false
		}
		if timedOut {
			return !full() && !t.ended
		}
	}
	return !t.ended
}

// correlate decides what to do with a record; newScope says its uuid joins
// the turn's scopes once it is queued. Called with t.mu held. A root match
// is recorded at once so that a second candidate cannot also become root.
func (t *Turn) correlate(rec *Record, strict bool) (v verdict, newScope bool) {
	if t.matchAll && !strict {
		return admitRecord, false
	}
	if rec.UUID == "" {
		return rejectRecord, false
	}
	if t.markTurnID != "" {
		if id, ok := rec.metaString(metaTurnID); ok && id == t.markTurnID {
			return admitRecord, rec.IsScopeStart()
		}
	}
	if !t.rootFound {
		if t.matchesRoot(rec, strict) {
			t.rootFound = true
			t.rootUUID = rec.UUID
			if rec.Kind == KindMark {
				if id, ok := rec.metaString(metaTurnID); ok {
					t.markTurnID = id
				}
			}
			return admitRecord, true
		}
	} else {
		if _, ok := t.scopes[rec.UUID]; ok {
			return admitRecord, false
		}
		if _, ok := t.scopes[rec.ParentUUID]; ok && rec.ParentUUID != "" {
			return admitRecord, rec.IsScopeStart()
		}
	}
	if !strict && rec.ParentUUID != "" {
		return parkRecord, false
	}
	return rejectRecord, false
}

// matchesRoot applies the root rules: a scope start carrying the request
// id; a Relay turn scope with the turn index (not in strict mode, where
// several runtimes' indexes could collide); a turn-start mark on the
// "fabric" platform whose task id is the request id.
func (t *Turn) matchesRoot(rec *Record, strict bool) bool {
	if rec.Metadata == nil {
		return false
	}
	if rec.Kind == KindMark {
		plat, _ := rec.metaString(metaPlatform)
		task, _ := rec.metaString(metaTaskID)
		_, hasTurn := rec.metaString(metaTurnID)
		return plat == "fabric" && t.key.RequestID != "" && task == t.key.RequestID && hasTurn
	}
	if !rec.IsScopeStart() {
		return false
	}
	if id, ok := rec.metaString(metaRequestID); ok && t.key.RequestID != "" && id == t.key.RequestID {
		return true
	}
	if strict || t.key.Index == 0 {
		return false
	}
	role, _ := rec.metaString(metaScopeRole)
	return role == "turn" && rec.metaIntEquals(metaTurnIndex, t.key.Index)
}

// park keeps a record whose parent may still come. Parked records share
// the turn's buffer; when it is full the oldest parked record gives way
// (uncorrelated). Called with t.mu held.
func (t *Turn) park(it item) {
	lim := &t.l.opts
	for len(t.pending) > 0 && (len(t.pending)+1 > lim.MaxPending ||
		t.bufRecords+1 > lim.MaxRecords || t.bufBytes+int64(it.rec.Size) > lim.MaxBytes) {
		t.evictPending()
	}
	if t.bufRecords+1 > lim.MaxRecords || t.bufBytes+int64(it.rec.Size) > lim.MaxBytes {
		t.stats.Uncorrelated++
		return
	}
	t.pending = append(t.pending, it)
	t.bufRecords++
	t.bufBytes += int64(it.rec.Size)
}

// evictPending gives up the oldest parked record (uncorrelated). Called
// with t.mu held and t.pending non-empty.
func (t *Turn) evictPending() {
	old := t.pending[0]
	t.pending[0] = item{}
	t.pending = t.pending[1:]
	t.bufRecords--
	t.bufBytes -= int64(old.rec.Size)
	t.stats.Uncorrelated++
}

// addScope records an admitted scope and admits, in arrival order, the
// parked records that descend from it. Called with t.mu held.
func (t *Turn) addScope(uuid string) {
	next := []string{uuid}
	for len(next) > 0 {
		u := next[0]
		next = next[1:]
		if len(t.scopes) >= maxScopes {
			continue
		}
		t.scopes[u] = struct{}{}
		if len(t.pending) == 0 {
			continue
		}
		kept := t.pending[:0]
		moved := false
		for _, it := range t.pending {
			if it.rec.ParentUUID != u {
				kept = append(kept, it)
				continue
			}
			t.queue = append(t.queue, it) // already counted in the buffer
			moved = true
			if it.rec.IsScopeStart() {
				next = append(next, it.rec.UUID)
			}
		}
		clear(t.pending[len(kept):])
		t.pending = kept
		if moved {
			t.broadcast()
		}
	}
}

var kindName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`) })

// EventKind is the FabricEvent kind of a record.
func EventKind(rec *Record) string {
	switch rec.Kind {
	case KindScope:
		switch rec.ScopeCategory {
		case ScopeStart:
			return EventScopeStart
		case ScopeEnd:
			return EventScopeEnd
		}
		return "relay.scope"
	case KindMark:
		return EventMark
	}
	if kindName().MatchString(rec.Kind) {
		return "relay." + rec.Kind
	}
	return EventRecord
}

// event turns the n-th correlated record into a FabricEvent.
func (t *Turn) event(it item, n int) contract.FabricEvent {
	ts := it.at
	if rt, ok := it.rec.Time(); ok {
		ts = rt
	}
	md := map[string]any{
		MetaATOF:      it.rec.Object(),
		MetaSequence:  n,
		MetaRuntimeID: t.key.RuntimeID,
	}
	if t.key.InvocationID != "" {
		md[MetaInvocationID] = t.key.InvocationID
	}
	if t.key.RequestID != "" {
		md[MetaRequestID] = t.key.RequestID
	}
	return contract.FabricEvent{
		EventID:         "event-" + t.idSuffix + "-relay-" + strconv.Itoa(n),
		TimestampMillis: ts.UnixMilli(),
		Kind:            EventKind(it.rec),
		Message:         it.rec.Name,
		Metadata:        md,
	}
}

func eventIDSuffix(k TurnKey) string {
	if k.InvocationID != "" {
		return strings.TrimPrefix(k.InvocationID, "invocation-")
	}
	return strings.TrimPrefix(k.RuntimeID, "runtime-")
}
