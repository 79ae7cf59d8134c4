package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/health"
)

// Source names serve's own evidence in check observations.
const Source = "fabric-agent-ctl"

// ReasonUncleanShutdown is the reason of a server check whose cleanup
// observation found processes of an earlier, unconfirmed cleanup alive.
const ReasonUncleanShutdown = "unclean_shutdown"

// Errors serve attaches to work it cut short.
var (
	errInvokeTimeout = errors.New("timeout_seconds elapsed")
	errClientGone    = errors.New("the client closed the connection")
)

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func (s *Server) lookup(agent, id string) *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runtimes[key{agent, id}]
}

// resolve finds the runtime a request names: by agent and runtime id, or
// by agent alone when the agent has exactly one runtime (a deployed agent
// is addressed by its name). A nil entry with a nil error is "not found".
func (s *Server) resolve(req *agentctl.Request) (*entry, *agentctl.Error) {
	if req.RuntimeID != "" {
		return s.lookup(req.Agent, req.RuntimeID), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var found *entry
	n := 0
	for k, e := range s.runtimes {
		if k.agent == req.Agent {
			found, n = e, n+1
		}
	}
	if n > 1 {
		return nil, &agentctl.Error{Code: agentctl.CodeAmbiguousAgent, Field: "runtime_id",
			Message:  fmt.Sprintf("agent %q has %d runtimes; name one with runtime_id", req.Agent, n),
			Metadata: map[string]any{"agent": req.Agent, "runtimes": n}}
	}
	return found, nil
}

func stoppingError() *agentctl.Error {
	return &agentctl.Error{Code: agentctl.CodeServerStopping, Retryable: true, Message: "fabric-agent-ctl serve is shutting down and takes no new work"}
}

// details turns a Fabric error (possibly joined) into ErrorInfos and a
// message summarizing them.
func details(err error) ([]*contract.ErrorInfo, string) {
	var out []*contract.ErrorInfo
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		info := fabric.ErrorInfo(e)
		if info == nil {
			info = &contract.ErrorInfo{Code: "error", Message: e.Error()}
		}
		out = append(out, info)
	}
	walk(err)
	msg := out[0].Message
	if len(out) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(out)-1)
	}
	return out, msg
}

func (s *Server) start(req *agentctl.Request) *agentctl.Response {
	if s.stopping.Load() {
		return agentctl.Failed(req, stoppingError(), nil)
	}
	l, err := s.client.LoadConfig(req.Config, fabric.LoadOptions{BaseDir: req.BaseDir, Strict: req.Strict})
	if err != nil {
		d, msg := details(err)
		return agentctl.Failed(req, &agentctl.Error{Code: agentctl.CodeStartFailed, Message: "the config did not load: " + msg, Details: d}, nil)
	}
	for _, w := range l.Warnings {
		s.log.Warn("config warning", "config", req.Config, "path", w.Path, "message", w.Message)
	}
	if name := l.Config.Metadata.Name; name != req.Agent {
		return agentctl.Failed(req, &agentctl.Error{Code: agentctl.CodeInvalidRequest, Field: "agent",
			Message: fmt.Sprintf("agent: %q does not name this config's agent: its metadata.name is %q", req.Agent, name)}, nil)
	}
	ctx, cancel := s.base, context.CancelFunc(func() {})
	if req.TimeoutSeconds > 0 {
		ctx, cancel = context.WithTimeout(ctx, seconds(req.TimeoutSeconds))
	}
	defer cancel()
	rt, err := s.StartAgent(ctx, req.Agent, req.Config, l)
	if err != nil {
		var ae *agentctl.Error
		if errors.As(err, &ae) {
			return agentctl.Failed(req, ae, nil)
		}
		d, msg := details(err)
		return agentctl.Failed(req, &agentctl.Error{Code: agentctl.CodeStartFailed, Message: msg, Details: d}, nil)
	}
	resp, err := agentctl.Succeeded(req, rt.Handle())
	if err != nil {
		return agentctl.Failed(req, agentctl.Errorf(agentctl.CodeInternal, "cannot encode the handle: %v", err), nil)
	}
	return resp
}

// StartAgent starts a runtime for agent from a loaded config and owns it
// exactly like one the start operation started: it is journaled, listed
// by status, addressed by agent (and runtime id) and stopped at shutdown.
// label is what status shows as the runtime's config. Errors are Fabric's
// own, or *agentctl.Error server_stopping.
func (s *Server) StartAgent(ctx context.Context, agent, label string, l *fabric.Loaded, opts ...fabric.StartOption) (*fabric.Runtime, error) {
	if s.stopping.Load() {
		return nil, stoppingError()
	}
	rt, err := s.client.StartRuntime(ctx, l, opts...)
	if err != nil {
		if s.stopping.Load() {
			return nil, stoppingError()
		}
		return nil, err
	}
	e := &entry{agent: agent, id: rt.ID(), rt: rt, hostPid: rt.HostPid(), config: label, started: time.Now()}
	e.hostStart = startTicks(e.hostPid)
	s.mu.Lock()
	if s.stopping.Load() {
		s.mu.Unlock()
		_, _ = rt.Stop(context.Background())
		return nil, stoppingError()
	}
	s.runtimes[key{e.agent, e.id}] = e
	s.mu.Unlock()
	s.writeJournal()
	s.log.Info("runtime started", "agent", e.agent, "runtime_id", e.id, "host_pid", e.hostPid, "config", e.config)
	return rt, nil
}

// StopRuntime stops one runtime serve owns (also one whose host died on
// its own: its cleanup is then confirmed). An unknown runtime is already
// stopped. A stop that cannot confirm the host gone is recorded unclean.
func (s *Server) StopRuntime(ctx context.Context, agent, id string) (contract.RuntimeStopResult, error) {
	e := s.lookup(agent, id)
	if e == nil {
		return contract.RuntimeStopResult{RuntimeID: id, Status: "already_stopped", AlreadyStopped: true}, nil
	}
	out := s.stopEntry(ctx, e)
	return out.res, out.err
}

// CheckRuntime runs a bounded health check of one owned runtime; a
// runtime serve does not own gets a runtime_unavailable report.
func (s *Server) CheckRuntime(ctx context.Context, agent, id string, creq contract.CheckRequest) (contract.CheckReport, error) {
	creq.Scope, creq.RuntimeID = contract.ScopeRuntime, id
	if err := health.Normalize(&creq); err != nil {
		return contract.CheckReport{}, err
	}
	e := s.lookup(agent, id)
	if e == nil {
		return health.Missing(creq, contract.ReasonRuntimeUnavailable, fmt.Sprintf("serve owns no runtime %s of agent %q", id, agent)), nil
	}
	return e.rt.Check(ctx, creq)
}

// Invocations is how many invocations an owned runtime took (0 when
// serve does not own it).
func (s *Server) Invocations(agent, id string) int64 {
	if e := s.lookup(agent, id); e != nil {
		return e.invocations.Load()
	}
	return 0
}

// InvokeRuntime runs one turn on an owned runtime for another front door
// (an access gateway) exactly as the invoke operation does: one at a
// time per runtime (a second gets *agentctl.Error runtime_busy), counted,
// shown busy by status and check.
func (s *Server) InvokeRuntime(ctx context.Context, agent, id string, req contract.RunRequest, events func(contract.FabricEvent)) (*contract.RunResult, error) {
	release, refusal := s.admit(agent)
	if refusal != nil {
		return nil, refusal
	}
	defer release()
	e := s.lookup(agent, id)
	if e == nil {
		return nil, notFound(&agentctl.Request{Agent: agent, RuntimeID: id})
	}
	if s.stopping.Load() {
		return nil, stoppingError()
	}
	if !e.busy.CompareAndSwap(false, true) {
		return nil, &agentctl.Error{Code: agentctl.CodeRuntimeBusy, Retryable: true, Message: fmt.Sprintf("an invocation is running on runtime %s; one runs at a time", e.id)}
	}
	defer e.busy.Store(false)
	e.invocations.Add(1)
	started := time.Now()
	res, err := e.rt.InvokeRequest(ctx, req, events)
	s.turnEnded(e, started, res)
	return res, err
}

// admit asks Options.Admit whether agent takes a turn now.
func (s *Server) admit(agent string) (release func(), refusal *agentctl.Error) {
	if s.opts.Admit == nil {
		return func() {}, nil
	}
	release, refusal = s.opts.Admit(agent)
	if release == nil {
		release = func() {}
	}
	return release, refusal
}

// turnEnded tells Options.TurnEnded of a turn that ran.
func (s *Server) turnEnded(e *entry, started time.Time, res *contract.RunResult) {
	if s.opts.TurnEnded != nil && res != nil {
		s.opts.TurnEnded(e.agent, e.id, started, res)
	}
}

// Stopping reports whether serve's shutdown has begun.
func (s *Server) Stopping() bool { return s.stopping.Load() }

func (s *Server) invoke(c *net.UnixConn, req *agentctl.Request) *agentctl.Response {
	release, refusal := s.admit(req.Agent)
	if refusal != nil {
		return agentctl.Failed(req, refusal, nil)
	}
	defer release()
	e, aerr := s.resolve(req)
	if aerr != nil {
		return agentctl.Failed(req, aerr, nil)
	}
	if e == nil {
		return agentctl.Failed(req, notFound(req), nil)
	}
	if s.stopping.Load() {
		return agentctl.Failed(req, stoppingError(), nil)
	}
	if !e.busy.CompareAndSwap(false, true) {
		return agentctl.Failed(req, &agentctl.Error{Code: agentctl.CodeRuntimeBusy, Retryable: true,
			Message:  fmt.Sprintf("an invocation is running on runtime %s; one runs at a time", e.id),
			Metadata: map[string]any{"runtime_id": e.id, "agent": e.agent}}, nil)
	}
	defer e.busy.Store(false)
	ctx, cancel := context.WithCancelCause(s.base)
	defer cancel(nil)
	if req.TimeoutSeconds > 0 {
		var tcancel context.CancelFunc
		ctx, tcancel = context.WithTimeoutCause(ctx, seconds(req.TimeoutSeconds), errInvokeTimeout)
		defer tcancel()
	}
	stopWatch := watchHangup(c, func() { cancel(errClientGone) })
	e.invocations.Add(1)
	var res *contract.RunResult
	var err error
	started := time.Now()
	if req.Stream {
		res, err = streamInvoke(ctx, c, e.rt, *req.Request)
	} else {
		res, err = e.rt.InvokeRequest(ctx, *req.Request, nil)
	}
	stopWatch()
	s.turnEnded(e, started, res)
	if err != nil {
		if s.stopping.Load() {
			return agentctl.Failed(req, stoppingError(), nil)
		}
		d, msg := details(err)
		if d[0].Code == agentctl.CodeRuntimeBusy {
			return agentctl.Failed(req, &agentctl.Error{Code: agentctl.CodeRuntimeBusy, Retryable: true, Message: msg, Details: d}, nil)
		}
		return agentctl.Failed(req, &agentctl.Error{Code: agentctl.CodeInvokeFailed, Message: msg, Details: d}, nil)
	}
	cause := context.Cause(ctx)
	if res.Status != contract.StatusSucceeded && s.stopping.Load() {
		// Cut short by shutdown: a failed result the caller may retry
		// against the next serve.
		md := map[string]any{"result_status": res.Status}
		if res.Error != nil {
			md["result_code"] = res.Error.Code
		}
		res.Status = contract.StatusFailed
		res.Error = &contract.ErrorInfo{Stage: contract.StageInvoke, Code: agentctl.CodeServerStopping, Retryable: true,
			Message: "fabric-agent-ctl serve shut down during the invocation, which was cancelled", Metadata: md}
		return agentctl.Failed(req, &agentctl.Error{Code: agentctl.CodeServerStopping, Retryable: true,
			Message: "fabric-agent-ctl serve shut down during the invocation, which was cancelled; retry against the next serve"}, res)
	}
	if res.Error != nil && errors.Is(cause, errInvokeTimeout) {
		if res.Error.Metadata == nil {
			res.Error.Metadata = map[string]any{}
		}
		res.Error.Metadata["cancelled_by"] = "timeout_seconds"
	}
	if errors.Is(cause, errClientGone) {
		s.log.Info("client left during the invocation; it was cancelled", "runtime_id", e.id, "status", res.Status)
	}
	resp, merr := agentctl.Succeeded(req, res)
	if merr != nil {
		return agentctl.Failed(req, agentctl.Errorf(agentctl.CodeInternal, "cannot encode the result: %v", merr), nil)
	}
	return resp
}

func notFound(req *agentctl.Request) *agentctl.Error {
	msg := fmt.Sprintf("serve owns no runtime %s of agent %q", req.RuntimeID, req.Agent)
	if req.RuntimeID == "" {
		msg = fmt.Sprintf("serve owns no runtime of agent %q", req.Agent)
	}
	return &agentctl.Error{Code: agentctl.CodeRuntimeNotFound,
		Message:  msg,
		Metadata: map[string]any{"runtime_id": req.RuntimeID, "agent": req.Agent}}
}

type stopOutcome struct {
	res contract.RuntimeStopResult
	err error
}

// stopEntry stops e and forgets it; a stop that could not confirm the host
// gone is recorded as unclean. Concurrent calls are fine: the runtime stops
// once and later callers get already_stopped.
func (s *Server) stopEntry(ctx context.Context, e *entry) stopOutcome {
	res, err := e.rt.Stop(ctx)
	s.mu.Lock()
	if cur := s.runtimes[key{e.agent, e.id}]; cur == e {
		delete(s.runtimes, key{e.agent, e.id})
	}
	if err != nil {
		detail := err.Error()
		if res.Error != nil {
			detail = res.Error.Code + ": " + res.Error.Message
		}
		s.addUncleanLocked(agentctl.UncleanRuntime{
			RuntimeID: e.id, Agent: e.agent, HostPid: e.hostPid, HostStartTicks: e.hostStart,
			What: agentctl.UncleanStopFailed, Detail: detail, RecordedAtMillis: time.Now().UnixMilli(),
		})
	}
	s.mu.Unlock()
	if err != nil {
		s.log.Error("stop could not confirm the host is gone", "runtime_id", e.id, "agent", e.agent, "host_pid", e.hostPid, "error", err)
	}
	s.writeJournal()
	return stopOutcome{res, err}
}

func (s *Server) stop(req *agentctl.Request) *agentctl.Response {
	e := s.lookup(req.Agent, req.RuntimeID)
	if e == nil {
		resp, _ := agentctl.Succeeded(req, contract.RuntimeStopResult{RuntimeID: req.RuntimeID, Status: "already_stopped", AlreadyStopped: true})
		return resp
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if req.TimeoutSeconds > 0 {
		ctx, cancel = context.WithTimeout(ctx, seconds(req.TimeoutSeconds))
	}
	defer cancel()
	out := s.stopEntry(ctx, e)
	if out.err != nil {
		d, msg := details(out.err)
		return agentctl.Failed(req, &agentctl.Error{Code: agentctl.CodeStopFailed, Message: msg, Details: d}, out.res)
	}
	resp, err := agentctl.Succeeded(req, out.res)
	if err != nil {
		return agentctl.Failed(req, agentctl.Errorf(agentctl.CodeInternal, "cannot encode the stop result: %v", err), nil)
	}
	return resp
}

func checkInvalid(err error) *agentctl.Error {
	field, msg := "$", err.Error()
	var he *health.Error
	var ce *fabric.ConfigError
	switch {
	case errors.As(err, &he):
		field, msg = he.Path, he.Error()
	case errors.As(err, &ce):
		field, msg = ce.Path, ce.Message
	}
	if field == "" {
		field = "$"
	}
	return &agentctl.Error{Code: agentctl.CodeInvalidRequest, Field: field, Message: msg}
}

func (s *Server) check(req *agentctl.Request) *agentctl.Response {
	var rep contract.CheckReport
	if req.RuntimeID == "" && req.Agent != "" {
		// A deployed agent checked by its name alone: its only runtime.
		e, aerr := s.resolve(req)
		if aerr != nil {
			return agentctl.Failed(req, aerr, nil)
		}
		if e == nil {
			creq := contract.CheckRequest{Scope: contract.ScopeRuntime, RuntimeID: "unknown", Level: req.Level, TimeoutSeconds: req.TimeoutSeconds, Interface: req.Interface}
			if err := health.Normalize(&creq); err != nil {
				return agentctl.Failed(req, checkInvalid(err), nil)
			}
			rep = health.Missing(creq, contract.ReasonRuntimeUnavailable, fmt.Sprintf("serve owns no runtime of agent %q", req.Agent))
			resp, err := agentctl.Succeeded(req, rep)
			if err != nil {
				return agentctl.Failed(req, agentctl.Errorf(agentctl.CodeInternal, "cannot encode the report: %v", err), nil)
			}
			return resp
		}
		r2 := *req
		r2.RuntimeID = e.id
		req = &r2
	}
	if req.RuntimeID == "" {
		creq := contract.CheckRequest{Scope: contract.ScopeServer, TimeoutSeconds: req.TimeoutSeconds, Interface: req.Interface}
		if err := health.Normalize(&creq); err != nil {
			return agentctl.Failed(req, checkInvalid(err), nil)
		}
		rep = s.serverReport(creq)
	} else {
		creq := contract.CheckRequest{Scope: contract.ScopeRuntime, RuntimeID: req.RuntimeID, Level: req.Level, TimeoutSeconds: req.TimeoutSeconds, Interface: req.Interface}
		if err := health.Normalize(&creq); err != nil {
			return agentctl.Failed(req, checkInvalid(err), nil)
		}
		e := s.lookup(req.Agent, req.RuntimeID)
		if e == nil {
			rep = health.Missing(creq, contract.ReasonRuntimeUnavailable, fmt.Sprintf("serve owns no runtime %s of agent %q", req.RuntimeID, req.Agent))
		} else {
			// The check bounds itself; the context is a backstop.
			ctx, cancel := context.WithTimeout(context.Background(), health.Timeout(&creq)+time.Second)
			r, err := e.rt.Check(ctx, creq)
			cancel()
			if err != nil {
				return agentctl.Failed(req, checkInvalid(err), nil)
			}
			rep = r
		}
	}
	resp, err := agentctl.Succeeded(req, rep)
	if err != nil {
		return agentctl.Failed(req, agentctl.Errorf(agentctl.CodeInternal, "cannot encode the report: %v", err), nil)
	}
	return resp
}

// serverReport is the server-scope check: serve answered and whether it is
// stopping, then what is known of earlier cleanups. It never waits on a
// runtime or on a confirmation in progress.
func (s *Server) serverReport(creq contract.CheckRequest) contract.CheckReport {
	started := time.Now()
	state, stopping := agentctl.ServerServing, s.stopping.Load()
	if stopping {
		state = agentctl.ServerStopping
	}
	// Re-observe pending entries without killing anything, unless a
	// confirmation pass is already running.
	s.mu.Lock()
	n := len(s.unclean.pending())
	s.mu.Unlock()
	if n > 0 && !stopping {
		s.confirmUnclean(false, false)
	}
	s.mu.Lock()
	u := s.uncleanStatusLocked()
	total, busy := len(s.runtimes), 0
	for _, e := range s.runtimes {
		if e.busy.Load() {
			busy++
		}
	}
	s.mu.Unlock()
	rep := health.Server(creq, started, state, stopping, cleanupObservation(u, s.markerPath, started))
	if rep.Metadata == nil {
		rep.Metadata = map[string]any{}
	}
	rep.Metadata["serve_pid"] = os.Getpid()
	rep.Metadata["runtimes"] = total
	rep.Metadata["busy_runtimes"] = busy
	return rep
}

// cleanupObservation reports earlier cleanups: none recorded (passed), all
// confirmed (passed, with what the previous serve recorded), still pending
// (failed, unclean_shutdown) or a marker serve could not trust (unknown).
func cleanupObservation(u *agentctl.UncleanStatus, marker string, at time.Time) contract.CheckObservation {
	if u == nil {
		return health.Observe("cleanup", "", contract.OutcomePassed, "", Source, at, time.Since(at), "no unconfirmed cleanup is recorded")
	}
	var pending, confirmed []string
	for _, e := range u.Runtimes {
		if e.Confirmed {
			confirmed = append(confirmed, fmt.Sprintf("%s (%s, %s)", e.RuntimeID, e.What, e.Confirmation))
		} else {
			pending = append(pending, fmt.Sprintf("%s (%s: %s)", e.RuntimeID, e.What, e.Confirmation))
		}
	}
	var o contract.CheckObservation
	switch {
	case len(pending) > 0:
		o = health.Observe("cleanup", "", contract.OutcomeFailed, ReasonUncleanShutdown, Source, at, time.Since(at),
			fmt.Sprintf("cleanup of %d runtime(s) is not confirmed: %s; recorded in %s", len(pending), strings.Join(pending, "; "), marker))
	case u.Found == nil && len(u.Runtimes) == 0:
		// Only an untrusted marker.
		o = health.Observe("cleanup", "", contract.OutcomeUnknown, contract.ReasonProbeError, Source, at, time.Since(at),
			"an unclean marker or journal was found but could not be used; see the serve log")
	default:
		msg := fmt.Sprintf("cleanup of %d runtime(s) recorded as unconfirmed was confirmed: %s", len(confirmed), strings.Join(confirmed, "; "))
		if u.Found != nil {
			msg = fmt.Sprintf("a previous serve (pid %d) recorded %d runtime(s) whose cleanup it could not confirm (%s); all are confirmed gone: %s; %s was cleared",
				u.Found.ServePid, len(u.Found.Runtimes), u.Found.WrittenAt, strings.Join(confirmed, "; "), marker)
		}
		o = health.Observe("cleanup", "", contract.OutcomePassed, "", Source, at, time.Since(at), msg)
	}
	o.Metadata["unclean"] = u
	return o
}

func (s *Server) status(req *agentctl.Request) *agentctl.Response {
	st := agentctl.Status{SchemaVersion: agentctl.StatusSchemaVersion, Runtimes: []agentctl.RuntimeStatus{}}
	state := agentctl.ServerServing
	if s.stopping.Load() {
		state = agentctl.ServerStopping
	}
	s.mu.Lock()
	st.Server = agentctl.ServerStatus{State: state, Pid: os.Getpid(), Socket: s.socket, StartedAtMillis: s.started.UnixMilli(), Runtimes: len(s.runtimes)}
	for _, e := range s.runtimes {
		if (req.Agent != "" && e.agent != req.Agent) || (req.RuntimeID != "" && e.id != req.RuntimeID) {
			continue
		}
		h := e.rt.Handle()
		activity := agentctl.ActivityIdle
		switch {
		case h.Status == "stopping" || h.Status == "stopped":
			activity = agentctl.ActivityStopping
		case e.busy.Load():
			activity = agentctl.ActivityBusy
		}
		st.Runtimes = append(st.Runtimes, agentctl.RuntimeStatus{
			RuntimeHandle: h, HostPid: e.hostPid, Activity: activity,
			StartedAtMillis: e.started.UnixMilli(), Invocations: e.invocations.Load(), Config: e.config,
		})
	}
	st.Unclean = s.uncleanStatusLocked()
	s.mu.Unlock()
	slices.SortFunc(st.Runtimes, func(a, b agentctl.RuntimeStatus) int {
		if c := a.StartedAtMillis - b.StartedAtMillis; c != 0 {
			return int(c)
		}
		return strings.Compare(a.RuntimeID, b.RuntimeID)
	})
	resp, err := agentctl.Succeeded(req, st)
	if err != nil {
		return agentctl.Failed(req, agentctl.Errorf(agentctl.CodeInternal, "cannot encode the status: %v", err), nil)
	}
	return resp
}

// streamWriteTimeout bounds writing one record line to a client that
// stopped reading; the client is then taken as gone.
const streamWriteTimeout = 30 * time.Second

// streamInvoke runs an invocation through InvokeStream and writes each
// record to the client as it happens. A client that cannot take a record
// is detached (the turn goes on to its result, which is still answered
// if the client is there to read it).
func streamInvoke(ctx context.Context, c *net.UnixConn, rt *fabric.Runtime, rr contract.RunRequest) (*contract.RunResult, error) {
	s, err := rt.InvokeStream(ctx, rr)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(c, 32<<10)
	for rec, err := range s.Records(ctx) {
		if err != nil {
			break
		}
		b, merr := json.Marshal(agentctl.RecordLine{Record: rec})
		if merr != nil {
			continue
		}
		b = append(b, '\n')
		_ = c.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		_, werr := w.Write(b)
		if werr == nil && s.Pending() == 0 {
			werr = w.Flush() // nothing queued behind it: send now
		}
		if werr != nil {
			s.Close()
			break
		}
	}
	_ = w.Flush()
	_ = c.SetWriteDeadline(time.Time{})
	return s.Result(context.WithoutCancel(ctx))
}
