package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/agentctl"
)

// decideTimeout bounds a decision when the request names no timeout.
const decideTimeout = 10 * time.Second

// decide delivers a permission decision to a runtime's running invocation.
// It does not wait behind the invocation: decisions are answered while it
// runs.
func (s *Server) decide(req *agentctl.Request) *agentctl.Response {
	e := s.lookup(req.Agent, req.RuntimeID)
	if e == nil {
		return agentctl.Failed(req, agentctl.Errorf(agentctl.CodeRuntimeNotFound, "serve owns no runtime %s of agent %q", req.RuntimeID, req.Agent), nil)
	}
	d := decideTimeout
	if req.TimeoutSeconds > 0 {
		d = time.Duration(req.TimeoutSeconds * float64(time.Second))
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := e.rt.DecidePermission(ctx, req.InvocationID, req.RequestID, req.Decision); err != nil {
		ae := agentctl.Errorf(agentctl.CodeDecideFailed, "the decision on %s was not taken: %v", req.RequestID, err)
		var se *contract.StateError
		if errors.As(err, &se) {
			ae.Details = []*contract.ErrorInfo{{Stage: se.Stage, Code: se.Code, Message: se.Message, Retryable: se.Retryable}}
		}
		return agentctl.Failed(req, ae, nil)
	}
	resp, err := agentctl.Succeeded(req, map[string]any{"request_id": req.RequestID, "decision": req.Decision, "accepted": true})
	if err != nil {
		return agentctl.Failed(req, agentctl.Errorf(agentctl.CodeInternal, "%v", fmt.Sprint(err)), nil)
	}
	return resp
}
