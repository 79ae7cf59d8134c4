package service

import (
	"context"
	"errors"
	"strconv"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/health"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/runtime"
)

// Check runs a bounded service-scope health check. req must be normalized
// (health.Normalize) and name this service. live: the service host process
// is observed (and its adapter answers live); active: the service answers
// its request interface; ready: the adapter observes its required setup
// (for example an authenticated request succeeds). A check never changes
// the service; a timeout gives unknown (probe_timeout), never failed.
func (s *Service) Check(ctx context.Context, req contract.CheckRequest) contract.CheckReport {
	return health.Check(ctx, req, checkTarget{s})
}

type checkTarget struct{ s *Service }

func (t checkTarget) Observe() health.Observation {
	s := t.s
	s.mu.Lock()
	status := s.status
	s.mu.Unlock()
	o := health.Observation{
		Generation: s.handle.ServiceID + "/" + strconv.Itoa(s.host.Pid()),
		State:      status,
		// Services run no Fabric invocations.
		Activity: contract.ActivityIdle,
		Exited:   s.hostExited(),
	}
	switch status {
	case contract.ServiceReleased, contract.ServiceFailed:
		o.Gone, o.Reason, o.Activity = true, contract.ReasonServiceUnavailable, contract.ActivityStopped
	case contract.ServiceReleasing:
		o.Stopping, o.Reason, o.Activity = true, contract.ReasonServiceUnavailable, contract.ActivityStopping
	}
	return o
}

func (t checkTarget) Probe(ctx context.Context, level string) (hostproto.HealthResult, error) {
	res, err := t.s.host.Health(ctx, level)
	if errors.Is(err, runtime.ErrHostExited) {
		return res, health.ErrExited
	}
	return res, err
}
