package supervisor

import (
	"context"
	"fmt"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// maxTurns is how many recent turns an agent keeps for status.
const maxTurns = 20

// recordTurn records a turn of an owned runtime (server.Options.TurnEnded).
func (s *Supervisor) recordTurn(agent, runtimeID string, started time.Time, res *contract.RunResult) {
	s.mu.Lock()
	a := s.agents[agent]
	s.mu.Unlock()
	if a == nil {
		return
	}
	t := supervisorproto.Turn{RuntimeID: runtimeID, InvocationID: res.InvocationID, RequestID: res.RequestID, Status: res.Status,
		StartedAtMillis: started.UnixMilli(), DurationMillis: time.Since(started).Milliseconds()}
	if res.Error != nil {
		t.ErrorCode = res.Error.Code
	}
	if u := res.Usage; u != nil {
		t.InputTokens, t.OutputTokens, t.CostUSD = u.InputTokens, u.OutputTokens, u.CostUSD
	}
	a.mu.Lock()
	a.recent = append(a.recent, t)
	if len(a.recent) > maxTurns {
		a.recent = a.recent[len(a.recent)-maxTurns:]
	}
	a.mu.Unlock()
}

// ErrNoRuntime: the agent has no runtime to follow (not deployed, not
// started yet, on-demand and idle, or between restarts).
var ErrNoRuntime = fmt.Errorf("supervisor: the agent has no running runtime")

// Follow attaches to the turns of agent's current runtime from the record
// after after (fabric.Runtime.Follow): the console's live view. runtimeID,
// when set, must be the current runtime (a watcher that resumes after the
// agent restarted starts over on the new runtime, from 0).
func (s *Supervisor) Follow(ctx context.Context, agent, runtimeID string, after uint64) (*fabric.Stream, string, error) {
	s.mu.Lock()
	a := s.agents[agent]
	s.mu.Unlock()
	if a == nil {
		return nil, "", fmt.Errorf("%w: %q is not an agent of the deployment", ErrNoRuntime, agent)
	}
	a.mu.Lock()
	rt := a.rt
	a.mu.Unlock()
	if rt == nil {
		return nil, "", ErrNoRuntime
	}
	if runtimeID != "" && runtimeID != rt.ID() {
		after = 0
	}
	st, err := rt.Follow(ctx, after)
	return st, rt.ID(), err
}
