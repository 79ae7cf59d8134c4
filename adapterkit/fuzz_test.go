package adapterkit

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/wire"
)

// FuzzServeV1 feeds arbitrary input to a v1 host: it must neither panic nor
// hang, every line it writes must be a valid v1 response, and it writes at
// most one line per request line.
func FuzzServeV1(f *testing.F) {
	line := func(op string, payload any) string {
		b, _ := json.Marshal(map[string]any{"operation": op, "payload": payload})
		return string(b) + "\n"
	}
	start := line("start", startParams("runtime-1"))
	invoke := line("invoke", invokeParams("runtime-1", "i1", "hello"))
	stop := line("stop", hostproto.StopParams{RuntimeID: "runtime-1"})
	f.Add([]byte(start + invoke + stop))
	f.Add([]byte(start + invoke + invoke))
	f.Add([]byte(invoke + start + `{"operation":"invoke","payload":{"runtime_context":{"runtime_id":"runtime-1"},"request":{"input":"fail"}}}` + "\n" + invoke))
	f.Add([]byte(start + `{"operation":"invoke","payload":{"runtime_context":{"runtime_id":"runtime-1"},"request":{"input":"panic"}}}` + "\n" + invoke))
	f.Add([]byte("not json\n" + start))
	f.Add([]byte(`{"operation":"explode","payload":{}}` + "\n\r\n" + `[]` + "\n"))
	f.Add([]byte(start + `{"operation":"stop","payload":{"runtime_id":7}}`))
	f.Add([]byte("\x00\xff{\n}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a := &testAdapter{invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
			switch inv.Request.Input {
			case "fail":
				return contract.AgentRunResult{}, &Error{Code: "fuzz_failure", Message: "m"}
			case "panic":
				panic("fuzz panic")
			case "bad":
				return contract.AgentRunResult{Status: "weird"}, nil
			}
			return contract.AgentRunResult{Status: contract.StatusSucceeded, Output: inv.Request.Input}, nil
		}}
		var out bytes.Buffer
		done := make(chan error, 1)
		go func() {
			done <- Serve(context.Background(), a, WithProtocol(contract.HostProtocolV1), WithStreams(bytes.NewReader(data), &out),
				WithSignals(false), WithLogger(discardLogger()), WithMaxFrame(1<<16))
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Serve hung on %q", data)
		}
		requests := 0
		for l := range strings.Lines(string(data)) {
			if strings.Trim(l, " \t\r\n") != "" { // wire's blank lines
				requests++
			}
		}
		responses := 0
		for l := range strings.Lines(out.String()) {
			responses++
			if !strings.HasSuffix(l, "\n") {
				t.Fatalf("unterminated response %q", l)
			}
			// Upstream echoes any string operation, the empty one too,
			// which the core's decoder rejects; check the rest.
			resp := strings.Replace(l[:len(l)-1], `{"operation":"",`, `{"operation":"empty",`, 1)
			if _, err := wire.DecodeV1Response([]byte(resp)); err != nil {
				t.Fatalf("invalid response %q: %v", l, err)
			}
		}
		if responses > requests {
			t.Fatalf("%d responses to %d requests", responses, requests)
		}
		if a.starts.Load() > 1 || a.stops.Load() > a.starts.Load() {
			t.Fatalf("%d starts, %d stops", a.starts.Load(), a.stops.Load())
		}
		if a.starts.Load() == 1 && a.stops.Load() != 1 {
			t.Fatal("a started session was not stopped")
		}
	})
}
