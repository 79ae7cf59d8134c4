package supervisor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/deploy/desired"
	"github.com/fabric-runtime/fabric/internal/modelproxy"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
	"github.com/fabric-runtime/fabric/proc"
)

// serviceStart bounds a service process's start (until its port answers).
const serviceStart = 60 * time.Second

// serviceRun is one integration service: a supervised MCP server process,
// or a route of the model proxy.
type serviceRun struct {
	s   *Supervisor
	svc desired.Service
	lifecycle

	p       *proc.Process
	gateway *gatewayRun
}

func (r *serviceRun) healthy() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state == supervisorproto.StateRunning
}

func (r *serviceRun) pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.p == nil {
		return 0
	}
	return r.p.Pid()
}

// URL is what attached agents reach the service at ("" for a route).
func (r *serviceRun) url() string {
	if m := r.svc.MCP; m != nil {
		return fmt.Sprintf("http://127.0.0.1:%d%s", m.Port, m.EffectivePath())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gateway != nil {
		return r.gateway.gw.URL()
	}
	return ""
}

// credential returns a credential's value: an env reference from what
// apply handed over (memory only), a file reference read now.
func (s *Supervisor) credential(c contract.CredentialRef) (string, bool) {
	if c.File != "" {
		b, err := os.ReadFile(c.File)
		if err != nil {
			return "", false
		}
		v := strings.TrimRight(string(b), "\r\n")
		return v, v != ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.creds[desired.Key(c)]
	return v, ok && v != ""
}

// startService starts (or re-routes) one service.
func (s *Supervisor) startService(ctx context.Context, r *serviceRun) error {
	switch r.svc.Kind {
	case desired.ServiceModelRoute:
		return s.startRoute(ctx, r)
	case desired.ServiceMCPProcess:
		r.set(supervisorproto.StateStarting, "", "")
		if err := s.startProcess(ctx, r); err != nil {
			return err
		}
		s.watchService(r)
		return nil
	case desired.ServiceAccessGateway:
		r.set(supervisorproto.StateStarting, "", "")
		return s.startGateway(ctx, r)
	}
	return fmt.Errorf("unknown service kind %q", r.svc.Kind)
}

func (s *Supervisor) startRoute(ctx context.Context, r *serviceRun) error {
	inf := r.svc.Inference
	var key string
	if inf.Credential != nil {
		v, ok := s.credential(*inf.Credential)
		if !ok {
			be := credentialRequired(*inf.Credential).(*blockedError)
			r.set(supervisorproto.StateBlocked, be.reason, be.action)
			r.event("blocked", be.msg, "")
			return be
		}
		key = v
	}
	proxy, err := s.ensureProxy(ctx)
	if err != nil {
		r.set(supervisorproto.StateFailed, "proxy_failed", "see the supervisor log, then run fabric deploy apply")
		return err
	}
	route := modelproxy.Route{API: inf.API, BaseURL: inf.BaseURL, Credential: key, Model: inf.Model}
	if err := modelproxy.CheckRoute(routeName(r.svc.ID), route); err != nil {
		r.set(supervisorproto.StateFailed, "invalid_route", "fix the inference definition, then run fabric deploy apply")
		return err
	}
	proxy.SetRoute(routeName(r.svc.ID), route)
	r.set(supervisorproto.StateRunning, "", "")
	r.event("route_set", "model route serving at "+proxy.BaseURL(routeName(r.svc.ID)), "")
	return nil
}

// ensureProxy starts the supervisor's model proxy on first use.
func (s *Supervisor) ensureProxy(_ context.Context) (*modelproxy.Proxy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proxy != nil {
		return s.proxy, nil
	}
	p, err := modelproxy.New(modelproxy.Options{Logger: s.log.With("component", "model-proxy")})
	if err != nil {
		return nil, err
	}
	ctx, end := context.WithCancel(context.Background())
	s.proxy = p
	ch := make(chan error, 1)
	s.proxyEnd = ch
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ch <- p.Serve(ctx)
	}()
	s.proxyStop = end
	return p, nil
}

// portHolder names who listens on port, or "" when nobody does.
func portHolder(port int) string {
	pids, err := proc.PortHolders("", uint16(port))
	if err != nil || len(pids) == 0 {
		return ""
	}
	var names []string
	for _, pid := range pids {
		if pid == 0 {
			names = append(names, "a process this supervisor cannot see")
			continue
		}
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		names = append(names, fmt.Sprintf("pid %d (%s)", pid, strings.TrimSpace(string(comm))))
	}
	return strings.Join(names, ", ")
}

func (s *Supervisor) startProcess(ctx context.Context, r *serviceRun) error {
	m := r.svc.MCP
	if who := portHolder(m.Port); who != "" {
		msg := fmt.Sprintf("port %d is already held by %s, not by this deployment", m.Port, who)
		r.set(supervisorproto.StateBlocked, supervisorproto.CodePortTaken, fmt.Sprintf("free port %d or change integration %s's port, then run fabric deploy apply", m.Port, r.svc.Name))
		r.event("blocked", msg, "")
		return errors.New(msg)
	}
	path, err := exec.LookPath(m.Command[0])
	if err != nil {
		r.set(supervisorproto.StateFailed, "command_not_found", "install "+m.Command[0]+" or fix the integration's command, then run fabric deploy apply")
		r.event("start_failed", err.Error(), "")
		return err
	}
	logDir := filepath.Join(s.opts.StateDir, supervisorproto.LogDir)
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(logDir, safeName(r.svc.ID)+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	env := os.Environ()
	keys := make([]string, 0, len(m.Env))
	for k := range m.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+m.Env[k])
	}
	marker := "FABRIC_SERVICE=" + s.opts.StateDir + "#" + r.svc.ID
	env = append(env, marker)
	p, err := proc.Start(ctx, proc.Spec{Path: path, Args: m.Command[1:], Dir: r.svc.BaseDir, Env: env,
		Stdout: logf, Stderr: logf, EnvMarker: marker})
	if err != nil {
		r.set(supervisorproto.StateFailed, "start_failed", "see the service log, then run fabric deploy apply")
		r.event("start_failed", err.Error(), "")
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, serviceStart)
	defer cancel()
	probe := func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", m.Port))
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := p.AwaitHealthy(sctx, uint16(m.Port), 200*time.Millisecond, probe); err != nil {
		_ = p.Stop(context.Background())
		r.set(supervisorproto.StateFailed, "not_healthy", "see "+logf.Name()+", then run fabric deploy apply")
		r.event("start_failed", fmt.Sprintf("port %d did not answer: %v", m.Port, err), "")
		return fmt.Errorf("integration %s: port %d did not answer: %w", r.svc.Name, m.Port, err)
	}
	r.mu.Lock()
	r.p, r.state, r.reason, r.action = p, supervisorproto.StateRunning, "", ""
	r.mu.Unlock()
	r.event("started", fmt.Sprintf("pid %d serving on port %d", p.Pid(), m.Port), "")
	return nil
}

func (s *Supervisor) watchService(r *serviceRun) {
	stop, done := r.watching()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(done)
		pol := r.svc.MCP.Restart.Effective()
		for {
			r.mu.Lock()
			p := r.p
			r.mu.Unlock()
			if p == nil {
				return
			}
			select {
			case <-stop:
				return
			case <-p.Done():
			}
			info, _ := p.ExitState()
			_ = p.Stop(context.Background())
			r.mu.Lock()
			r.p, r.lastExit = nil, info.String()
			n := r.restarts
			r.mu.Unlock()
			r.event("exited", "the service process exited: "+info.String(), "")
			for {
				if pol.Policy == contract.RestartNever || n >= pol.Max {
					r.set(supervisorproto.StateFailed, "exited", "run fabric deploy apply to start it again")
					return
				}
				r.set(supervisorproto.StateRestarting, "", "")
				t := time.NewTimer(backoff(pol, n))
				select {
				case <-stop:
					t.Stop()
					return
				case <-t.C:
				}
				n++
				r.mu.Lock()
				r.restarts = n
				r.mu.Unlock()
				if err := s.startProcess(context.Background(), r); err == nil {
					r.event("restarted", fmt.Sprintf("restart %d of at most %d", n, pol.Max), "")
					break
				}
			}
		}
	}()
}

// stopService stops one service and forgets it.
func (s *Supervisor) stopService(ctx context.Context, r *serviceRun) error {
	r.halt()
	var err error
	switch r.svc.Kind {
	case desired.ServiceModelRoute:
		s.mu.Lock()
		proxy := s.proxy
		s.mu.Unlock()
		if proxy != nil {
			proxy.RemoveRoute(routeName(r.svc.ID))
		}
	case desired.ServiceMCPProcess:
		r.mu.Lock()
		p := r.p
		r.p = nil
		r.mu.Unlock()
		if p != nil {
			err = p.Stop(ctx)
		}
	case desired.ServiceAccessGateway:
		err = s.stopGateway(ctx, r)
	}
	r.set(supervisorproto.StateStopped, "", "")
	return err
}

// stopServices stops every service not in keep, and the model proxy when
// no route is left; it returns what it removed.
func (s *Supervisor) stopServices(ctx context.Context, keep map[string]bool) []string {
	s.mu.Lock()
	var runs []*serviceRun
	for id, r := range s.services {
		if !keep[id] {
			runs = append(runs, r)
			delete(s.services, id)
		}
	}
	s.mu.Unlock()
	var removed []string
	for _, r := range runs {
		if err := s.stopService(ctx, r); err != nil {
			s.log.Error("service did not stop", "service", r.svc.ID, "error", err)
		}
		removed = append(removed, r.svc.ID)
	}
	s.mu.Lock()
	routes := 0
	for _, r := range s.services {
		if r.svc.Kind == desired.ServiceModelRoute {
			routes++
		}
	}
	proxy, stop, end := s.proxy, s.proxyStop, s.proxyEnd
	if routes == 0 {
		s.proxy, s.proxyStop, s.proxyEnd = nil, nil, nil
	}
	s.mu.Unlock()
	if routes == 0 && proxy != nil {
		stop()
		<-end
		removed = append(removed, "model-proxy")
	}
	sort.Strings(removed)
	return removed
}

// routeName is the model proxy's name for a binding's route: the binding
// id with '/' as '.', shortened with a digest beyond the proxy's limit.
func routeName(id string) string {
	n := strings.ReplaceAll(id, "/", ".")
	if len(n) <= 64 {
		return n
	}
	sum := sha256.Sum256([]byte(id))
	return n[:47] + "." + hex.EncodeToString(sum[:8])
}

func safeName(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' {
			return '_'
		}
		return r
	}, id)
}
