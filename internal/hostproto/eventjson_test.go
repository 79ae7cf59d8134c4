package hostproto

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

var eventSeeds = []string{
	`{"invocation_id":"invocation-1","event":{"kind":"output_delta","message":"hi","timestamp_millis":1764000000000,"metadata":{"index":3,"nested":{"a":[1,"x",null,true]}}}}`,
	`{"invocation_id":"i","event":{"kind":"k"}}`,
	`{"event":{"kind":"k","Message":"case"},"invocation_id":"i"}`,
	`{"invocation_id":"i","event":{"kind":"k","timestamp_millis":-5}}`,
	`{"invocation_id":"i","event":{"kind":"k","timestamp_millis":1.5}}`,
	`{"invocation_id":"i","invocation_id":"j","event":{"kind":"k"}}`,
	`{"invocation_id":"i","event":null}`,
	`{"invocation_id":"\u00e9\n","event":{"kind":"<&>","metadata":{"s":"\ud83d\ude00"}}}`,
	`{"invocation_id":"i","event":{"kind":"k","metadata":null}}`,
	`[]`, `{`, `{"invocation_id":1}`,
}

// FuzzEventParams: the fast decoder agrees with encoding/json on every
// input it accepts, and the appender's output decodes back to the same
// value and matches encoding/json's bytes.
func FuzzEventParams(f *testing.F) {
	fuzzValidJSON(f, eventSeeds, func(t *testing.T, raw []byte) {
		checkEventCodec(t, raw, fastEventParams, DecodeEventParams, (*EventParams).AppendJSON)
	})
}

var eventsSeeds = []string{
	`{"invocation_id":"invocation-1","events":[{"kind":"output_delta","message":"a","metadata":{"index":0}},{"kind":"output_delta","message":"b","timestamp_millis":5}]}`,
	`{"invocation_id":"i","events":[]}`,
	`{"invocation_id":"i","events":null}`,
	`{"invocation_id":"i","events":[null]}`,
	`{"events":[{"kind":"k","Kind":"x"}],"invocation_id":"i"}`,
	`{"invocation_id":"i","events":[{"kind":"k"}],"events":[]}`,
}

// FuzzEventsParams: the batch's fast decoder and encoder agree with
// encoding/json, as FuzzEventParams for one event.
func FuzzEventsParams(f *testing.F) {
	fuzzValidJSON(f, eventsSeeds, func(t *testing.T, raw []byte) {
		checkEventCodec(t, raw, fastEventsParams, DecodeEventsParams, (*EventsParams).AppendJSON)
	})
}

// checkEventCodec checks one message type's fast decoder (fast), decoder
// with fallback (decode) and appender against encoding/json on raw.
func checkEventCodec[T any](t *testing.T, raw []byte, fast func([]byte, *T) bool, decode func([]byte, *T) error, appendJSON func(*T, []byte) ([]byte, error)) {
	t.Helper()
	var want T
	wantErr := json.Unmarshal(raw, &want)
	var got T
	if fast(raw, &got) {
		if wantErr != nil {
			t.Fatalf("fast path accepted what encoding/json rejects (%v): %q", wantErr, raw)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("fast %#v\nstd  %#v\nfor %q", got, want, raw)
		}
	}
	var dec T
	if err := decode(raw, &dec); (err != nil) != (wantErr != nil) {
		t.Fatalf("decode err %v, encoding/json %v", err, wantErr)
	}
	if wantErr != nil {
		return
	}
	enc, err := appendJSON(&want, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	e.Encode(&want)
	if !bytes.Equal(enc, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))) {
		t.Fatalf("AppendJSON %s\nencoding/json %s", enc, buf.Bytes())
	}
}
