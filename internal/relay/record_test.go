package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestParseRecord(t *testing.T) {
	line := `  {"kind":"scope","scope_category":"start","atof_version":"0.1","uuid":"u1","parent_uuid":null,` +
		`"timestamp":"2026-03-01T12:34:56.123456Z","name":"gpt","attributes":["streaming"],"category":"llm",` +
		`"category_profile":{"model_name":"gpt"},"data":{"in":[1,2]},"data_schema":null,` +
		`"metadata":{"turn_index":3,"nemo_fabric_request_id":"request-1"},"vendor":{"x":1}}` + "\r"
	r, err := ParseRecord([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != KindScope || r.ScopeCategory != ScopeStart || r.ATOFVersion != "0.1" || r.UUID != "u1" ||
		r.ParentUUID != "" || r.Name != "gpt" || r.Category != "llm" || len(r.Attributes) != 1 ||
		r.CategoryProfile["model_name"] != "gpt" || r.Metadata["nemo_fabric_request_id"] != "request-1" {
		t.Fatalf("parsed %+v", r)
	}
	if !r.IsScopeStart() || r.IsScopeEnd() {
		t.Fatal("scope phase")
	}
	if r.Size != len(strings.TrimSpace(line)) {
		t.Fatalf("Size %d", r.Size)
	}
	if len(r.Extra) != 1 || r.Extra["vendor"].(map[string]any)["x"] != json.Number("1") {
		t.Fatalf("Extra %v", r.Extra)
	}
	if !r.metaIntEquals("turn_index", 3) || r.metaIntEquals("turn_index", 4) {
		t.Fatal("turn_index")
	}
	if got, ok := r.Time(); !ok || !got.Equal(time.Date(2026, 3, 1, 12, 34, 56, 123456000, time.UTC)) {
		t.Fatalf("Time %v %v", got, ok)
	}
	if obj := r.Object(); len(obj) != 14 || obj["data_schema"] != nil {
		t.Fatalf("Object %v", obj)
	}
}

func TestParseRecordKeepsMistypedFields(t *testing.T) {
	r, err := ParseRecord([]byte(`{"kind":1,"uuid":["x"],"parent_uuid":5,"metadata":"m","attributes":[1],"timestamp":true,"category_profile":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != "" || r.UUID != "" || r.ParentUUID != "" || r.Metadata != nil || r.Attributes != nil || r.Timestamp != nil {
		t.Fatalf("typed fields set from mistyped values: %+v", r)
	}
	if len(r.Extra) != 7 {
		t.Fatalf("Extra %v", r.Extra)
	}
	if _, ok := r.Time(); ok {
		t.Fatal("Time from a boolean")
	}
}

func TestParseRecordRejects(t *testing.T) {
	for _, line := range []string{
		"", "  ", "[]", `"s"`, "1", "null", "{", `{"a":1} {"b":2}`, `{"a":1}x`, `{"a":1}}`,
		"{\"a\":\"\xff\"}", `{"a":1,}`, "\x00{}",
	} {
		if r, err := ParseRecord([]byte(line)); err == nil || !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseRecord(%q) = %+v, %v; want ErrMalformed", line, r, err)
		}
	}
	if _, err := ParseRecord([]byte(strings.Repeat("[", 20000) + "{")); err == nil {
		t.Error("deep nesting accepted")
	}
	if _, err := ParseRecord([]byte(`{"d":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`)); err == nil {
		t.Error("nesting beyond the decoder's depth accepted")
	}
}

func TestRecordTime(t *testing.T) {
	cases := map[string]int64{
		`"2026-01-01T00:00:00.5Z"`:      time.Date(2026, 1, 1, 0, 0, 0, 5e8, time.UTC).UnixMicro(),
		`"2026-01-01T01:00:00+01:00"`:   time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(),
		`1767225600123456`:              1767225600123456,
		`1.767225600123456e15`:          1767225600123456,
		`"yesterday"`:                   -1,
		`1e400`:                         -1,
		`"2026-01-01T00:00:00"`:         -1, // no offset
		`"2026-01-01 00:00:00Z"`:        -1,
		`-1`:                            -1,
		`9223372036854775807123456789`:  -1,
		`12345678901234567890123456789`: -1,
	}
	for ts, want := range cases {
		r, err := ParseRecord([]byte(`{"timestamp":` + ts + `}`))
		if err != nil {
			t.Fatalf("%s: %v", ts, err)
		}
		got, ok := r.Time()
		switch {
		case want == -1 && ts == `-1`:
			if !ok || got.UnixMicro() != -1 {
				t.Errorf("%s: %v %v", ts, got, ok)
			}
		case want == -1:
			if ok {
				t.Errorf("%s: accepted as %v", ts, got)
			}
		case !ok || got.UnixMicro() != want:
			t.Errorf("%s: %v %v, want %d", ts, got.UnixMicro(), ok, want)
		}
	}
}

func readAll(t *testing.T, lr *LineReader) (recs []string, tooLarge int, err error) {
	t.Helper()
	for {
		line, err := lr.Next()
		switch {
		case err == io.EOF:
			return recs, tooLarge, nil
		case errors.Is(err, ErrRecordTooLarge):
			tooLarge++
		case err != nil:
			return recs, tooLarge, err
		default:
			recs = append(recs, string(line))
		}
	}
}

func TestLineReader(t *testing.T) {
	cases := []struct {
		name     string
		body     string
		max      int
		want     []string
		tooLarge int
	}{
		{"lines", "a\nbb\nccc\n", 10, []string{"a", "bb", "ccc"}, 0},
		{"CRLF and blanks", "a\r\n\r\n  \n\tb \r\n", 10, []string{"a", "b"}, 0},
		{"last line without newline", "a\nb", 10, []string{"a", "b"}, 0},
		{"exactly the limit", "12345\n", 5, []string{"12345"}, 0},
		{"the limit counts the CR", "12345\r\n", 5, nil, 1},
		{"over the limit", "123456\nok\n", 5, []string{"ok"}, 1},
		{"over the limit at the end", "ok\n123456", 5, []string{"ok"}, 1},
		{"empty", "", 5, nil, 0},
		{"several oversized", "1234567\n1234567\nx\n", 5, []string{"x"}, 2},
	}
	for _, tc := range cases {
		for _, one := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tc.body)
			if one {
				r = iotest.OneByteReader(r)
			}
			recs, tooLarge, err := readAll(t, NewLineReader(r, tc.max))
			if err != nil || strings.Join(recs, "|") != strings.Join(tc.want, "|") || tooLarge != tc.tooLarge {
				t.Errorf("%s (one byte %v): %q, %d too large, %v", tc.name, one, recs, tooLarge, err)
			}
		}
	}
}

func TestLineReaderLongLinesStayBounded(t *testing.T) {
	const limit = 100 << 10 // larger than the read buffer
	ok := strings.Repeat("a", limit)
	body := ok + "\n" + strings.Repeat("b", 10*limit) + "\n" + ok
	lr := NewLineReader(strings.NewReader(body), limit)
	recs, tooLarge, err := readAll(t, lr)
	if err != nil || len(recs) != 2 || tooLarge != 1 || recs[0] != ok || recs[1] != ok {
		t.Fatalf("%d records, %d too large, %v", len(recs), tooLarge, err)
	}
	if cap(lr.line) > limit+1 {
		t.Fatalf("line buffer grew to %d", cap(lr.line))
	}
}

func TestLineReaderError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("a\npartial"), iotest.ErrReader(boom))
	recs, _, err := readAll(t, NewLineReader(r, 100))
	if !errors.Is(err, boom) || len(recs) != 1 {
		t.Fatalf("%q %v: the partial line before an error is not a record", recs, err)
	}
}

// FuzzATOFBody feeds arbitrary bodies through the body parser, the record
// parser and the correlator. They must never panic, never return a record
// over the limit, and account for every record.
func FuzzATOFBody(f *testing.F) {
	f.Add([]byte(ndjson(start("r", "", rootMD), mark("m", "r", nil), end("r", ""))), uint8(0))
	f.Add([]byte("{\"kind\":\"mark\",\"uuid\":\"m\",\"parent_uuid\":\"r\"}\r\n\n{broken\n[]\n\xff\xfe\n"), uint8(1))
	f.Add([]byte(strings.Repeat("x", 300)+"\n"+`{"uuid":"a","metadata":{"turn_index":1.0,"nemo_relay_scope_role":"turn"},"kind":"scope","scope_category":"start"}`), uint8(2))
	f.Add([]byte(`{"kind":"mark","uuid":"h","metadata":{"platform":"fabric","task_id":"request-1","turn_id":"T"}}`+"\n"+`{"uuid":"s","metadata":{"turn_id":"T"},"timestamp":1e300}`), uint8(3))
	f.Fuzz(func(t *testing.T, body []byte, mode uint8) {
		const limit = 256
		var r io.Reader = bytes.NewReader(body)
		if mode&1 != 0 {
			r = iotest.OneByteReader(r)
		}
		key := keyA
		if mode&2 != 0 {
			key = TurnKey{RuntimeID: "runtime-a", Index: 1}
		}
		l := &Listener{opts: Options{MaxRecords: 8, MaxBytes: 4 << 10, BackpressureWait: -1}.withDefaults()}
		turn := &Turn{l: l, key: key, matchAll: key.RequestID == "" && key.Index == 0, wake: make(chan struct{}), scopes: map[string]struct{}{}, rootEnded: make(chan struct{})}
		turn.ctx, turn.cancel = context.WithCancel(context.Background())
		defer turn.cancel()
		lr := NewLineReader(r, limit)
		records := 0
		for {
			line, err := lr.Next()
			if err == io.EOF {
				break
			}
			if errors.Is(err, ErrRecordTooLarge) {
				continue
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if len(line) == 0 || len(line) > limit {
				t.Fatalf("record of %d bytes", len(line))
			}
			rec, err := ParseRecord(line)
			if err != nil {
				continue
			}
			if rec.Size > limit || rec.Object() == nil {
				t.Fatalf("record %+v", rec)
			}
			rec.Time()
			if k := EventKind(rec); !strings.HasPrefix(k, "relay.") {
				t.Fatalf("kind %q", k)
			}
			records++
			if !turn.offer(rec, mode&4 != 0) {
				turn.stats.Uncorrelated++ // the listener would count it
			}
			if len(turn.queue) > 8 || turn.bufBytes > 4<<10 || len(turn.pending) > DefaultMaxPending {
				t.Fatalf("buffer over its bounds: %d queued, %d bytes, %d parked", len(turn.queue), turn.bufBytes, len(turn.pending))
			}
		}
		st := turn.stats
		if st.Uncorrelated+st.Dropped+len(turn.queue)+len(turn.pending) != records {
			t.Fatalf("%d records, stats %+v, %d queued, %d parked", records, st, len(turn.queue), len(turn.pending))
		}
		for _, it := range turn.queue {
			ev := turn.event(it, 1)
			if _, err := json.Marshal(ev); err != nil {
				t.Fatalf("event does not marshal: %v", err)
			}
		}
	})
}
