package adapterkit

import (
	"context"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// stackMoves reports whether a call that needs 8 KiB more stack made the
// runtime copy the calling goroutine's stack elsewhere: a local's address
// changes only then.
//
//go:noinline
func stackMoves() bool {
	var x byte
	before := uintptr(unsafe.Pointer(&x))
	growStack(0) // its frame is 8 KiB
	return uintptr(unsafe.Pointer(&x)) != before
}

// TestRequestStack: Adapter.Start and Session.Invoke run on a goroutine
// whose stack was grown to 16 KiB before the request was decoded
// (startRequest on v2, serveV1's loop on v1): they have 8 KiB to spare
// without the runtime copying the stack under them (growStack says why
// that matters). Left to grow as it goes, the stack is copied.
func TestRequestStack(t *testing.T) {
	for _, proto := range []string{contract.HostProtocolV1, contract.HostProtocolV2} {
		t.Run(proto, func(t *testing.T) {
			var startMoved, invokeMoved atomic.Int32
			a := &testAdapter{
				start: func(context.Context, StartInput) error {
					if stackMoves() {
						startMoved.Add(1)
					}
					return nil
				},
				invoke: func(_ context.Context, inv Invocation) (contract.AgentRunResult, error) {
					if stackMoves() {
						invokeMoved.Add(1)
					}
					return contract.AgentRunResult{Status: contract.StatusSucceeded, Output: inv.Request.Input}, nil
				},
			}
			if proto == contract.HostProtocolV1 {
				c := startV1(t, a)
				c.sendOp(hostproto.OpStart, startParams("runtime-1"))
				c.expectSuccess(hostproto.OpStart)
				c.sendOp(hostproto.OpInvoke, invokeParams("runtime-1", "invocation-1", "hi"))
				c.expectSuccess(hostproto.OpInvoke)
			} else {
				c := startV2(t, a)
				c.start("runtime-1")
				var res contract.AgentRunResult
				c.mustCall(hostproto.OpInvoke, invokeParams("runtime-1", "invocation-1", "hi"), &res)
			}
			if n := startMoved.Load(); n != 0 {
				t.Error("Adapter.Start ran on a stack the runtime had to grow")
			}
			if n := invokeMoved.Load(); n != 0 {
				t.Error("Session.Invoke ran on a stack the runtime had to grow")
			}
		})
	}
}
