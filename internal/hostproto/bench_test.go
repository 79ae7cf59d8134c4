package hostproto

import (
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

// The invoke codec's four halves on documents the size of a scripted
// invoke: what each end of the host protocol spends per turn on them.

var (
	benchPayload = []byte(`{"runtime_context":{"runtime_id":"runtime-0f3c9a","invocation_id":"invocation-7d21e0","request_id":"request-91ab44","environment":{"environment_id":"environment-local","provider":"local","control_location":"local","ownership":"fabric","workspace":"/tmp/fabric/ws","env":{"A":"1"},"connection":{},"metadata":{}},"artifacts":{"root":"/tmp/fabric/artifacts/invocation-7d21e0","artifacts":[{"name":"in","kind":"file","path":"in.txt"}]},"telemetry":{"relay_enabled":false,"env":{},"metadata":{}}},"request":{"input":"What is 2+2?","context":{"turn":1},"extensions":{}}}`)
	benchResult  = []byte(`{"status":"succeeded","output":"4","usage":{"input_tokens":12,"output_tokens":1,"total_tokens":13},"artifacts":[{"name":"transcript","kind":"log","path":"transcript.jsonl","media_type":"application/x-ndjson"}],"extensions":{}}`)
)

func BenchmarkCodec(b *testing.B) {
	var rc *contract.RuntimeContext
	var req *contract.AgentRunRequest
	if !DecodeInvokePayload(benchPayload, &rc, &req) {
		b.Fatal("fast path declined the payload")
	}
	p := InvokeParams{RuntimeContext: *rc, Request: *req}
	var r contract.AgentRunResult
	if err := DecodeRunResult(benchResult, &r); err != nil {
		b.Fatal(err)
	}
	b.Run("DecodeInvokePayload", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !DecodeInvokePayload(benchPayload, &rc, &req) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("AppendInvokeParams", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			var err error
			if buf, err = p.AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DecodeRunResult", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var got contract.AgentRunResult
			if err := DecodeRunResult(benchResult, &got); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("MarshalRunResult", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := MarshalRunResult(&r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
