package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/agentctl/server"
	"github.com/fabric-runtime/fabric/internal/clientopts"
	"github.com/fabric-runtime/fabric/internal/deploy/desired"
	"github.com/fabric-runtime/fabric/internal/modelproxy"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// Options configure a Supervisor.
type Options struct {
	// StateDir holds the socket (unless Socket is set), the supervisor's
	// journal and the services' logs.
	StateDir string
	// Socket is the control socket (default StateDir/supervisor.sock).
	Socket string
	Logger *slog.Logger
	// Client starts runtimes (default fabric.New with Logger).
	Client *fabric.Client
	// ShutdownTimeout bounds the wait for runtimes at shutdown.
	ShutdownTimeout time.Duration
}

// Supervisor is one deployment's long-lived owner: it owns the agents'
// runtimes (through the same serve that fabric-agent-ctl talks to) and
// the integration services, applies restart policies, and answers deploy
// requests on the control socket.
type Supervisor struct {
	opts    Options
	log     *slog.Logger
	srv     *server.Server
	started time.Time

	applyMu sync.Mutex // one reconcile (apply, restore, destroy) at a time

	mu        sync.Mutex // guards everything below
	state     *desired.State
	creds     map[string]string // credential key -> value, memory only
	agents    map[string]*agentRun
	services  map[string]*serviceRun
	proxy     *modelproxy.Proxy
	proxyEnd  chan error
	proxyStop context.CancelFunc
	restored  []string                               // what a restart from the journal could not bring back
	turns     turnRecords                            // the turns run for access gateways, by request id
	revoked   map[string]*supervisorproto.Revocation // journaled revocations, by agent
	ctx       context.Context
	wg        sync.WaitGroup // watchers and the proxy
	console   [2]string      // the console's URL and token file, once it serves
}

// SetConsole records the console's URL and the path of its token file
// (never the token) for status.
func (s *Supervisor) SetConsole(url, tokenFile string) {
	s.mu.Lock()
	s.console = [2]string{url, tokenFile}
	s.mu.Unlock()
}

// StateDir is the supervisor's state directory.
func (s *Supervisor) StateDir() string { return s.opts.StateDir }

// New binds the control socket (through agentctl's serve, so that the
// serve lock, journal and unclean-shutdown handling are the same) and
// reads the journal a previous supervisor left.
func New(opts Options) (*Supervisor, error) {
	if opts.StateDir == "" {
		return nil, errors.New("supervisor: a state directory is required")
	}
	dir, err := filepath.Abs(opts.StateDir)
	if err != nil {
		return nil, err
	}
	opts.StateDir = dir
	if opts.Socket == "" {
		opts.Socket = filepath.Join(dir, supervisorproto.SocketFile)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Client == nil {
		opts.Client = fabric.New(clientopts.With(os.Getenv, fabric.WithLogger(opts.Logger))...)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	s := &Supervisor{opts: opts, log: opts.Logger, started: time.Now(), creds: map[string]string{},
		agents: map[string]*agentRun{}, services: map[string]*serviceRun{}}
	st, err := readDesired(filepath.Join(dir, supervisorproto.DesiredFile))
	if err != nil {
		return nil, err
	}
	s.state = st
	if s.revoked, err = readRevoked(filepath.Join(dir, supervisorproto.RevokedFile)); err != nil {
		return nil, err
	}
	srv, err := server.Listen(server.Options{Socket: opts.Socket, Logger: opts.Logger, Client: opts.Client,
		ShutdownTimeout: opts.ShutdownTimeout, Deployer: s, TurnEnded: s.recordTurn, Admit: s.admit})
	if err != nil {
		return nil, err
	}
	s.srv = srv
	return s, nil
}

// Socket is the control socket's path.
func (s *Supervisor) Socket() string { return s.srv.Socket() }

// Force cuts a running shutdown short.
func (s *Supervisor) Force() { s.srv.Force() }

// Serve brings back the journaled deployment (if any), answers requests
// until ctx is done, then stops every runtime (through serve) and every
// service it owns.
func (s *Supervisor) Serve(ctx context.Context) server.Result {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	if s.state != nil {
		go s.restore(ctx)
	}
	res := s.srv.Serve(ctx)
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	s.mu.Lock()
	agents := make([]*agentRun, 0, len(s.agents))
	for _, a := range s.agents {
		agents = append(agents, a)
	}
	s.mu.Unlock()
	for _, a := range agents {
		a.halt()
	}
	s.stopServices(context.Background(), nil)
	s.wg.Wait()
	return res
}

// restore re-establishes the journaled desired state after a restart:
// file credentials are read again; env credentials were in the previous
// supervisor's memory only, so what needs one is blocked until the next
// apply hands it over.
func (s *Supervisor) restore(ctx context.Context) {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	st := s.state
	s.log.Info("restoring the journaled deployment", "deployment", st.Name, "agents", len(st.Agents), "services", len(st.Services))
	s.mu.Lock()
	for _, a := range st.Agents {
		s.restored = append(s.restored, fmt.Sprintf("agent %s: its previous runtime and in-memory conversation were lost with the previous supervisor", a.Name))
	}
	s.mu.Unlock()
	res := s.reconcile(ctx, st, nil, 0)
	for _, c := range res.Changes {
		s.log.Info("restore", "resource", c.Resource, "action", c.Action, "reason", c.Reason)
	}
}

// Deploy answers a deploy request (server.Deployer).
func (s *Supervisor) Deploy(ctx context.Context, req *agentctl.Request) *agentctl.Response {
	var out any
	var aerr *agentctl.Error
	switch req.Action {
	case supervisorproto.ActionApply:
		out, aerr = s.apply(ctx, req)
	case supervisorproto.ActionStatus:
		out = s.Status()
	case supervisorproto.ActionDestroy:
		out, aerr = s.destroy(ctx, req)
	case supervisorproto.ActionAccess:
		out, aerr = s.accessOp(ctx, req)
	case supervisorproto.ActionRevoke:
		out, aerr = s.revokeOp(ctx, req)
	default:
		aerr = &agentctl.Error{Code: agentctl.CodeInvalidRequest, Field: "action", Message: fmt.Sprintf("action: must be %s, %s, %s, %s or %s, got %q", supervisorproto.ActionApply, supervisorproto.ActionStatus, supervisorproto.ActionDestroy, supervisorproto.ActionAccess, supervisorproto.ActionRevoke, req.Action)}
	}
	if aerr != nil {
		return agentctl.Failed(req, aerr, out)
	}
	resp, err := agentctl.Succeeded(req, out)
	if err != nil {
		return agentctl.Failed(req, agentctl.Errorf(agentctl.CodeInternal, "cannot encode the answer: %v", err), nil)
	}
	return resp
}

func decodeStrict(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return errors.New("the payload is missing")
	}
	dec := json.NewDecoder(bytesReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (s *Supervisor) apply(ctx context.Context, req *agentctl.Request) (any, *agentctl.Error) {
	var p supervisorproto.ApplyPayload
	if err := decodeStrict(req.Payload, &p); err != nil || p.State == nil {
		msg := "payload: a desired state is required"
		if err != nil {
			msg = "payload: " + err.Error()
		}
		return nil, &agentctl.Error{Code: supervisorproto.CodeInvalidState, Field: "payload", Message: msg}
	}
	if p.State.FormatVersion != desired.FormatVersion {
		return nil, &agentctl.Error{Code: supervisorproto.CodeUnsupportedFormat, Field: "payload.state.format_version",
			Message: fmt.Sprintf("this supervisor takes %s, not %q", desired.FormatVersion, p.State.FormatVersion)}
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	s.mu.Lock()
	cur := s.state
	s.mu.Unlock()
	if cur != nil && cur.UID != p.State.UID {
		return nil, &agentctl.Error{Code: supervisorproto.CodeOtherDeployment, Field: "payload.state.uid",
			Message: fmt.Sprintf("this supervisor serves deployment %s (uid %s), not uid %s", cur.Name, cur.UID, p.State.UID)}
	}
	if err := writeDesired(filepath.Join(s.opts.StateDir, supervisorproto.DesiredFile), p.State); err != nil {
		return nil, agentctl.Errorf(agentctl.CodeInternal, "cannot journal the desired state: %v", err)
	}
	timeout := seconds(req.TimeoutSeconds)
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	res := s.reconcile(ctx, p.State, p.Credentials, timeout)
	return res, nil
}

func (s *Supervisor) destroy(ctx context.Context, _ *agentctl.Request) (any, *agentctl.Error) {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	res := supervisorproto.DestroyResult{Removed: []string{}, Retained: []string{}, Failed: []string{}}
	s.mu.Lock()
	agents := make([]*agentRun, 0, len(s.agents))
	for _, a := range s.agents {
		agents = append(agents, a)
	}
	st := s.state
	s.mu.Unlock()
	for _, a := range agents {
		if err := s.stopAgent(ctx, a); err != nil {
			res.Failed = append(res.Failed, fmt.Sprintf("agent/%s: %v", a.spec.Name, err))
		} else {
			res.Removed = append(res.Removed, "agent/"+a.spec.Name)
		}
	}
	res.Removed = append(res.Removed, s.stopServices(ctx, nil)...)
	// The access gateways' stores: every key is revoked with them (a later
	// deployment in this state dir starts with none), and their response
	// history goes too.
	accessDir := filepath.Join(s.opts.StateDir, "access")
	if _, err := os.Stat(accessDir); err == nil {
		if err := os.RemoveAll(accessDir); err != nil {
			res.Failed = append(res.Failed, "access stores: "+err.Error())
		} else {
			res.Removed = append(res.Removed, "access stores (every key revoked, response history deleted)")
		}
	}
	if st != nil {
		for _, a := range st.Agents {
			if ws := workspaceOf(a); ws != "" {
				res.Retained = append(res.Retained, "workspace "+ws)
			}
		}
	}
	s.mu.Lock()
	s.state = nil
	s.creds = map[string]string{}
	s.agents = map[string]*agentRun{}
	s.restored = nil
	s.revoked = map[string]*supervisorproto.Revocation{}
	jerr := s.journalRevokedLocked()
	s.mu.Unlock()
	if jerr != nil {
		res.Failed = append(res.Failed, "revocations journal: "+jerr.Error())
	}
	if err := os.Remove(filepath.Join(s.opts.StateDir, supervisorproto.DesiredFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		res.Failed = append(res.Failed, "journal: "+err.Error())
	}
	if len(res.Failed) > 0 {
		return res, &agentctl.Error{Code: "destroy_incomplete", Message: fmt.Sprintf("%d resource(s) could not be removed; destroy again", len(res.Failed))}
	}
	return res, nil
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
