package fabric

import "context"

// Permission decisions for DecidePermission.
const (
	PermissionAllow = "allow"
	PermissionDeny  = "deny"
)

// DecidePermission answers a permission request that the running
// invocation invocationID raised as an event of kind "permission_request"
// (its metadata carries "request_id"). decision is PermissionAllow or
// PermissionDeny. It fails with a *StateError: code
// "permission_not_pending" when no such request waits (unknown, already
// decided, or timed out, which denies), "permission_unsupported" on a v1
// host, "invalid_request" for another decision. The adapter emits every
// decision as a "permission_decision" event.
func (r *Runtime) DecidePermission(ctx context.Context, invocationID, requestID, decision string) error {
	return r.rt.DecidePermission(ctx, invocationID, requestID, decision)
}
