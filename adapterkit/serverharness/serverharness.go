// Package serverharness is what the adapters that run their harness as a
// local HTTP server share (two of the bundled adapters do): the
// server's model role resolved to an endpoint, the interface part of the
// settings, the loopback HTTP transport, the wait for health at start, the
// health ladder, the server's last output in start failures, and the stop
// sequence.
//
// It is a package of its own, not part of adapterkit, because it links
// net/http and the process package, which an adapter host that runs no
// server harness does not need.
package serverharness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/proc"
)

// Timing shared by the server harnesses.
const (
	// sweepWait bounds the killing of processes that left the server's
	// process group.
	sweepWait = 2 * time.Second
	// healthPollMax is the longest pause between health probes at start.
	healthPollMax = 250 * time.Millisecond
	// ProbeTimeout bounds one health probe.
	ProbeTimeout = 2 * time.Second
)

// Transport is the HTTP transport to a server on loopback: no proxy, a few
// idle connections, and headerTimeout (0: none) for a response's headers.
func Transport(headerTimeout time.Duration) *http.Transport {
	return &http.Transport{Proxy: nil, MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second, ResponseHeaderTimeout: headerTimeout}
}

// Codes are the adapter's error codes for a server that fails to start.
type Codes struct {
	APIKeyMissing    string // the model key's variable is not set
	InvalidWorkspace string // the workspace is not usable
	StartFailed      string // anything else, and a failure without a code
	Timeout          string // not healthy within the start deadline
	Exited           string // exited before it was healthy
	NotHeld          string // healthy, but the port is not the server's
}

// Server is a harness server an adapter started: how it is named in
// messages, its process and port, and its last output.
type Server struct {
	// Name is the server in messages ("the Example server"); Short in
	// the messages about its port ("the server"), Name when empty.
	Name, Short string
	// Source is Health's source ("example server").
	Source string
	// PIDKey is the metadata key of the server's pid in Health.
	PIDKey string
	// OutputOf names whose output Explain adds ("the server's").
	OutputOf string
	Codes    Codes
	// Scrub, when set, removes secrets from the output Explain adds.
	Scrub func(string) string

	// Log and RuntimeID are for Stop's log lines.
	Log       *slog.Logger
	RuntimeID string

	Proc   *proc.Process
	Port   int
	Output *Tail
	// Ifaces is the runtime's interfaces, nil without.
	Ifaces *harnessui.Set

	busy     atomic.Bool
	stopOnce sync.Once
	stopErr  error
}

func (s *Server) short() string {
	if s.Short != "" {
		return s.Short
	}
	return s.Name
}

// Running reports whether the server's process runs.
func (s *Server) Running() bool {
	if s.Proc == nil {
		return false
	}
	select {
	case <-s.Proc.Done():
		return false
	default:
		return true
	}
}

// Start runs the steps of session's start in order under one deadline
// (L3: timeout bounds everything start does) and returns session; when a
// step fails, session.Stop runs (without the deadline, to clean up what
// the steps left) and the step's error is returned.
func Start(ctx context.Context, timeout time.Duration, session adapterkit.Session, steps ...func(context.Context) error) (adapterkit.Session, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, step := range steps {
		if err := step(ctx); err != nil {
			_ = session.Stop(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return session, nil
}

// Busy marks the server busy (Health's activity) until done is called:
// from a turn's start to its end.
func (s *Server) Busy() (done func()) {
	s.busy.Store(true)
	return func() { s.busy.Store(false) }
}

// CanTurn says whether a turn can run: not when the server is gone (an
// error) or ctx has ended already (a cancelled result).
func (s *Server) CanTurn(ctx context.Context) (contract.AgentRunResult, bool, error) {
	if !s.Running() {
		return contract.AgentRunResult{}, false, s.Exited("is not running")
	}
	if ctx.Err() != nil {
		return contract.AgentRunResult{Status: contract.StatusCancelled}, false, nil
	}
	return contract.AgentRunResult{}, true, nil
}

// KeyAndWorkspace returns the value of the variable m's api_key_env
// names, and the runtime's workspace, or the start error that says which
// is missing.
func (s *Server) KeyAndWorkspace(in adapterkit.StartInput, m Model) (key, workspace string, err error) {
	if key, err = adapterkit.ModelKey(m.APIKeyEnv, "models."+m.Role+".api_key_env"); err != nil {
		return "", "", adapterkit.Wrap(s.Codes.APIKeyMissing, err)
	}
	if workspace, err = adapterkit.Workspace(in); err != nil {
		return "", "", adapterkit.Wrap(s.Codes.InvalidWorkspace, err)
	}
	return key, workspace, nil
}

// Exited is the error of a turn that finds the server gone; what says
// when ("is not running", "exited during the turn").
func (s *Server) Exited(what string) error {
	info, _ := s.Proc.ExitState()
	return &adapterkit.Error{Code: s.Codes.Exited, Message: fmt.Sprintf("%s %s (%s)", s.Name, what, info)}
}

// Explain returns err as an *adapterkit.Error (Codes.StartFailed when it
// has no code) with the server's last output added, unless the error is
// about an interface's port or settings, which the output cannot explain.
func (s *Server) Explain(err error) error {
	var ae *adapterkit.Error
	if !errors.As(err, &ae) {
		ae = adapterkit.Wrap(s.Codes.StartFailed, err)
	}
	out := *ae
	if t := s.Output.String(); t != "" && out.Code != harnessui.CodePortTaken && out.Code != harnessui.CodeInvalid {
		if s.Scrub != nil {
			t = s.Scrub(t)
		}
		out.Message += "; " + s.OutputOf + " last output:\n" + t
	}
	return &out
}

// AwaitHealthy polls probe until it passes, then checks that the server
// still runs and owns its port (as S2 asks of interfaces). timeout is the
// start deadline, for the message.
func (s *Server) AwaitHealthy(ctx context.Context, timeout time.Duration, probe func(context.Context) error) error {
	err := s.Proc.AwaitHealthy(ctx, uint16(s.Port), healthPollMax, probe)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, proc.ErrExited):
		return s.Explain(adapterkit.Wrap(s.Codes.Exited, fmt.Errorf("%s exited before it was healthy: %w", s.Name, err)))
	case ctx.Err() != nil:
		return s.Explain(adapterkit.Wrap(s.Codes.Timeout, fmt.Errorf("%s was not healthy within startup_timeout_seconds (%s)", s.Name, timeout)))
	case errors.Is(err, proc.ErrNotListening):
		return adapterkit.Wrap(s.Codes.NotHeld, fmt.Errorf("after health, port %d is not held by %s: %w", s.Port, s.short(), err))
	}
	return adapterkit.Wrap(s.Codes.StartFailed, err)
}

// Health reports evidence from the server for one level, without calling
// the model: live, the server runs and owns its port; active, active
// passes; ready, ready passes too. A probe that fails because ctx ended is
// an unknown outcome (probe timeout), not a failure.
func (s *Server) Health(ctx context.Context, level string, active, ready func(context.Context) error) adapterkit.Health {
	h := adapterkit.Health{Source: s.Source, Activity: contract.ActivityIdle, ObservedAtMillis: time.Now().UnixMilli()}
	if s.busy.Load() {
		h.Activity = contract.ActivityBusy
	}
	if s.Proc != nil {
		h.Metadata = map[string]any{s.PIDKey: s.Proc.Pid(), "port": s.Port}
	}
	fail := func(reason, msg string) adapterkit.Health {
		h.Outcome, h.ReasonCode, h.Message = contract.OutcomeFailed, reason, msg
		return h
	}
	switch level {
	case contract.LevelLive, contract.LevelActive, contract.LevelReady:
	default:
		h.Outcome, h.ReasonCode = contract.OutcomeUnsupported, contract.ReasonUnsupportedLevel
		return h
	}
	if !s.Running() {
		return fail(contract.ReasonAgentExited, s.Name+" is not running")
	}
	if owns, err := s.Proc.OwnsListener(uint16(s.Port)); err == nil && !owns {
		return fail(contract.ReasonEndpointUnavailable, fmt.Sprintf("%s does not hold port %d", s.short(), s.Port))
	}
	var probes []func(context.Context) error
	switch level {
	case contract.LevelActive:
		probes = []func(context.Context) error{active}
	case contract.LevelReady:
		probes = []func(context.Context) error{active, ready}
	}
	for _, probe := range probes {
		if err := probe(ctx); err != nil {
			if ctx.Err() != nil {
				h.Outcome, h.ReasonCode, h.Message = contract.OutcomeUnknown, contract.ReasonProbeTimeout, err.Error()
				return h
			}
			return fail(contract.ReasonHealthFailed, err.Error())
		}
	}
	h.Outcome = contract.OutcomePassed
	return h
}

// Interfaces reports the runtime's interfaces for its handle: where they
// are and where their credentials are stored, never a credential.
func (s *Server) Interfaces() []contract.InterfaceInfo {
	if s.Ifaces == nil {
		return nil
	}
	return s.Ifaces.Interfaces()
}

// CheckInterface reports one interface's health (L4); runs says the
// runtime was started with that interface.
func (s *Server) CheckInterface(ctx context.Context, name, level string, runs bool) adapterkit.Health {
	if s.Ifaces == nil || !runs {
		return adapterkit.Health{Outcome: contract.OutcomeFailed, ReasonCode: contract.ReasonEndpointUnavailable, Source: s.Source, Message: fmt.Sprintf("no interface %q runs", name), ObservedAtMillis: time.Now().UnixMilli()}
	}
	return s.Ifaces.Check(ctx, name, level)
}

// StopSpec is what Stop ends besides the server and its interfaces.
type StopSpec struct {
	// Own says the server's process was started by the adapter, not by
	// Ifaces, so Stop stops it.
	Own bool
	// Marker is the environment entry every process of the runtime's
	// server carries; processes that left the group are killed by it.
	Marker string
	// AfterSweep runs once the processes are gone, before the directories
	// are removed.
	AfterSweep func()
	// Root is the runtime's private directory, removed last.
	Root string
}

// Stop ends the server and everything it left, once (later calls return
// the first call's error): the interfaces (token files first, then their
// processes with the contract's grace), the server's process group when
// the adapter started it, processes carrying the marker, then the private
// directories.
func (s *Server) Stop(ctx context.Context, sp StopSpec) error {
	s.stopOnce.Do(func() { s.stopErr = s.stop(ctx, sp) })
	return s.stopErr
}

func (s *Server) stop(ctx context.Context, sp StopSpec) error {
	log := s.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var errs []error
	t0 := time.Now()
	if s.Ifaces != nil {
		if err := s.Ifaces.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if sp.Own && s.Proc != nil {
		if err := s.Proc.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	tServer := time.Since(t0)
	if sp.Marker != "" {
		if pids := proc.KillByEnv(sp.Marker, sweepWait); len(pids) > 0 {
			log.Info("killed processes that had left the process group of "+s.short(), "pids", pids)
		}
	}
	if sp.AfterSweep != nil {
		sp.AfterSweep()
	}
	tSweep := time.Since(t0)
	if sp.Root != "" {
		if err := removeAll(sp.Root); err != nil {
			errs = append(errs, fmt.Errorf("remove private directories: %w", err))
		}
	}
	log.Info("stopped", "runtime_id", s.RuntimeID, "server_ms", tServer.Milliseconds(), "sweep_ms", (tSweep - tServer).Milliseconds(), "remove_ms", (time.Since(t0) - tSweep).Milliseconds())
	return errors.Join(errs...)
}

// removeAll removes dir, retrying briefly: a process that was just killed
// may still have been writing into it.
func removeAll(dir string) error {
	var err error
	for range 5 {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// Tail keeps the last Max bytes written to it, whole lines where it can;
// String returns its last 40 lines.
type Tail struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.Max; over > 0 {
		t.buf = t.buf[over:]
		if i := strings.IndexByte(string(t.buf), '\n'); i >= 0 && i < len(t.buf)-1 {
			t.buf = t.buf[i+1:]
		}
	}
	return len(p), nil
}

func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}
