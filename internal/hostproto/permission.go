package hostproto

// MethodPermissionDecide (v2 only) delivers a decision on a permission
// request an adapter raised during an invocation (an event of kind
// EventPermissionRequest). It is answered while the invoke runs.
const MethodPermissionDecide = "permission/decide"

// Event kinds of the permission path.
const (
	// EventPermissionRequest is raised by an adapter that waits for a
	// decision; its metadata carries "request_id", "timeout_millis" and
	// what the harness asked for.
	EventPermissionRequest = "permission_request"
	// EventPermissionDecision records every decision (by policy, by a
	// caller, or by the timeout), with "request_id", "decision" and
	// "source".
	EventPermissionDecision = "permission_decision"
)

// Permission decisions.
const (
	PermissionAllow = "allow"
	PermissionDeny  = "deny"
)

// PermissionDecideParams are the params of MethodPermissionDecide.
type PermissionDecideParams struct {
	InvocationID string `json:"invocation_id"`
	RequestID    string `json:"request_id"`
	Decision     string `json:"decision"`
}

// PermissionDecideResult says whether a pending request took the decision
// (false: unknown request id, already decided, or timed out).
type PermissionDecideResult struct {
	Accepted bool `json:"accepted"`
}
