package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// splitFrames is the reference framing: split on '\n', drop one trailing
// '\r', fail on the first line over the limit, skip blank lines.
func splitFrames(data []byte, limit int) ([]string, error) {
	lines := bytes.Split(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	var out []string
	for _, l := range lines {
		l = bytes.TrimSuffix(l, []byte("\r"))
		if len(l) > limit {
			return out, ErrFrameTooLarge
		}
		if !blank(l) {
			out = append(out, string(l))
		}
	}
	return out, io.EOF
}

func FuzzFrameReader(f *testing.F) {
	f.Add([]byte("a\nb\n"), uint16(16), false)
	f.Add([]byte("\r\n\n  \n{}\r\n"), uint16(2), true)
	f.Add([]byte("12345\r\n123456\n"), uint16(5), false)
	f.Add([]byte("tail without newline\r"), uint16(64), true)
	f.Add(bytes.Repeat([]byte("x"), 9000), uint16(8999), false)
	f.Fuzz(func(t *testing.T, data []byte, maxFrame uint16, oneByte bool) {
		limit := int(maxFrame%10000) + 1
		var r io.Reader = bytes.NewReader(data)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		fr := NewFrameReader(r, limit)
		got, err := readAll(fr)
		want, wantErr := splitFrames(data, limit)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("frames (-want +got):\n%s", diff)
		}
		if !errors.Is(err, wantErr) {
			t.Fatalf("err = %v, want %v", err, wantErr)
		}
		if len(fr.buf) > max(limit+2, initialReadBuf) {
			t.Fatalf("buffer %d bytes for limit %d", len(fr.buf), limit)
		}
	})
}

func FuzzV1Response(f *testing.F) {
	for _, s := range []string{
		`{"operation":"invoke","outcome":{"status":"succeeded","output":{"status":"succeeded","output":"4"}}}`,
		`{"operation":"start","outcome":{"status":"failed","error":{"stage":"start","code":"x","message":"y"}}}`,
		`{"operation":"stop","outcome":{"status":"succeeded","output":null}}`,
		`{"operation":"stop","outcome":{"status":"succeeded"}}`,
		`{"OPERATION":"x","outcome":{"Status":"failed","error":{}}}`,
		`{"operation":"x","outcome":{"status":"failed","error":"s"}}`,
		`{"operation":"\u00ff\ud800","outcome":{"status":"succeeded","output":"\ud800"}}`,
		`[]`, `null`, `{"operation":1}`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		_, _ = DecodeV1Request(frame) // must not panic
		resp, err := DecodeV1Response(frame)
		ref, refOK := refDecodeV1Response(frame)
		if (err == nil) != refOK {
			t.Fatalf("DecodeV1Response err = %v, reference ok = %v", err, refOK)
		}
		if refOK {
			if diff := cmp.Diff(ref, resp); diff != "" {
				t.Fatalf("differs from reference (-ref +got):\n%s", diff)
			}
		}
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("error is not ErrProtocol: %v", err)
			}
			return
		}
		if resp.Operation == "" {
			t.Fatal("empty operation accepted")
		}
		switch resp.Outcome.Status {
		case V1StatusSucceeded:
			if resp.Outcome.Error != nil {
				t.Fatal("succeeded outcome carries an error")
			}
		case V1StatusFailed:
			if !isObject(resp.Outcome.Error) || resp.Outcome.Output != nil {
				t.Fatalf("bad failed outcome %+v", resp.Outcome)
			}
		default:
			t.Fatalf("status %q accepted", resp.Outcome.Status)
		}
		enc, err := EncodeV1Response(resp)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if bytes.ContainsAny(enc, "\r\n") {
			t.Fatalf("encoded frame has a line break: %q", enc)
		}
		back, err := DecodeV1Response(enc)
		if err != nil {
			t.Fatalf("decode re-encoded %q: %v", enc, err)
		}
		norm := func(r V1Response) V1Response {
			for _, raw := range []*json.RawMessage{&r.Outcome.Output, &r.Outcome.Error} {
				if *raw == nil {
					continue
				}
				var b bytes.Buffer
				if err := json.Compact(&b, *raw); err != nil {
					t.Fatalf("raw field is not JSON: %v", err)
				}
				*raw = b.Bytes()
			}
			if r.Outcome.Status == V1StatusSucceeded && r.Outcome.Output == nil {
				r.Outcome.Output = json.RawMessage("null")
			}
			return r
		}
		if diff := cmp.Diff(norm(resp), norm(back)); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

// refDecodeV1Response is DecodeV1Response written plainly with
// encoding/json (exact keys, last duplicate wins).
func refDecodeV1Response(frame []byte) (V1Response, bool) {
	str := func(raw json.RawMessage) (string, bool) {
		var s string
		if raw == nil {
			return "", true
		}
		return s, json.Unmarshal(raw, &s) == nil
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(frame, &top) != nil || top == nil {
		return V1Response{}, false
	}
	op, ok := str(top["operation"])
	if !ok || op == "" {
		return V1Response{}, false
	}
	oc := top["outcome"]
	if len(oc) == 0 || oc[0] != '{' {
		return V1Response{}, false
	}
	var o map[string]json.RawMessage
	if json.Unmarshal(oc, &o) != nil {
		return V1Response{}, false
	}
	status, ok := str(o["status"])
	if !ok {
		return V1Response{}, false
	}
	resp := V1Response{Operation: op, Outcome: V1Outcome{Status: status}}
	switch status {
	case V1StatusSucceeded:
		resp.Outcome.Output = o["output"]
	case V1StatusFailed:
		if e := o["error"]; len(e) == 0 || e[0] != '{' {
			return V1Response{}, false
		}
		resp.Outcome.Error = o["error"]
	default:
		return V1Response{}, false
	}
	return resp, true
}

func FuzzConnFrames(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"ok":true}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"error":{"code":1001,"message":"busy"}}` + "\n",
		`{"jsonrpc":"2.0","id":7,"method":"health","params":{}}` + "\n" + `{"jsonrpc":"2.0","method":"event","params":{"seq":0}}` + "\n",
		`{"jsonrpc":"2.0","method":"event"}` + "\r\n\r\n" + `{"jsonrpc":"2.0","id":1,"result":null}`,
		"[]\n{}\nnull\n1\n\"s\"\n",
		`{"jsonrpc":"2.0","id":{"x":1},"method":"m"}` + "\n",
		`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}` + "\n",
		"not json\n",
		string(bytes.Repeat([]byte("x"), 5000)) + "\n",
	} {
		f.Add([]byte(s))
	}
	handler := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "fail" {
			return nil, NewError(CodeAppMin, "failed")
		}
		return req.Params, nil
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		synctest.Test(t, func(t *testing.T) { fuzzConnFrames(t, data, handler) })
	})
}

// fuzzConnFrames feeds data to a Conn with one call pending, in a bubble
// (synctest) so that the call is known to wait before Run reads.
func fuzzConnFrames(t *testing.T, data []byte, handler Handler) {
	c := NewConn(bytes.NewReader(data), io.Discard, Options{MaxFrame: 4096, Handler: handler, InboundQueue: 4, MaxConcurrency: 4})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// One call (id 1) is pending before Run reads anything, so inputs
	// that answer it exercise response matching deterministically.
	callDone := make(chan error, 1)
	go func() {
		var out json.RawMessage
		callDone <- c.Call(ctx, "probe", map[string]int{"n": 1}, &out)
	}()
	synctest.Wait() // the call waits for its answer
	err := c.Run(ctx)
	if err != nil && !errors.Is(err, ErrProtocol) && !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Run = %v", err)
	}
	select {
	case <-callDone:
	case <-ctx.Done():
		t.Fatal("pending call not released after Run returned")
	}
	if n := c.active.Load(); n != 0 {
		t.Fatalf("%d handlers still active after Run", n)
	}
}
