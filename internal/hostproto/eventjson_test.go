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
	for _, s := range eventSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // wire hands over only valid single values
		}
		var want EventParams
		wantErr := json.Unmarshal(raw, &want)
		var fast EventParams
		if fastEventParams(raw, &fast) {
			if wantErr != nil {
				t.Fatalf("fast path accepted what encoding/json rejects (%v): %q", wantErr, raw)
			}
			if !reflect.DeepEqual(fast, want) {
				t.Fatalf("fast %#v\nstd  %#v\nfor %q", fast, want, raw)
			}
		}
		var got EventParams
		if err := DecodeEventParams(raw, &got); (err != nil) != (wantErr != nil) {
			t.Fatalf("DecodeEventParams err %v, encoding/json %v", err, wantErr)
		}
		if wantErr != nil {
			return
		}
		enc, err := want.AppendJSON(nil)
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
	for _, s := range eventsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		var want EventsParams
		wantErr := json.Unmarshal(raw, &want)
		var fast EventsParams
		if fastEventsParams(raw, &fast) {
			if wantErr != nil {
				t.Fatalf("fast path accepted what encoding/json rejects (%v): %q", wantErr, raw)
			}
			if !reflect.DeepEqual(fast, want) {
				t.Fatalf("fast %#v\nstd  %#v\nfor %q", fast, want, raw)
			}
		}
		var got EventsParams
		if err := DecodeEventsParams(raw, &got); (err != nil) != (wantErr != nil) {
			t.Fatalf("DecodeEventsParams err %v, encoding/json %v", err, wantErr)
		}
		if wantErr != nil {
			return
		}
		enc, err := want.AppendJSON(nil)
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
	})
}
