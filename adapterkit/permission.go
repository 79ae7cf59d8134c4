package adapterkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/permission"
)

// Permission decisions.
const (
	PermissionAllow = hostproto.PermissionAllow
	PermissionDeny  = hostproto.PermissionDeny
)

// Event kinds of the permission path.
const (
	EventPermissionRequest  = hostproto.EventPermissionRequest
	EventPermissionDecision = hostproto.EventPermissionDecision
)

// DefaultPermissionTimeout bounds the wait for a decision when a request
// names none.
const DefaultPermissionTimeout = 60 * time.Second

// PermissionRequest is what a session asks a caller to decide.
type PermissionRequest struct {
	// Title says what the harness wants to do (a command, a file edit).
	Title string
	// Metadata is added to the permission_request event (tool call id,
	// kind, raw input, the harness's options).
	Metadata map[string]any
	// Timeout bounds the wait; zero means DefaultPermissionTimeout.
	Timeout time.Duration
}

// PermissionDecision is the outcome of AskPermission.
type PermissionDecision struct {
	RequestID string
	Decision  string // PermissionAllow or PermissionDeny
	// Source is "caller" (decided through the core), "timeout" or
	// "cancelled" (the turn or host ended first).
	Source string
}

// Allowed reports whether the decision allows.
func (d PermissionDecision) Allowed() bool { return d.Decision == PermissionAllow }

// AskPermission raises a permission request as an event of kind
// permission_request (metadata: request_id, timeout_millis, title and
// req.Metadata), waits for a decision delivered through the core
// (fabric.Runtime.DecidePermission, the v2 method permission/decide), and
// emits the decision as an event of kind permission_decision. A request that nobody
// answers within its timeout, or whose ctx ends first, is denied: it is
// never allowed by default. The request is pending on the host that
// handed ev to the turn (Invocation.Events); through any other Emitter
// nobody can decide it, and it waits for its timeout.
func AskPermission(ctx context.Context, ev Emitter, req PermissionRequest) PermissionDecision {
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultPermissionTimeout
	}
	set := &permission.Set{}
	if h, ok := ev.(permission.Holder); ok {
		set = h.PermissionSet()
	}
	id := newPermissionID()
	ch := set.Add(id)
	defer set.Remove(id)
	md := map[string]any{}
	for k, v := range req.Metadata {
		md[k] = v
	}
	md["request_id"] = id
	md["timeout_millis"] = timeout.Milliseconds()
	if req.Title != "" {
		md["title"] = req.Title
	}
	ev.Emit(Event{Kind: EventPermissionRequest, Message: req.Title, Metadata: md})
	t := time.NewTimer(timeout)
	defer t.Stop()
	d := PermissionDecision{RequestID: id, Decision: PermissionDeny}
	select {
	case v := <-ch:
		// Any decision other than PermissionAllow is a denial.
		if v == PermissionAllow {
			d.Decision = PermissionAllow
		}
		d.Source = "caller"
	case <-t.C:
		d.Source = "timeout"
	case <-ctx.Done():
		d.Source = "cancelled"
	}
	EmitPermissionDecision(ev, d, req.Metadata)
	return d
}

// EmitPermissionDecision emits a permission_decision event; sessions that
// decide by policy use it with Source "policy".
func EmitPermissionDecision(ev Emitter, d PermissionDecision, extra map[string]any) {
	md := map[string]any{}
	for k, v := range extra {
		md[k] = v
	}
	if d.RequestID != "" {
		md["request_id"] = d.RequestID
	}
	md["decision"] = d.Decision
	md["source"] = d.Source
	ev.Emit(Event{Kind: EventPermissionDecision, Message: d.Decision, Metadata: md})
}

// permissionSet is a host's pending permission requests.
type permissionSet = permission.Set

// decidePermission delivers a decision (permission/decide) to a pending
// AskPermission of the host and reports whether one took it.
func (h *host) decidePermission(requestID, decision string) bool {
	return h.permissions.Decide(requestID, decision)
}

func newPermissionID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "permission-" + hex.EncodeToString(b[:])
}
