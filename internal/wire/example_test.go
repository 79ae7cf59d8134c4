package wire_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/fabric-runtime/fabric/internal/wire"
)

// A core and a host connected by in-memory pipes: the host answers health
// while it streams events; the core sees the events before the result.
func ExampleConn() {
	coreR, hostW := io.Pipe()
	hostR, coreW := io.Pipe()

	var host *wire.Conn
	host = wire.NewConn(hostR, hostW, wire.Options{
		Handler: wire.HandlerFunc(func(ctx context.Context, req *wire.Request) (any, error) {
			switch req.Method {
			case "health":
				return map[string]string{"outcome": "passed"}, nil
			case "invoke":
				var p struct {
					InvocationID string `json:"invocation_id"`
				}
				if err := req.UnmarshalParams(&p); err != nil {
					return nil, err
				}
				for i, msg := range []string{"thinking", "answering"} {
					ev := map[string]any{"invocation_id": p.InvocationID, "seq": i, "event": map[string]any{"kind": "progress", "message": msg}}
					if err := host.Notify(ctx, "event", ev); err != nil {
						return nil, err
					}
				}
				return map[string]string{"status": "succeeded", "output": "4"}, nil
			}
			return nil, wire.NewError(wire.CodeMethodNotFound, "unknown method "+req.Method)
		}),
	})
	core := wire.NewConn(coreR, coreW, wire.Options{
		Handler: wire.HandlerFunc(func(ctx context.Context, req *wire.Request) (any, error) {
			fmt.Printf("event %s\n", req.Params)
			return nil, nil
		}),
	})

	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Go(func() { _ = host.Run(ctx) })
	wg.Go(func() { _ = core.Run(ctx) })

	var health map[string]string
	if err := core.Call(ctx, "health", nil, &health); err != nil {
		fmt.Println(err)
	}
	fmt.Println("health", health["outcome"])

	var result json.RawMessage
	err := core.Call(ctx, "invoke", map[string]string{"invocation_id": "invocation-1"}, &result)
	fmt.Println("result", string(result), err)

	err = core.Call(ctx, "teleport", nil, nil)
	if e, ok := errors.AsType[*wire.Error](err); ok {
		fmt.Println("error", e.Code, strings.TrimPrefix(e.Message, "unknown method "))
	}

	core.Close()
	wg.Wait()
	// Output:
	// health passed
	// event {"event":{"kind":"progress","message":"thinking"},"invocation_id":"invocation-1","seq":0}
	// event {"event":{"kind":"progress","message":"answering"},"invocation_id":"invocation-1","seq":1}
	// result {"output":"4","status":"succeeded"} <nil>
	// error -32601 teleport
}

// Reading v1 responses from a host's stdout.
func ExampleDecodeV1Response() {
	stdout := strings.NewReader(`{"operation":"invoke","outcome":{"status":"succeeded","output":{"status":"succeeded","output":"4"}}}` + "\r\n" +
		`{"operation":"invoke","outcome":{"status":"done"}}` + "\n")
	fr := wire.NewFrameReader(stdout, 0)
	for {
		frame, err := fr.ReadFrame()
		if err != nil {
			break
		}
		resp, err := wire.DecodeV1Response(frame)
		if err != nil {
			fmt.Println(errors.Is(err, wire.ErrProtocol), err)
			continue
		}
		fmt.Println(resp.Operation, resp.Outcome.Status, string(resp.Outcome.Output))
	}
	// Output:
	// invoke succeeded {"status":"succeeded","output":"4"}
	// true wire: protocol violation: v1 invoke response: outcome.status "done" is not succeeded or failed
}
