package access

import (
	"net/url"
	"testing"
)

// Every decoder of outside input: never a panic, and an accepted request
// is one the gateway can run.

func FuzzDecodeResponsesCreate(f *testing.F) {
	for _, s := range []string{`{"model":"a","input":"hi"}`, `{"model":"a","input":[{"role":"user","content":[{"type":"input_text","text":"x"}]}],"stream":true}`,
		`{"model":"a","input":"x","conversation":{"id":"conv_1"}}`, `{"model":"a","input":[{"type":"function_call_output"}]}`, `[]`, `{"metadata":{"k":"v"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, e := decodeResponsesCreate(b)
		if (req == nil) == (e == nil) {
			t.Fatalf("req %v, err %v", req, e)
		}
		if req != nil && (req.Model == "" || req.Input == "" || len(req.Fingerprint) == 0 || (req.Conversation != "" && req.PreviousResponseID != "")) {
			t.Fatalf("accepted %+v", req)
		}
	})
}

func FuzzDecodeChatCreate(f *testing.F) {
	for _, s := range []string{`{"model":"a","messages":[{"role":"user","content":"hi"}]}`, `{"model":"a","messages":[{"role":"system","content":"x"},{"role":"user","content":"y"}]}`,
		`{"model":"a","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":[{"type":"text","text":"t"}]}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, e := decodeChatCreate(b)
		if (req == nil) == (e == nil) {
			t.Fatalf("req %v, err %v", req, e)
		}
		if req != nil && (req.Model == "" || req.Input == "") {
			t.Fatalf("accepted %+v", req)
		}
	})
}

func FuzzDecodeRetrieve(f *testing.F) {
	f.Add("stream=true&starting_after=3", "", []byte(nil))
	f.Add("starting_after=1", "text/event-stream", []byte(`{"stream":true}`))
	f.Add("starting_after=-5", "", []byte(`{"starting_after":-9}`))
	f.Fuzz(func(t *testing.T, query, accept string, body []byte) {
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		o, e := decodeRetrieve(q, accept, body)
		if e == nil && o.After < -1 {
			t.Fatalf("cursor %d accepted", o.After)
		}
	})
}

func FuzzParseIdempotencyKey(f *testing.F) {
	for _, s := range []string{`"abc"`, "abc", `""`, " \"x\" ", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, e := parseIdempotencyKey([]string{s})
		if e == nil && (len(k) == 0 || len(k) > 255) {
			t.Fatalf("key %q accepted", k)
		}
	})
}

func FuzzParseToken(f *testing.F) {
	_, _, tok := newToken()
	f.Add(tok)
	f.Add("faba_")
	f.Add("Bearer " + tok)
	f.Fuzz(func(t *testing.T, s string) {
		id, secret, ok := parseToken(bearer("Bearer " + s))
		if ok && (len(id) != keyIDLen || len(secret) != secretLen) {
			t.Fatalf("parsed %q", s)
		}
	})
}
