package runtime

import (
	"context"
	"errors"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// Error codes of the permission path.
const (
	// CodePermissionNotPending: no pending request with this id (unknown,
	// already decided, or timed out and so denied).
	CodePermissionNotPending = "permission_not_pending"
	// CodePermissionUnsupported: the runtime's host speaks protocol v1.
	CodePermissionUnsupported = "permission_unsupported"
)

// decideTimeout bounds the host's answer to a decision.
const decideTimeout = 5 * time.Second

// DecidePermission delivers decision ("allow" or "deny") on the permission
// request requestID that the running invocation invocationID raised (an
// event of kind permission_request). Any other decision is invalid.
func (r *Runtime) DecidePermission(ctx context.Context, invocationID, requestID, decision string) error {
	if decision != hostproto.PermissionAllow && decision != hostproto.PermissionDeny {
		return stateErr(CodeInvalidRequest, `decision must be "allow" or "deny"`)
	}
	if requestID == "" {
		return stateErr(CodeInvalidRequest, "a request id is required")
	}
	if r.plan.HostProtocol != contract.HostProtocolV2 {
		return stateErr(CodePermissionUnsupported, "runtime "+r.handle.RuntimeID+" uses host protocol v1, which has no permission decisions")
	}
	if st := r.State(); st != StateInvoking {
		return stateErr(CodePermissionNotPending, "runtime "+r.handle.RuntimeID+" is "+st+": no permission request is pending")
	}
	cctx, cancel := context.WithTimeout(ctx, decideTimeout)
	defer cancel()
	ok, err := r.host.DecidePermission(cctx, hostproto.PermissionDecideParams{InvocationID: invocationID, RequestID: requestID, Decision: decision})
	if errors.Is(err, errors.ErrUnsupported) {
		return stateErr(CodePermissionUnsupported, "the host has no permission decisions")
	}
	if err != nil {
		return err
	}
	if !ok {
		return stateErr(CodePermissionNotPending, "no pending permission request "+requestID)
	}
	return nil
}
