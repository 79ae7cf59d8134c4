package adapterkit

import (
	"context"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// Each Serve keeps its own pending permission requests: a decision sent to
// one host does not reach a request pending on another in the same
// process, and the host it was raised on delivers it.
func TestPermissionRequestsArePerHost(t *testing.T) {
	asking := func() *testAdapter {
		return &testAdapter{invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
			d := AskPermission(ctx, inv.Events, PermissionRequest{Title: "rm -rf /", Timeout: testTimeout})
			return contract.AgentRunResult{Status: contract.StatusSucceeded, Output: d.Decision + "/" + d.Source}, nil
		}}
	}
	a, b := startV2(t, asking()), startV2(t, asking())
	a.start("runtime-1")
	b.start("runtime-1")
	results := make(chan contract.AgentRunResult, 2)
	for _, c := range []*v2Core{a, b} {
		go func() {
			var res contract.AgentRunResult
			if err := c.call(hostproto.OpInvoke, invokeParams("runtime-1", "invocation-1", "x"), &res); err != nil {
				t.Errorf("invoke: %v", err)
			}
			results <- res
		}()
	}
	idA, idB := pendingRequest(t, a), pendingRequest(t, b)

	decide := func(c *v2Core, id, decision string) bool {
		var r hostproto.PermissionDecideResult
		c.mustCall(hostproto.MethodPermissionDecide, hostproto.PermissionDecideParams{InvocationID: "invocation-1", RequestID: id, Decision: decision}, &r)
		return r.Accepted
	}
	if decide(a, idB, PermissionAllow) {
		t.Fatal("host a took a decision for host b's request")
	}
	if !decide(a, idA, PermissionAllow) || !decide(b, idB, "whatever") {
		t.Fatal("a host refused a decision for its own request")
	}
	got := map[string]bool{}
	for range 2 {
		got[(<-results).Output.(string)] = true
	}
	if !got["allow/caller"] || !got["deny/caller"] {
		t.Errorf("decisions %v, want allow/caller and deny/caller (anything but allow denies)", got)
	}
}

// pendingRequest waits for c's permission_request event and returns its id.
func pendingRequest(t *testing.T, c *v2Core) string {
	t.Helper()
	for deadline := time.Now().Add(testTimeout); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		for _, ev := range c.eventsSnapshot() {
			if ev.Event.Kind == EventPermissionRequest {
				id, _ := ev.Event.Metadata["request_id"].(string)
				return id
			}
		}
	}
	t.Fatal("no permission_request event")
	return ""
}
