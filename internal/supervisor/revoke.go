package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/renameio"

	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/deploy/desired"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// revokedFormat versions RevokedFile.
const revokedFormat = "fabric.deploy.revoked/v1alpha1"

// finalState is the state the revocation ends in.
func finalState(r *supervisorproto.Revocation) string {
	if r.Policy == supervisorproto.PolicyStop {
		return supervisorproto.StateStopped
	}
	return supervisorproto.StateDrained
}

// retirement is the drain or stop of one agent run.
type retirement struct {
	rec       *supervisorproto.Revocation
	runtimeID string
	quiet     chan struct{} // closed when no turn is in flight
	done      chan struct{} // closed when the runtime is gone
	once      sync.Once
}

type revokedJournal struct {
	FormatVersion string                                 `json:"format_version"`
	Agents        map[string]*supervisorproto.Revocation `json:"agents"`
}

// readRevoked reads the revocations journal (none: an empty map).
func readRevoked(path string) (map[string]*supervisorproto.Revocation, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]*supervisorproto.Revocation{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var j revokedJournal
	if err := decodeStrict(b, &j); err != nil {
		return nil, &agentctl.Error{Code: supervisorproto.CodeUnsupportedFormat, Message: fmt.Sprintf("%s: %v", path, err)}
	}
	if j.FormatVersion != revokedFormat {
		return nil, &agentctl.Error{Code: supervisorproto.CodeUnsupportedFormat, Message: fmt.Sprintf("%s has format %q; this supervisor reads %s", path, j.FormatVersion, revokedFormat)}
	}
	if j.Agents == nil {
		j.Agents = map[string]*supervisorproto.Revocation{}
	}
	return j.Agents, nil
}

// journalRevokedLocked writes s.revoked (s.mu held), atomically.
func (s *Supervisor) journalRevokedLocked() error {
	path := filepath.Join(s.opts.StateDir, supervisorproto.RevokedFile)
	if len(s.revoked) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	b, err := json.MarshalIndent(revokedJournal{FormatVersion: revokedFormat, Agents: s.revoked}, "", "  ")
	if err != nil {
		return err
	}
	return renameio.WriteFile(path, append(b, '\n'))
}

// refusal is the answer to a turn for a revoked agent (a.mu held).
func (a *agentRun) refusalLocked() *agentctl.Error {
	r := a.ret.rec
	return &agentctl.Error{Code: supervisorproto.CodeAgentRevoked,
		Message: fmt.Sprintf("agent %q takes no new turns: catalog serial %d revoked its package entry %s (%s; running: %s); it is %s",
			a.spec.Name, r.CatalogSerial, r.Entry, r.Reason, r.Policy, a.state),
		Metadata: map[string]any{"agent": a.spec.Name, "entry": r.Entry, "catalog_serial": r.CatalogSerial,
			"reason": r.Reason, "policy": r.Policy, "state": a.state, "revoked_at_millis": r.AtMillis}}
}

// admit opens a turn of agent unless a revocation retires it
// (server.Options.Admit); release ends the turn's count.
func (s *Supervisor) admit(agent string) (func(), *agentctl.Error) {
	s.mu.Lock()
	a := s.agents[agent]
	s.mu.Unlock()
	if a == nil {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ret != nil {
		return nil, a.refusalLocked()
	}
	a.inflight++
	return sync.OnceFunc(func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.inflight--
		if a.inflight == 0 && a.ret != nil {
			closeOnce(a.ret.quiet)
		}
	}), nil
}

func closeOnce(c chan struct{}) {
	select {
	case <-c:
	default:
		close(c)
	}
}

func (s *Supervisor) revokeOp(ctx context.Context, req *agentctl.Request) (any, *agentctl.Error) {
	var p supervisorproto.RevokePayload
	if err := decodeStrict(req.Payload, &p); err != nil {
		return nil, &agentctl.Error{Code: agentctl.CodeInvalidRequest, Field: "payload", Message: "payload: " + err.Error()}
	}
	if p.Policy != supervisorproto.PolicyDrain && p.Policy != supervisorproto.PolicyStop {
		return nil, &agentctl.Error{Code: agentctl.CodeInvalidRequest, Field: "payload.policy",
			Message: fmt.Sprintf("payload.policy: must be %s or %s, got %q", supervisorproto.PolicyDrain, supervisorproto.PolicyStop, p.Policy)}
	}
	s.applyMu.Lock()
	s.mu.Lock()
	a := s.agents[p.Agent]
	s.mu.Unlock()
	if a == nil {
		s.applyMu.Unlock()
		return nil, &agentctl.Error{Code: agentctl.CodeInvalidRequest, Field: "payload.agent",
			Message: fmt.Sprintf("payload.agent: %q is not an agent of the deployment", p.Agent)}
	}
	ret, already, escalate, err := s.retire(a, p)
	s.applyMu.Unlock()
	if err != nil {
		return nil, agentctl.Errorf(agentctl.CodeInternal, "cannot journal the revocation: %v", err)
	}
	if escalate || (!already && p.Policy == supervisorproto.PolicyStop) {
		s.finish(context.WithoutCancel(ctx), a, ret)
	} else if !already {
		s.drainLater(a, ret)
	}
	timeout := seconds(req.TimeoutSeconds)
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	res := supervisorproto.RevokeResult{Agent: p.Agent, Already: already && !escalate, RuntimeID: ret.runtimeID}
	select {
	case <-ret.done:
	case <-t.C:
	case <-ctx.Done():
	}
	a.mu.Lock()
	res.Outcome = a.state
	rec := *ret.rec
	a.mu.Unlock()
	res.Revocation = &rec
	return res, nil
}

// retire marks a closed to new turns under the revocation p, journals it
// and suspends its restart policy (s.applyMu held). An agent already
// retired stays as it is, except that a stop escalates a drain that is
// still waiting for its turns.
func (s *Supervisor) retire(a *agentRun, p supervisorproto.RevokePayload) (ret *retirement, already, escalate bool, err error) {
	// A revocation record is written with s.mu and a.mu held (in that
	// order), so that the journal (s.mu) and status (a.mu) read it whole.
	s.mu.Lock()
	a.mu.Lock()
	if ret = a.ret; ret != nil {
		escalate = p.Policy == supervisorproto.PolicyStop && ret.rec.Policy == supervisorproto.PolicyDrain && a.state == supervisorproto.StateDraining
		if escalate {
			ret.rec.Policy = supervisorproto.PolicyStop
		}
		a.mu.Unlock()
		if escalate {
			err = s.journalRevokedLocked()
		}
		s.mu.Unlock()
		if escalate {
			a.event("revocation_escalated", "a stop replaces the drain: the runtime stops now", ret.runtimeID)
		}
		return ret, true, escalate, err
	}
	s.mu.Unlock()
	rec := &supervisorproto.Revocation{Policy: p.Policy, CatalogSerial: p.CatalogSerial, Entry: p.Entry, Reason: p.Reason,
		AtMillis: time.Now().UnixMilli(), Generation: a.spec.Generation}
	ret = &retirement{rec: rec, quiet: make(chan struct{}), done: make(chan struct{})}
	if a.rt != nil {
		ret.runtimeID = a.rt.ID()
		rec.Package = a.rt.Handle().Package
	}
	a.ret = ret
	if a.inflight == 0 {
		close(ret.quiet)
	}
	a.state, a.reason, a.action = supervisorproto.StateDraining, supervisorproto.ReasonPackageRevoked, retiredAction(rec)
	if p.Policy == supervisorproto.PolicyStop {
		a.state = supervisorproto.StateStopped
	}
	a.mu.Unlock()
	a.event("revoked", fmt.Sprintf("catalog serial %d revoked %s (%s): %s", rec.CatalogSerial, rec.Entry, rec.Reason, rec.Policy), ret.runtimeID)
	// Restart policy suspended: no watcher brings it back.
	a.halt()
	s.mu.Lock()
	s.revoked[a.spec.Name] = rec
	err = s.journalRevokedLocked()
	s.mu.Unlock()
	return ret, false, false, err
}

func retiredAction(r *supervisorproto.Revocation) string {
	return fmt.Sprintf("its package entry %s is revoked (catalog serial %d): deploy it under a selectable package (fabric packages list), then run fabric deploy apply", r.Entry, r.CatalogSerial)
}

// drainLater finishes the drain once no turn is in flight; a supervisor
// shutting down leaves it to the journal.
func (s *Supervisor) drainLater(a *agentRun, ret *retirement) {
	s.mu.Lock()
	ctx := s.ctx
	s.mu.Unlock()
	if ctx == nil {
		ctx = context.Background()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-ret.quiet:
		case <-ret.done:
			return
		case <-ctx.Done():
			return
		}
		s.finish(context.WithoutCancel(ctx), a, ret)
	}()
}

// finish stops the retired agent's runtime (once) and records the end.
func (s *Supervisor) finish(ctx context.Context, a *agentRun, ret *retirement) {
	ret.once.Do(func() {
		defer close(ret.done)
		if err := s.stopRuntime(ctx, a); err != nil {
			a.event("stop_failed", err.Error(), ret.runtimeID)
		}
		s.mu.Lock()
		a.mu.Lock()
		ret.rec.CompletedAtMillis = time.Now().UnixMilli()
		a.state, a.health = finalState(ret.rec), nil
		final := a.state
		a.mu.Unlock()
		if s.revoked[a.spec.Name] == ret.rec {
			if err := s.journalRevokedLocked(); err != nil {
				s.log.Warn("cannot journal a completed revocation", "agent", a.spec.Name, "err", err)
			}
		}
		s.mu.Unlock()
		a.event(final, "the revocation is complete: the runtime is gone and is not restarted", ret.runtimeID)
	})
}

// retiredRun is the run of an agent whose journaled revocation still
// holds: it has no runtime and never starts one.
func retiredRun(a *agentRun, rec *supervisorproto.Revocation) {
	ret := &retirement{rec: rec, quiet: make(chan struct{}), done: make(chan struct{})}
	close(ret.quiet)
	ret.once.Do(func() { close(ret.done) })
	a.ret = ret
	a.state, a.reason, a.action = finalState(rec), supervisorproto.ReasonPackageRevoked, retiredAction(rec)
	if rec.CompletedAtMillis == 0 {
		// The previous supervisor ended before the drain did: its runtime
		// went with it.
		rec.CompletedAtMillis = time.Now().UnixMilli()
	}
}

// liftRevocations forgets the journaled revocations of agents st no
// longer declares, or declares with another definition: an apply that
// changes the agent lifts its revocation (its new runtime goes through
// package selection again, which refuses a revoked entry).
func (s *Supervisor) liftRevocations(st *desired.State) {
	gen := map[string]string{}
	for _, a := range st.Agents {
		gen[a.Name] = a.Generation
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for name, r := range s.revoked {
		if g, ok := gen[name]; !ok || g != r.Generation {
			delete(s.revoked, name)
			changed = true
			s.log.Info("revocation lifted: the agent's definition changed", "agent", name, "entry", r.Entry)
		}
	}
	if changed {
		if err := s.journalRevokedLocked(); err != nil {
			s.log.Warn("cannot journal the revocations", "err", err)
		}
	}
}

// keepRetired keeps an agent whose revocation holds retired: the one
// already retired as it is (a drain in progress goes on), or, after a
// restart of the supervisor, a new run that never starts a runtime.
func (s *Supervisor) keepRetired(ctx context.Context, cur *agentRun, spec desired.Agent) (supervisorproto.Change, bool) {
	s.mu.Lock()
	rec := s.revoked[spec.Name]
	s.mu.Unlock()
	if rec == nil {
		return supervisorproto.Change{}, false
	}
	ch := supervisorproto.Change{Resource: "agent/" + spec.Name, Action: supervisorproto.ActionNoop,
		Reason: fmt.Sprintf("not started: catalog serial %d revoked its package entry %s (%s; running: %s)", rec.CatalogSerial, rec.Entry, rec.Reason, rec.Policy)}
	if cur != nil {
		cur.mu.Lock()
		same := cur.ret != nil && cur.ret.rec == rec
		cur.mu.Unlock()
		if same {
			return ch, true
		}
		_ = s.stopAgent(ctx, cur)
	}
	a := &agentRun{s: s, spec: spec}
	if cur != nil {
		a.carry(&cur.lifecycle)
	}
	s.mu.Lock()
	a.mu.Lock()
	retiredRun(a, rec)
	a.mu.Unlock()
	s.agents[spec.Name] = a
	s.mu.Unlock()
	return ch, true
}
