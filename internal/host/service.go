package host

import (
	"context"
	"errors"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// StartService sends service_start or service_attach (method) to a v2
// host and waits for the answer. Failures carry stage prepare.
func (h *Host) StartService(ctx context.Context, method string, p hostproto.ServiceStartParams) (hostproto.ServiceStartResult, error) {
	var res hostproto.ServiceStartResult
	if h.spec.Protocol != contract.HostProtocolV2 {
		return res, errors.ErrUnsupported
	}
	if method != hostproto.MethodServiceStart && method != hostproto.MethodServiceAttach {
		return res, &Error{Op: method, Stage: contract.StagePrepare, Code: CodeProtocolError, Message: "not a service method: " + method}
	}
	err := h.call(ctx, method, p, &res)
	var he *Error
	if errors.As(err, &he) {
		he.Stage = contract.StagePrepare
	}
	return res, err
}

// AddSecrets adds values scrubbed from the host's diagnostics from now on
// (credentials learned after launch, such as those a service hands out).
func (h *Host) AddSecrets(values ...string) {
	h.stderr.mu.Lock()
	defer h.stderr.mu.Unlock()
	for _, s := range values {
		if len(s) >= 4 { // as openStderrLog
			h.stderr.secrets = append(h.stderr.secrets, s)
		}
	}
}
