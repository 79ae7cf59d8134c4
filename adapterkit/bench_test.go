package adapterkit

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// BenchmarkV2Invoke measures one invoke round trip through Serve over an
// in-process pipe, core side included.
func BenchmarkV2Invoke(b *testing.B) {
	c := startV2(b, &testAdapter{})
	if err := c.call(hostproto.OpStart, startParams("runtime-1"), nil); err != nil {
		b.Fatal(err)
	}
	p := invokeParams("runtime-1", "invocation-1", "hello there")
	var res contract.AgentRunResult
	b.ReportAllocs()
	for b.Loop() {
		if err := c.call(hostproto.OpInvoke, p, &res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkV1Invoke measures one v1 invoke round trip through Serve.
func BenchmarkV1Invoke(b *testing.B) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), &testAdapter{}, WithProtocol(contract.HostProtocolV1), WithStreams(inR, outW), WithSignals(false), WithLogger(discardLogger()))
	}()
	out := bufio.NewReader(outR)
	start, _ := json.Marshal(map[string]any{"operation": "start", "payload": startParams("runtime-1")})
	invoke, _ := json.Marshal(map[string]any{"operation": "invoke", "payload": invokeParams("runtime-1", "invocation-1", "hello there")})
	start, invoke = append(start, '\n'), append(invoke, '\n')
	go inW.Write(start)
	if _, err := out.ReadSlice('\n'); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		inW.Write(invoke)
		if _, err := out.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	inW.Close()
	outR.Close()
	<-served
}
