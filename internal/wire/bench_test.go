package wire

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"
)

// Realistic southbound documents (sizes like a scripted invoke).
var (
	benchInvokePayload = json.RawMessage(`{"runtime_context":{"runtime_id":"runtime-0f3c9a","invocation_id":"invocation-7d21e0","request_id":"request-91ab44","environment":{"environment_id":"environment-local","provider":"local","control_location":"local","ownership":"fabric","workspace":"/tmp/fabric/ws","env":{},"connection":{},"metadata":{}},"artifacts":{"root":"/tmp/fabric/artifacts/invocation-7d21e0","artifacts":[]},"telemetry":{"relay_enabled":false,"env":{},"metadata":{}}},"request":{"input":"What is 2+2?","context":{"turn":1},"extensions":{}}}`)
	benchInvokeResult  = json.RawMessage(`{"status":"succeeded","output":"4","usage":{"input_tokens":12,"output_tokens":1,"total_tokens":13},"artifacts":[{"name":"transcript","kind":"log","path":"transcript.jsonl","media_type":"application/x-ndjson"}],"extensions":{}}`)
)

type pipeKind struct {
	name string
	make func(b *testing.B) (io.ReadCloser, io.WriteCloser)
}

var pipeKinds = []pipeKind{
	{"iopipe", func(b *testing.B) (io.ReadCloser, io.WriteCloser) { return io.Pipe() }},
	{"ospipe", func(b *testing.B) (io.ReadCloser, io.WriteCloser) {
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		return r, w
	}},
}

// BenchmarkV1RoundTrip measures one v1 invoke through the core's side of
// the wire: encode request, frame, host echo (decode, encode response),
// read frame, decode and validate the response.
func BenchmarkV1RoundTrip(b *testing.B) {
	for _, pk := range pipeKinds {
		b.Run(pk.name, func(b *testing.B) {
			coreR, hostW := pk.make(b)
			hostR, coreW := pk.make(b)
			var wg sync.WaitGroup
			wg.Go(func() { // the host
				fr, fw := NewFrameReader(hostR, 0), NewFrameWriter(hostW, 0)
				var buf []byte
				for {
					frame, err := fr.ReadFrame()
					if err != nil {
						hostW.Close()
						return
					}
					req, err := DecodeV1Request(frame)
					if err != nil {
						panic(err)
					}
					buf, err = AppendV1Response(buf[:0], V1Response{Operation: req.Operation, Outcome: V1Outcome{Status: V1StatusSucceeded, Output: benchInvokeResult}})
					if err != nil {
						panic(err)
					}
					if err := fw.WriteFrame(buf); err != nil {
						return
					}
				}
			})
			fr, fw := NewFrameReader(coreR, 0), NewFrameWriter(coreW, 0)
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				var err error
				buf, err = AppendV1Request(buf[:0], V1Request{Operation: "invoke", Payload: benchInvokePayload})
				if err != nil {
					b.Fatal(err)
				}
				if err := fw.WriteFrame(buf); err != nil {
					b.Fatal(err)
				}
				frame, err := fr.ReadFrame()
				if err != nil {
					b.Fatal(err)
				}
				resp, err := DecodeV1Response(frame)
				if err != nil || resp.Operation != "invoke" || resp.Outcome.Status != V1StatusSucceeded {
					b.Fatalf("%+v %v", resp, err)
				}
			}
			b.StopTimer()
			coreW.Close()
			wg.Wait()
			coreR.Close()
			hostR.Close()
		})
	}
}

type benchInvokeParams struct {
	RuntimeContext json.RawMessage `json:"runtime_context"`
	Request        json.RawMessage `json:"request"`
}

// BenchmarkV2Call measures one v2 invoke Call between two Conns: encode,
// queue, write, read, dispatch to a handler goroutine, respond, match.
func BenchmarkV2Call(b *testing.B) {
	for _, pk := range pipeKinds {
		b.Run(pk.name, func(b *testing.B) {
			var params benchInvokeParams
			if err := json.Unmarshal(benchInvokePayload, &params); err != nil {
				b.Fatal(err)
			}
			h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				var p benchInvokeParams
				if err := req.UnmarshalParams(&p); err != nil {
					return nil, err
				}
				return benchInvokeResult, nil
			})
			core, _, stop := benchPair(b, pk, Options{}, Options{Handler: h})
			defer stop()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				var res json.RawMessage
				if err := core.Call(ctx, "invoke", &params, &res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkV2Events measures event notifications from host to core: one op
// is one event delivered, in order, to the core's handler.
func BenchmarkV2Events(b *testing.B) {
	for _, pk := range pipeKinds {
		b.Run(pk.name, func(b *testing.B) {
			var got atomic.Int64
			done := make(chan struct{}, 1)
			var want int64
			h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				if got.Add(1) == atomic.LoadInt64(&want) {
					done <- struct{}{}
				}
				return nil, nil
			})
			_, host, stop := benchPair(b, pk, Options{Handler: h}, Options{})
			defer stop()
			type event struct {
				InvocationID string         `json:"invocation_id"`
				Seq          int            `json:"seq"`
				Event        map[string]any `json:"event"`
			}
			ev := event{InvocationID: "invocation-7d21e0", Event: map[string]any{"kind": "tool_call", "message": "read_file", "timestamp_millis": 1764441600000, "metadata": map[string]any{"path": "README.md"}}}
			ctx := context.Background()
			b.ReportAllocs()
			n := b.N
			atomic.StoreInt64(&want, int64(n))
			b.ResetTimer()
			for i := range n {
				ev.Seq = i
				if err := host.Notify(ctx, "event", &ev); err != nil {
					b.Fatal(err)
				}
			}
			<-done
		})
	}
}

// benchPair connects and runs two Conns; stop closes and joins them.
func benchPair(b *testing.B, pk pipeKind, a, o Options) (*Conn, *Conn, func()) {
	ar, bw := pk.make(b)
	br, aw := pk.make(b)
	ca, cb := NewConn(ar, aw, a), NewConn(br, bw, o)
	var wg sync.WaitGroup
	wg.Go(func() { _ = ca.Run(context.Background()) })
	wg.Go(func() { _ = cb.Run(context.Background()) })
	return ca, cb, func() {
		ca.Close()
		cb.Close()
		wg.Wait()
	}
}
