package host

import (
	"context"
	"errors"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// DecidePermission delivers a decision on a pending permission request to
// a v2 host and reports whether the request took it.
func (h *Host) DecidePermission(ctx context.Context, p hostproto.PermissionDecideParams) (bool, error) {
	if h.spec.Protocol != contract.HostProtocolV2 {
		return false, errors.ErrUnsupported
	}
	var res hostproto.PermissionDecideResult
	err := h.call(ctx, hostproto.MethodPermissionDecide, p, &res)
	return res.Accepted, err
}
