package relay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

// feed routes lines as if they arrived on one upload with key.
func feed(t *testing.T, l *Listener, key string, lines ...string) {
	t.Helper()
	for _, line := range lines {
		r, err := ParseRecord([]byte(line))
		if err != nil {
			t.Errorf("ParseRecord(%s): %v", line, err)
			continue
		}
		l.route(key, r)
	}
}

func lines(rs ...rec) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.line())
	}
	return out
}

func TestCorrelation(t *testing.T) {
	turnMD := func(i any) map[string]any { return map[string]any{"nemo_relay_scope_role": "turn", "turn_index": i} }
	markMD := func(task, turnID string) map[string]any {
		return map[string]any{"platform": "fabric", "task_id": task, "turn_id": turnID}
	}
	cases := []struct {
		name         string
		key          TurnKey
		in           []string
		want         []string // delivered uuids, in order
		uncorrelated int
	}{
		{
			name: "request id root and its tree",
			key:  keyA,
			in: lines(
				start("x", "", map[string]any{"nemo_fabric_request_id": "request-0"}), // another request's root
				start("r", "", rootMD),
				start("c", "r", nil),
				mark("m", "c", nil),
				start("y", "x", nil), // child of the other root
				end("c", "r"),
				end("r", ""),
			),
			want:         []string{"r", "c", "m", "c", "r"},
			uncorrelated: 2,
		},
		{
			name: "turn index root",
			key:  TurnKey{RuntimeID: "runtime-a", Index: 2},
			in: lines(
				start("t1", "", turnMD(1)),
				start("a", "t1", nil),
				start("t2", "", turnMD(2)),
				start("b", "t2", nil),
				rec{kind: KindScope, cat: ScopeStart, uuid: "g", parent: "b"},
				end("t2", ""),
			),
			want:         []string{"t2", "b", "g", "t2"},
			uncorrelated: 2,
		},
		{
			name: "turn index is a number, on a turn-role scope start",
			key:  TurnKey{RuntimeID: "runtime-a", Index: 2},
			in: lines(
				start("s", "", turnMD("2")),
				start("n", "", map[string]any{"turn_index": 2}),
				mark("k", "", turnMD(2)),
				start("f", "", turnMD(json.Number("2.0"))),
			),
			want:         []string{"f"},
			uncorrelated: 3,
		},
		{
			name: "turn-start mark root and its turn id",
			key:  keyA,
			in: lines(
				mark("h0", "", markMD("request-0", "T0")), // another request
				mark("h", "", markMD("request-1", "T")),
				start("s", "", map[string]any{"turn_id": "T"}),
				start("c", "s", nil),
				mark("o", "", map[string]any{"turn_id": "T0"}),
				end("s", ""),
			),
			want:         []string{"h", "s", "c", "s"},
			uncorrelated: 2,
		},
		{
			name: "a mark needs platform fabric and a turn id",
			key:  keyA,
			in: lines(
				mark("p", "", map[string]any{"platform": "other", "task_id": "request-1", "turn_id": "T"}),
				mark("q", "", map[string]any{"platform": "fabric", "task_id": "request-1"}),
			),
			uncorrelated: 2,
		},
		{
			name: "children before their root wait for it",
			key:  keyA,
			in: lines(
				start("c", "r", nil),
				mark("m", "c", nil),
				start("r", "", rootMD),
				end("c", "r"),
			),
			want: []string{"r", "c", "m", "c"},
		},
		{
			name:         "a parent that never comes",
			key:          keyA,
			in:           lines(start("r", "", rootMD), start("c", "zz", nil), mark("m", "c", nil)),
			want:         []string{"r"},
			uncorrelated: 2,
		},
		{
			name: "the root matches once",
			key:  keyA,
			in: lines(
				start("r", "", rootMD),
				start("r2", "", rootMD),
				mark("m", "r2", nil),
			),
			want:         []string{"r"},
			uncorrelated: 2,
		},
		{
			name: "records without a uuid",
			key:  keyA,
			in: append(lines(start("r", "", rootMD)),
				`{"kind":"mark","parent_uuid":"r","name":"no uuid"}`,
				`{"kind":"mark","uuid":7,"parent_uuid":"r"}`),
			want:         []string{"r"},
			uncorrelated: 2,
		},
		{
			name: "no request id and no index: every record of the runtime",
			key:  TurnKey{RuntimeID: "runtime-a", InvocationID: "invocation-1"},
			in: append(lines(mark("a", "", nil), start("b", "zz", nil)),
				`{"kind":"future","x":1}`),
			want: []string{"a", "b", ""},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newListener(t, Options{})
			c := &collector{}
			turn := begin(t, l, tc.key, c)
			feed(t, l, "runtime-a", tc.in...)
			st := endTurn(t, turn)
			var got []string
			for _, ev := range c.events {
				u, _ := atofOf(ev)["uuid"].(string)
				got = append(got, u)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("delivered %q, want %q", got, tc.want)
			}
			want := Stats{Correlated: len(tc.want), Uncorrelated: tc.uncorrelated}
			if st != want {
				t.Fatalf("stats %+v, want %+v", st, want)
			}
			if st.Correlated+st.Uncorrelated+st.Dropped != len(tc.in) {
				t.Fatalf("stats %+v do not account for %d records", st, len(tc.in))
			}
		})
	}
}

func TestEvents(t *testing.T) {
	l := newListener(t, Options{})
	c := &collector{}
	turn := begin(t, l, keyA, c)
	feed(t, l, "runtime-a",
		start("r", "", rootMD).line(),
		`{"kind":"mark","uuid":"m","parent_uuid":"r","name":"micros","timestamp":1767225600123456,"unknown":{"kept":true}}`,
		`{"kind":"scope","scope_category":"end","uuid":"r","name":"r"}`,
		`{"kind":"checkpoint","uuid":"k","parent_uuid":"r","name":"new kind"}`,
		`{"kind":"Bad Kind!","uuid":"z","parent_uuid":"r"}`,
	)
	before := time.Now()
	endTurn(t, turn)
	if len(c.events) != 5 {
		t.Fatalf("%d events", len(c.events))
	}
	wantKinds := []string{EventScopeStart, EventMark, EventScopeEnd, "relay.checkpoint", EventRecord}
	for i, ev := range c.events {
		if ev.Kind != wantKinds[i] {
			t.Errorf("event %d kind %q, want %q", i, ev.Kind, wantKinds[i])
		}
		if want := "event-1-relay-" + strconv.Itoa(i+1); ev.EventID != want {
			t.Errorf("event %d id %q, want %q", i, ev.EventID, want)
		}
		md := ev.Metadata
		if md[MetaSequence] != i+1 || md[MetaRuntimeID] != "runtime-a" || md[MetaInvocationID] != "invocation-1" || md[MetaRequestID] != "request-1" {
			t.Errorf("event %d metadata %v", i, md)
		}
	}
	if ev := c.events[0]; ev.Message != "r" || ev.TimestampMillis != time.Date(2026, 3, 1, 12, 34, 56, 123456000, time.UTC).UnixMilli() {
		t.Errorf("first event %+v", ev)
	}
	ev := c.events[1]
	if ev.TimestampMillis != 1767225600123 || ev.Message != "micros" {
		t.Errorf("micros event %+v", ev)
	}
	if a := atofOf(ev); a["unknown"].(map[string]any)["kept"] != true || a["timestamp"] != json.Number("1767225600123456") {
		t.Errorf("record not kept verbatim: %v", a)
	}
	// No timestamp: the arrival time.
	if ts := c.events[2].TimestampMillis; ts <= 0 || ts > before.UnixMilli() {
		t.Errorf("fallback timestamp %d", ts)
	}
	// The event marshals to the record it carries.
	b, err := json.Marshal(c.events[1])
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Metadata struct {
			ATOF map[string]any `json:"atof"`
		} `json:"metadata"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&back); err != nil || back.Metadata.ATOF["timestamp"] != json.Number("1767225600123456") {
		t.Fatalf("round trip: %v %v", err, back.Metadata.ATOF)
	}
}

func TestRoutingWithoutRuntimeKey(t *testing.T) {
	l := newListener(t, Options{})
	ca, cb := &collector{}, &collector{}
	ta := begin(t, l, keyA, ca)

	// One active turn: a request without a runtime key feeds it fully,
	// turn index included.
	ta2key := TurnKey{RuntimeID: "runtime-a", Index: 1}
	endTurn(t, ta)
	ta = begin(t, l, ta2key, ca)
	feed(t, l, "", start("t", "", map[string]any{"nemo_relay_scope_role": "turn", "turn_index": 1}).line())
	if st := endTurn(t, ta); st.Correlated != 1 {
		t.Fatalf("single turn: %+v", st)
	}

	// Two active turns: only the request id and parent chains decide.
	ta = begin(t, l, keyA, ca)
	tb := begin(t, l, TurnKey{RuntimeID: "runtime-b", RequestID: "request-2", Index: 1}, cb)
	feed(t, l, "",
		start("rb", "", map[string]any{"nemo_fabric_request_id": "request-2"}).line(),
		start("ra", "", rootMD).line(),
		mark("mb", "rb", nil).line(),
		mark("ma", "ra", nil).line(),
		start("t", "", map[string]any{"nemo_relay_scope_role": "turn", "turn_index": 1}).line(),
		mark("orphan", "nowhere", nil).line(),
	)
	// A runtime without an active turn.
	feed(t, l, "runtime-c", mark("c", "", nil).line())
	sa, sb := endTurn(t, ta), endTurn(t, tb)
	if got := ca.uuids(); !slices.Equal(got, []string{"t", "ra", "ma"}) {
		t.Fatalf("turn a got %v", got)
	}
	if got := cb.uuids(); !slices.Equal(got, []string{"rb", "mb"}) {
		t.Fatalf("turn b got %v", got)
	}
	if sa.Uncorrelated != 0 || sb.Uncorrelated != 0 {
		t.Fatalf("stats a %+v b %+v", sa, sb)
	}
	if ls := l.Stats(); ls.Uncorrelated != 2 || ls.Discarded != 1 || ls.Records != 8 {
		t.Fatalf("listener stats %+v", ls)
	}
}

func TestBeginTurnRules(t *testing.T) {
	l := newListener(t, Options{})
	c := &collector{}
	if _, err := l.BeginTurn(TurnKey{}, c.sink); err == nil {
		t.Fatal("BeginTurn without a runtime id succeeded")
	}
	if _, err := l.BeginTurn(keyA, nil); err == nil {
		t.Fatal("BeginTurn without a sink succeeded")
	}
	turn := begin(t, l, keyA, c)
	if _, err := l.BeginTurn(keyA, c.sink); !errors.Is(err, ErrTurnActive) {
		t.Fatalf("second BeginTurn: %v", err)
	}
	other := begin(t, l, TurnKey{RuntimeID: "runtime-b"}, c)
	st := endTurn(t, turn)
	if again := endTurn(t, turn); again != st {
		t.Fatalf("second End %+v != %+v", again, st)
	}
	endTurn(t, begin(t, l, keyA, c)) // the runtime can stream its next turn
	endTurn(t, other)
	// Records outside any turn are discarded (upstream too).
	feed(t, l, "runtime-a", mark("late", "", nil).line())
	if ls := l.Stats(); ls.Discarded != 1 {
		t.Fatalf("listener stats %+v", ls)
	}
}

func children(n int) []string {
	out := lines(start("r", "", rootMD))
	for i := range n {
		out = append(out, mark("m"+strconv.Itoa(i), "r", nil).line())
	}
	return out
}

func TestFullBufferDropsAndCounts(t *testing.T) {
	l := newListener(t, Options{MaxRecords: 2, BackpressureWait: -1})
	c := &collector{gate: make(chan struct{})}
	turn := begin(t, l, keyA, c)
	in := children(5)
	feed(t, l, "runtime-a", in...)
	close(c.gate)
	st := endTurn(t, turn)
	// At most one record is in the sink and two are queued while the
	// records arrive.
	if st.Correlated+st.Dropped != len(in) || st.Dropped < len(in)-3 {
		t.Fatalf("stats %+v", st)
	}
	got := c.uuids()
	if !slices.IsSortedFunc(got, func(a, b string) int { return slices.Index(uuidsOf(in), a) - slices.Index(uuidsOf(in), b) }) {
		t.Fatalf("out of order: %v", got)
	}
}

func uuidsOf(in []string) []string {
	var out []string
	for _, line := range in {
		r, _ := ParseRecord([]byte(line))
		out = append(out, r.UUID)
	}
	return out
}

func TestByteCap(t *testing.T) {
	size := len(mark("m0", "r", nil).line())
	l := newListener(t, Options{MaxBytes: int64(size) + 10, BackpressureWait: -1})
	if l.opts.MaxRecordBytes != size+10 {
		t.Fatalf("MaxRecordBytes %d: want it capped at MaxBytes", l.opts.MaxRecordBytes)
	}
	c := &collector{gate: make(chan struct{})}
	turn := begin(t, l, keyA, c)
	in := children(4)
	feed(t, l, "runtime-a", in...)
	close(c.gate)
	st := endTurn(t, turn)
	if st.Correlated+st.Dropped != len(in) || st.Dropped < len(in)-2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestBackpressureWaitsForRoom(t *testing.T) {
	l := newListener(t, Options{MaxRecords: 1, BackpressureWait: time.Hour})
	c := &collector{gate: make(chan struct{})}
	turn := begin(t, l, keyA, c)
	in := children(20)
	done := make(chan struct{})
	go func() {
		defer close(done)
		feed(t, l, "runtime-a", in...)
	}()
	for range in {
		c.gate <- struct{}{}
	}
	<-done
	st := endTurn(t, turn)
	if st.Correlated != len(in) || st.Dropped != 0 {
		t.Fatalf("stats %+v", st)
	}
	if got := c.uuids(); !slices.Equal(got, uuidsOf(in)) {
		t.Fatalf("order %v", got)
	}
}

func TestEndGivesUpOnABlockedSink(t *testing.T) {
	l := newListener(t, Options{MaxRecords: 2, BackpressureWait: time.Hour})
	c := &collector{gate: make(chan struct{})} // never opened
	turn := begin(t, l, keyA, c)
	in := children(5)
	done := make(chan struct{})
	go func() {
		defer close(done)
		feed(t, l, "runtime-a", in...) // blocks on a full buffer
	}()
	testproc.Eventually(t, testTimeout, "a full buffer", func() bool {
		turn.mu.Lock()
		defer turn.mu.Unlock()
		return turn.offering > 0
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st := turn.End(ctx)
	<-done
	// What was queued or waiting is dropped; what came after End is the
	// listener's (discarded).
	if st.Correlated != 0 || st.Dropped < 3 || st.Dropped+l.Stats().Discarded != len(in) {
		t.Fatalf("stats %+v, listener %+v", st, l.Stats())
	}
}

func TestSinkErrorCountsAsDropped(t *testing.T) {
	l := newListener(t, Options{})
	c := &collector{err: errors.New("consumer gone")}
	turn := begin(t, l, keyA, c)
	feed(t, l, "runtime-a", children(2)...)
	if st := endTurn(t, turn); st.Dropped != 3 || st.Correlated != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestParkedRecordsAreBounded(t *testing.T) {
	l := newListener(t, Options{MaxPending: 2, MaxRecords: 4, BackpressureWait: -1})
	c := &collector{gate: make(chan struct{})}
	turn := begin(t, l, keyA, c)
	feed(t, l, "runtime-a", mark("o1", "x", nil).line(), mark("o2", "x", nil).line(), mark("o3", "x", nil).line())
	if st := turn.Stats(); st.Uncorrelated != 1 {
		t.Fatalf("after three orphans: %+v", st)
	}
	// Correlated records push parked ones out of a full buffer.
	feed(t, l, "runtime-a", children(3)...)
	close(c.gate)
	st := endTurn(t, turn)
	if st.Uncorrelated != 3 || st.Correlated+st.Dropped != 4 {
		t.Fatalf("stats %+v", st)
	}
}

func TestDrainWindow(t *testing.T) {
	l := newListener(t, Options{DrainWindow: time.Hour})
	c := &collector{}
	turn := begin(t, l, keyA, c)
	feed(t, l, "runtime-a", start("r", "", rootMD).line())
	ended := make(chan Stats)
	go func() { ended <- endTurn(t, turn) }()
	// Late records still count while End drains ...
	feed(t, l, "runtime-a", mark("late", "r", nil).line())
	// ... and the root's end closes the window at once.
	feed(t, l, "runtime-a", end("r", "").line())
	select {
	case st := <-ended:
		if st.Correlated != 3 {
			t.Fatalf("stats %+v", st)
		}
	case <-time.After(testTimeout):
		t.Fatal("End did not return after the root scope ended")
	}

	// A root that ended before End: no window at all.
	turn = begin(t, l, keyA, c)
	feed(t, l, "runtime-a", start("r", "", rootMD).line(), end("r", "").line())
	go func() { ended <- endTurn(t, turn) }()
	select {
	case <-ended:
	case <-time.After(testTimeout):
		t.Fatal("End waited although the root scope had ended")
	}
}

func TestUploadsCountedPerTurn(t *testing.T) {
	l := newListener(t, Options{})
	rc := dial(t, l)
	rc.send(post(target, "Transfer-Encoding: chunked") + chunk(mark("early", "", nil).line()+"\n"))
	testproc.Eventually(t, testTimeout, "the early record", func() bool { return l.Stats().Discarded == 1 })
	c := &collector{}
	turn := begin(t, l, keyA, c)
	if st := turn.Stats(); st.Uploads != 1 {
		t.Fatalf("an upload open at BeginTurn is not counted: %+v", st)
	}
	rc.send(chunk(start("r", "", rootMD).line()+"\n") + lastChunk)
	if resp, _ := rc.response(); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if st := endTurn(t, turn); st.Correlated != 1 || st.Uploads != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestConcurrentRuntimesAndUploads(t *testing.T) {
	const runtimes, uploads, perUpload = 3, 3, 200
	l := newListener(t, Options{MaxRecords: 8, BackpressureWait: time.Hour})
	type rt struct {
		key  TurnKey
		c    *collector
		turn *Turn
	}
	var rts []*rt
	for i := range runtimes {
		id := strconv.Itoa(i)
		r := &rt{key: TurnKey{RuntimeID: "runtime-" + id, InvocationID: "invocation-" + id, RequestID: "request-" + id}, c: &collector{}}
		r.turn = begin(t, l, r.key, r.c)
		rts = append(rts, r)
	}
	var wg sync.WaitGroup
	for _, r := range rts {
		// The root first, so that every child finds its parent.
		rc := dial(t, l)
		path := "/atof?runtime=" + r.key.RuntimeID
		rc.send(sized(path, ndjson(start(r.key.RuntimeID, "", map[string]any{"nemo_fabric_request_id": r.key.RequestID}))))
		if resp, _ := rc.response(); resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		for u := range uploads {
			rc := dial(t, l)
			wg.Add(1)
			go func() {
				defer wg.Done()
				bw := bufio.NewWriter(rc.c)
				bw.WriteString(post(path, "Transfer-Encoding: chunked"))
				for i := range perUpload {
					id := fmt.Sprintf("%s/%d/%d", r.key.RuntimeID, u, i)
					bw.WriteString(chunk(mark(id, r.key.RuntimeID, nil).line() + "\n"))
					if i%16 == 0 {
						bw.Flush()
					}
				}
				bw.WriteString(lastChunk)
				if err := bw.Flush(); err != nil {
					t.Errorf("upload: %v", err)
					return
				}
				resp, err := http.ReadResponse(rc.br, nil)
				if err != nil || resp.StatusCode != 200 {
					t.Errorf("upload response: %v %v", resp, err)
				}
			}()
		}
	}
	wg.Wait()
	for _, r := range rts {
		st := endTurn(t, r.turn)
		if st.Correlated != 1+uploads*perUpload || st.Dropped+st.Uncorrelated != 0 || st.Uploads != 1+uploads {
			t.Fatalf("%s: stats %+v", r.key.RuntimeID, st)
		}
		next := map[string]int{}
		for _, u := range r.c.uuids()[1:] {
			f := strings.Split(u, "/")
			if f[0] != r.key.RuntimeID {
				t.Fatalf("%s received %s", r.key.RuntimeID, u)
			}
			i, _ := strconv.Atoi(f[2])
			if i != next[f[1]] {
				t.Fatalf("%s: upload %s out of order: %d, want %d", f[0], f[1], i, next[f[1]])
			}
			next[f[1]]++
		}
	}
}

func TestBackpressureWaitRunsOut(t *testing.T) {
	l := newListener(t, Options{MaxRecords: 1, BackpressureWait: 10 * time.Millisecond})
	c := &collector{gate: make(chan struct{})}
	turn := begin(t, l, keyA, c)
	in := children(3)
	feed(t, l, "runtime-a", in...) // returns: each wait runs out
	close(c.gate)
	st := endTurn(t, turn)
	if st.Correlated+st.Dropped != len(in) || st.Dropped < len(in)-2 {
		t.Fatalf("stats %+v", st)
	}
}
