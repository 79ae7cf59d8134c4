package iface

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/proc"
	"github.com/fabric-runtime/fabric/contract"
)

// Loopback is the address HTTP interfaces listen on and are probed at (A1).
const Loopback = "127.0.0.1"

// Spec describes the interfaces of one runtime.
type Spec struct {
	// RuntimeID, ArtifactRoot and AdapterName place the runtime's files
	// (P1-P4): see InterfacesDir. ArtifactRoot must be absolute (use
	// ArtifactRoot); AdapterName is openclaw, hermes, deepagents-code, ...
	RuntimeID    string
	ArtifactRoot string
	AdapterName  string
	// StartupTimeout is the one deadline for all of Start (L3): zero means
	// DefaultStartupTimeout, more than MaxStartupTimeout is refused. A
	// deadline on Start's context applies too, whichever comes first, so an
	// adapter that spends part of its start elsewhere passes a context with
	// its own deadline.
	StartupTimeout time.Duration
	// Children are the interfaces, started concurrently.
	Children []Child
	// Logger receives structured start and stop records, never a
	// credential. Nil discards them.
	Logger *slog.Logger
}

// Child is one interface: an HTTP interface served by a child process on
// an exact loopback port, or a terminal interface reached through a
// launcher a person runs (A3, P4).
type Child struct {
	// Name is the interface's name (S7), as declared by the descriptor.
	Name string
	// Kind is contract.InterfaceHTTP or contract.InterfaceTerminal.
	Kind string
	// Browser marks a browser interface in the handle.
	Browser bool
	// Credential is the interface's credential scheme
	// (contract.CredentialBearer, ...). Any scheme but "" and
	// contract.CredentialNone gives the interface a token generated at
	// every start (T1) and stored at <name>.token once every child passed
	// health (P3, Q1).
	Credential string

	// Port is an HTTP interface's exact loopback port (S2, L6); terminals
	// take none (S4).
	Port int
	// CheckPorts are further ports the child binds (derived ports) that
	// must be free before launch (S2, Q7). Only Port is checked for
	// ownership after health.
	CheckPorts []int
	// Path is the URL path reported in the handle; "" means "/".
	Path string

	// Command, Args, Dir and Env start an HTTP interface's process, the
	// leader of its own process group. Env nil means the host's
	// environment; QuietEnv's switches are added for keys it does not set
	// (C3), and TokenEnv, when set, receives the token: a child that needs
	// its token at launch gets it in its environment, never in a file
	// before health (T1). Stdout and Stderr nil discard the output.
	Command        string
	Args           []string
	Dir            string
	Env            []string
	TokenEnv       string
	Stdout, Stderr io.Writer

	// HealthPath is an unauthenticated endpoint (for example "/healthz")
	// that answers 2xx once the interface is up; Health, when set, replaces
	// it. Start polls it until it passes (L2); Check uses it for level
	// active (L4).
	HealthPath string
	Health     func(ctx context.Context, t Target) error
	// ReadyPath is an endpoint that answers 2xx to a request carrying the
	// stored credential as a Bearer token (credential bearer or none only);
	// Ready, when set, replaces it. Check uses it for level ready (L4).
	// Neither set: ready is unsupported.
	ReadyPath string
	Ready     func(ctx context.Context, t Target) error

	// Launcher is a terminal interface's command (required for terminals).
	Launcher *Launcher
}

// Launcher is what a terminal interface's launcher script runs: it checks
// the runtime's marker, then executes Argv with the adapter's
// configuration (P4, A3). The script is readable by the sandbox's
// identity: Env must hold no secret; TokenEnv, when set, is read from the
// token file when the launcher runs.
type Launcher struct {
	Argv     []string
	Env      []string // "KEY=value", added to the person's environment with QuietEnv
	Dir      string
	TokenEnv string
}

// Target is what a health or ready probe reaches.
type Target struct {
	Name string
	// Addr is "127.0.0.1:<port>" and Port the port.
	Addr string
	Port int
	// Token is the stored credential for a ready probe; "" for health
	// probes, which are unauthenticated, and for interfaces without one.
	Token string
}

// Set is the running interfaces of one runtime. Its methods are safe for
// concurrent use.
type Set struct {
	spec     Spec
	dir      string
	children []*child
	log      *slog.Logger
	client   *http.Client

	stopMu  sync.Mutex // serializes Stop
	mu      sync.Mutex // guards stopped
	stopped bool
}

type child struct {
	Child
	token string        // generated at Start (T1); never logged or reported
	p     *proc.Process // nil for terminals
}

func (c *child) hasToken() bool {
	return c.Credential != "" && c.Credential != contract.CredentialNone
}

func (c *child) addr() string { return Loopback + ":" + strconv.Itoa(c.Port) }

var (
	nameRE    = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	idRE      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	adapterRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func (s *Spec) startupTimeout() (time.Duration, error) {
	switch {
	case s.StartupTimeout == 0:
		return DefaultStartupTimeout, nil
	case s.StartupTimeout < 0 || s.StartupTimeout > MaxStartupTimeout:
		return 0, errorf(CodeInvalid, "", nil, "startup timeout %v is outside (0, %v] (L3)", s.StartupTimeout, MaxStartupTimeout)
	}
	return s.StartupTimeout, nil
}

func (s *Spec) validate() error {
	bad := func(name, format string, args ...any) error {
		return errorf(CodeInvalid, name, nil, format, args...)
	}
	if !idRE.MatchString(s.RuntimeID) {
		return bad("", "runtime id %q is not a safe path element (P3)", s.RuntimeID)
	}
	if !adapterRE.MatchString(s.AdapterName) {
		return bad("", "adapter name %q is not a safe path element (P2)", s.AdapterName)
	}
	if !filepath.IsAbs(s.ArtifactRoot) {
		return bad("", "artifact root %q is not absolute (P1)", s.ArtifactRoot)
	}
	names := map[string]bool{}
	ports := map[int]string{}
	usePort := func(c *Child, port int) error {
		if port < 1 || port > 65535 {
			return bad(c.Name, "port %d is outside 1-65535 (S2)", port)
		}
		if other, dup := ports[port]; dup {
			return errorf(CodePortsEqual, c.Name, nil, "port %d is also used by interface %s (S3)", port, other)
		}
		ports[port] = c.Name
		return nil
	}
	for i := range s.Children {
		c := &s.Children[i]
		if !nameRE.MatchString(c.Name) || len(c.Name) > 63 {
			return bad(c.Name, "interface name %q must match %s (S7)", c.Name, nameRE)
		}
		if names[c.Name] {
			return bad(c.Name, "interface %s is given twice", c.Name)
		}
		names[c.Name] = true
		switch c.Credential {
		case "", contract.CredentialNone, contract.CredentialBearer, contract.CredentialBasic, contract.CredentialHeader, contract.CredentialCookie:
		default:
			return bad(c.Name, "credential scheme %q is unknown", c.Credential)
		}
		hasToken := c.Credential != "" && c.Credential != contract.CredentialNone
		if c.TokenEnv != "" && (!hasToken || !envNameRE.MatchString(c.TokenEnv)) {
			return bad(c.Name, "TokenEnv %q needs a credential scheme and a valid variable name", c.TokenEnv)
		}
		switch c.Kind {
		case contract.InterfaceHTTP:
			if err := usePort(c, c.Port); err != nil {
				return err
			}
			for _, p := range c.CheckPorts {
				if err := usePort(c, p); err != nil {
					return err
				}
			}
			if c.Command == "" {
				return bad(c.Name, "an HTTP interface needs a Command")
			}
			if c.Health == nil && !strings.HasPrefix(c.HealthPath, "/") {
				return bad(c.Name, "an HTTP interface needs Health or a HealthPath starting with / (L2)")
			}
			if c.ReadyPath != "" && !strings.HasPrefix(c.ReadyPath, "/") {
				return bad(c.Name, "ReadyPath %q must start with /", c.ReadyPath)
			}
			if c.Ready == nil && c.ReadyPath != "" && hasToken && c.Credential != contract.CredentialBearer {
				return bad(c.Name, "ReadyPath sends a Bearer token; credential %s needs Ready", c.Credential)
			}
			if c.Path != "" && !strings.HasPrefix(c.Path, "/") {
				return bad(c.Name, "Path %q must start with /", c.Path)
			}
			if c.Launcher != nil {
				return bad(c.Name, "only terminal interfaces have a Launcher")
			}
		case contract.InterfaceTerminal:
			if c.Port != 0 || len(c.CheckPorts) > 0 {
				return bad(c.Name, "terminal interfaces take no port (S4)")
			}
			if c.Command != "" {
				return bad(c.Name, "a terminal interface runs no child; its Launcher is what a person runs (A3)")
			}
			if c.Browser {
				return bad(c.Name, "a terminal interface is not a browser interface")
			}
			if c.Launcher == nil || len(c.Launcher.Argv) == 0 || c.Launcher.Argv[0] == "" {
				return bad(c.Name, "a terminal interface needs a Launcher with an Argv (P4)")
			}
			for _, kv := range c.Launcher.Env {
				if k, _, ok := strings.Cut(kv, "="); !ok || !envNameRE.MatchString(k) {
					return bad(c.Name, "launcher environment entry %q is not KEY=value", kv)
				}
			}
			if t := c.Launcher.TokenEnv; t != "" && (!hasToken || !envNameRE.MatchString(t)) {
				return bad(c.Name, "Launcher.TokenEnv %q needs a credential scheme and a valid variable name", t)
			}
		default:
			return bad(c.Name, "kind %q is not %s or %s", c.Kind, contract.InterfaceHTTP, contract.InterfaceTerminal)
		}
	}
	return nil
}

// Start starts the interfaces of one runtime under the contract's rules:
//
//   - every port is free before any child is launched (S2), ports are
//     distinct (S3) and exactly as given (L6);
//   - children start concurrently and must all pass health within one
//     deadline (L3);
//   - after health each child must still run and own every listening
//     socket on its port (S2, Q5), on loopback only (A1);
//   - tokens are generated at every start and, like launchers and markers,
//     written (tokens and markers 0600) only after every child passed
//     health (T1, Q1);
//   - on any failure the children already started are stopped and no
//     token, launcher or marker is left (L2).
//
// ctx bounds the start only: the children run until Stop. Errors are
// *Error (also an *adapterkit.Error with the same code).
func Start(ctx context.Context, spec Spec) (*Set, error) {
	timeout, err := spec.startupTimeout()
	if err != nil {
		return nil, err
	}
	// L3: one deadline for all of start, or the caller's if earlier.
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := spec.validate(); err != nil {
		return nil, err
	}
	s := &Set{
		spec: spec,
		dir:  InterfacesDir(spec.ArtifactRoot, spec.AdapterName, spec.RuntimeID),
		log:  spec.Logger,
		client: &http.Client{
			Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.spec.Children = nil // the children live in s.children
	for _, c := range spec.Children {
		c.Args, c.Env, c.CheckPorts = slices.Clone(c.Args), slices.Clone(c.Env), slices.Clone(c.CheckPorts)
		if c.Launcher != nil {
			l := *c.Launcher
			l.Argv, l.Env = slices.Clone(l.Argv), slices.Clone(l.Env)
			c.Launcher = &l
		}
		s.children = append(s.children, &child{Child: c})
	}
	// Files left at these paths by an earlier start with this runtime id
	// (L7) must not pass for this start's.
	if err := s.removeFiles(true); err != nil {
		return nil, errorf(CodeFilesFailed, "", err, "remove stale interface files")
	}
	for _, c := range s.children {
		if c.hasToken() {
			if c.token, err = newToken(); err != nil {
				return nil, errorf(CodeLaunchFailed, c.Name, err, "generate token")
			}
			recordForAudit(c.token)
		}
	}
	if err := s.launch(ctx); err != nil {
		return nil, s.abort(ctx, err)
	}
	for _, c := range s.children { // L2: still running once all passed
		if c.p == nil {
			continue
		}
		if info, done := c.p.ExitState(); done {
			return nil, s.abort(ctx, errorf(CodeChildExited, c.Name, nil, "the child exited (%s) before start finished (L2)", info))
		}
	}
	if err := s.writeFiles(); err != nil {
		return nil, s.abort(ctx, err)
	}
	s.log.Info("interfaces started", "runtime_id", spec.RuntimeID, "interfaces", len(s.children))
	return s, nil
}

func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// launch checks every port, then starts the children concurrently and
// waits until all passed health or one failed; the first failure cancels
// the others.
func (s *Set) launch(ctx context.Context) error {
	for _, c := range s.children { // S2: nothing listens before launch
		if c.Kind != contract.InterfaceHTTP {
			continue
		}
		for _, port := range append([]int{c.Port}, c.CheckPorts...) {
			if err := portFree(port); err != nil {
				return errorf(CodePortTaken, c.Name, err, "port %d is taken before launch (S2, L6)", port)
			}
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, c := range s.children {
		if c.Kind != contract.InterfaceHTTP {
			continue
		}
		wg.Go(func() {
			if err := s.startChild(ctx, c); err != nil {
				mu.Lock()
				if first == nil {
					first = err
					cancel(err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

func (s *Set) startChild(ctx context.Context, c *child) error {
	base := c.Env
	if base == nil {
		base = os.Environ()
	}
	var extra []string
	if c.TokenEnv != "" {
		extra = append(extra, c.TokenEnv+"="+c.token)
	}
	p, err := proc.Start(ctx, proc.Spec{
		Path: c.Command, Args: c.Args, Dir: c.Dir, Env: childEnv(base, extra...),
		Stdout: c.Stdout, Stderr: c.Stderr, Grace: StopGrace,
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctxFailure(ctx, c.Name, err)
		}
		return errorf(CodeLaunchFailed, c.Name, err, "start %s", c.Command)
	}
	c.p = p
	s.log.Info("interface child started", "runtime_id", s.spec.RuntimeID, "interface", c.Name, "pid", p.Pid(), "port", c.Port)
	if err := s.awaitHealthy(ctx, c); err != nil {
		return err
	}
	// S2, Q5: after health the child still runs and owns the socket.
	switch st, err := c.portState(); {
	case err != nil:
		return errorf(CodePortTaken, c.Name, err, "cannot confirm who listens on port %d (S2)", c.Port)
	case st == portExited:
		info, _ := c.p.ExitState()
		return errorf(CodeChildExited, c.Name, nil, "the child exited (%s) after passing health (L2)", info)
	case st == portForeign:
		return errorf(CodePortTaken, c.Name, nil, "after health, port %d is held by a process that is not the child (S2, Q5)", c.Port)
	case st == portUnbound:
		return errorf(CodePortTaken, c.Name, nil, "after health, the child does not listen on port %d (S2, Q5)", c.Port)
	case st == portNotLoopback:
		return errorf(CodeNotLoopback, c.Name, nil, "the child listens on port %d on a non-loopback address (A1)", c.Port)
	}
	s.log.Info("interface healthy", "runtime_id", s.spec.RuntimeID, "interface", c.Name, "port", c.Port)
	return nil
}

// Health polling bounds.
const (
	pollMin      = 50 * time.Millisecond
	pollMax      = 500 * time.Millisecond
	probeTimeout = 2 * time.Second
)

func (s *Set) awaitHealthy(ctx context.Context, c *child) error {
	delay := pollMin
	for {
		if info, done := c.p.ExitState(); done {
			return errorf(CodeChildExited, c.Name, nil, "the child exited (%s) before passing health (L2)", info)
		}
		pctx, pcancel := context.WithTimeout(ctx, probeTimeout)
		last := s.probeHealth(pctx, c)
		pcancel()
		if last == nil {
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-c.p.Done():
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			if info, done := c.p.ExitState(); done {
				return errorf(CodeChildExited, c.Name, nil, "the child exited (%s) before passing health (L2)", info)
			}
			return ctxFailure(ctx, c.Name, last)
		case <-t.C:
		}
		delay = min(2*delay, pollMax)
	}
}

// ctxFailure explains why ctx ended: a sibling's failure (returned as is),
// the startup deadline (L3), or the caller's cancellation.
func ctxFailure(ctx context.Context, name string, last error) error {
	cause := context.Cause(ctx)
	if e, ok := errors.AsType[*Error](cause); ok {
		return e
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errorf(CodeStartTimeout, name, last, "did not pass health within the startup deadline (L2, L3)")
	}
	return errorf(CodeStartCancelled, name, cause, "start cancelled")
}

func (s *Set) probeHealth(ctx context.Context, c *child) error {
	t := Target{Name: c.Name, Addr: c.addr(), Port: c.Port}
	if c.Health != nil {
		return c.Health(ctx, t)
	}
	return s.get(ctx, c, c.HealthPath, "")
}

func (s *Set) probeReady(ctx context.Context, c *child, token string) error {
	t := Target{Name: c.Name, Addr: c.addr(), Port: c.Port, Token: token}
	if c.Ready != nil {
		return c.Ready(ctx, t)
	}
	return s.get(ctx, c, c.ReadyPath, token)
}

// get sends GET http://127.0.0.1:<port><path>, with the token as a Bearer
// credential when given, and wants a 2xx answer. Its errors never contain
// the token.
func (s *Set) get(ctx context.Context, c *child, path, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.addr()+path, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("GET %s: status %d", path, resp.StatusCode)
	}
	return nil
}

// writeFiles writes tokens (0600), launchers (0700) and, last, markers
// (0600), once every child passed health (T1, Q1, P3, P4).
func (s *Set) writeFiles() error {
	if len(s.children) == 0 {
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return errorf(CodeFilesFailed, "", err, "create %s", s.dir)
	}
	for _, c := range s.children {
		if c.hasToken() {
			if err := writeFileAtomic(tokenFile(s.dir, c.Name), []byte(c.token), 0o600); err != nil {
				return errorf(CodeFilesFailed, c.Name, err, "write token file")
			}
		}
	}
	for _, c := range s.children {
		if c.Kind == contract.InterfaceTerminal {
			if err := writeFileAtomic(launcherFile(s.dir, c.Name), s.launcherScript(c), 0o700); err != nil {
				return errorf(CodeFilesFailed, c.Name, err, "write launcher")
			}
		}
	}
	for _, c := range s.children {
		if c.Kind == contract.InterfaceTerminal {
			marker := fmt.Sprintf("runtime_id=%s\ninterface=%s\n", s.spec.RuntimeID, c.Name)
			if err := writeFileAtomic(markerFile(s.dir, c.Name), []byte(marker), 0o600); err != nil {
				return errorf(CodeFilesFailed, c.Name, err, "write marker")
			}
		}
	}
	return nil
}

// writeFileAtomic writes data to a temporary file in path's directory with
// mode perm and renames it over path, so nobody reads a partial file.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// removeFiles removes the runtime's token files and markers, and with
// launchers also the launchers. Missing files are not an error.
func (s *Set) removeFiles(launchers bool) error {
	var errs []error
	rm := func(path string) {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for _, c := range s.children {
		rm(tokenFile(s.dir, c.Name))
		rm(markerFile(s.dir, c.Name))
		if launchers {
			rm(launcherFile(s.dir, c.Name))
		}
	}
	return errors.Join(errs...)
}

// abort undoes a failed start (L2): no token, launcher or marker is left,
// and every child already started is stopped as Stop would (L5).
func (s *Set) abort(ctx context.Context, cause error) error {
	s.log.Warn("interfaces start failed", "runtime_id", s.spec.RuntimeID, "error", cause.Error())
	errs := []error{cause}
	if err := s.removeFiles(true); err != nil {
		errs = append(errs, errorf(CodeFilesFailed, "", err, "remove interface files after a failed start"))
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StopGrace)
	defer cancel()
	errs = append(errs, s.stopChildren(stopCtx)...)
	s.removeDir()
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	if len(errs) == 1 {
		return cause
	}
	return errors.Join(errs...)
}

// Stop ends the interfaces (L5): it first removes the runtime's token files
// and markers, then sends SIGTERM to each child's process group, waits up
// to StopGrace (or until ctx is done) and sends SIGKILL to what remains.
// Launchers stay: without their marker they refuse to run (P4). Stop is
// idempotent.
func (s *Set) Stop(ctx context.Context) error {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	var errs []error
	if err := s.removeFiles(false); err != nil {
		errs = append(errs, errorf(CodeFilesFailed, "", err, "remove token files and markers"))
	}
	errs = append(errs, s.stopChildren(ctx)...)
	s.removeDir()
	s.log.Info("interfaces stopped", "runtime_id", s.spec.RuntimeID)
	return errors.Join(errs...)
}

// stopChildren stops every started child concurrently.
func (s *Set) stopChildren(ctx context.Context) []error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, c := range s.children {
		if c.p == nil {
			continue
		}
		wg.Go(func() {
			if err := c.p.Stop(ctx); err != nil {
				mu.Lock()
				errs = append(errs, errorf(CodeStopFailed, c.Name, err, "stop pid %d", c.p.Pid()))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

// removeDir removes the interfaces directory and the runtime's directory
// above it when they are empty.
func (s *Set) removeDir() {
	if os.Remove(s.dir) == nil {
		_ = os.Remove(filepath.Dir(s.dir))
	}
}

// Interfaces reports the interfaces for the runtime handle (discovery):
// locations and credential file paths, never a credential (T1, P5).
func (s *Set) Interfaces() []contract.InterfaceInfo {
	out := make([]contract.InterfaceInfo, 0, len(s.children))
	for _, c := range s.children {
		info := contract.InterfaceInfo{Name: c.Name, Kind: c.Kind, Browser: c.Browser}
		if c.hasToken() {
			info.Credential = c.Credential
			info.CredentialFile = tokenFile(s.dir, c.Name)
		}
		switch c.Kind {
		case contract.InterfaceHTTP:
			path := c.Path
			if path == "" {
				path = "/"
			}
			info.Address, info.Port, info.Path = Loopback, c.Port, path
			info.URL = "http://" + c.addr() + path
		case contract.InterfaceTerminal:
			info.Argv = []string{launcherFile(s.dir, c.Name)}
			info.MarkerFile = markerFile(s.dir, c.Name)
		}
		out = append(out, info)
	}
	return out
}

// Token returns the named interface's token of this start, for the
// adapter's own requests to its harness. Never log, report or write it.
func (s *Set) Token(name string) string {
	if c := s.child(name); c != nil {
		return c.token
	}
	return ""
}

// Process returns the named HTTP interface's child process, nil for a
// terminal or an unknown name. Stop it only through Set.Stop.
func (s *Set) Process(name string) *proc.Process {
	if c := s.child(name); c != nil {
		return c.p
	}
	return nil
}

func (s *Set) child(name string) *child {
	for _, c := range s.children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Check reports one interface's health at a level (L4), cumulatively:
//
//   - live: the child runs and owns its listening port (a terminal: its
//     marker exists);
//   - active: its unauthenticated health endpoint answers;
//   - ready: a request with the stored credential (read from its token
//     file) succeeds.
//
// An interface's failure is its own: it never fails the runtime, and
// nothing restarts it. Bound Check with ctx.
func (s *Set) Check(ctx context.Context, name, level string) adapterkit.Health {
	h := adapterkit.Health{Source: "interface:" + name}
	result := func(outcome, reason, msg string) adapterkit.Health {
		h.Outcome, h.ReasonCode, h.Message = outcome, reason, msg
		h.ObservedAtMillis = time.Now().UnixMilli()
		return h
	}
	c := s.child(name)
	if c == nil {
		return result(contract.OutcomeUnsupported, contract.ReasonUnsupportedScope, "no interface "+strconv.Quote(name))
	}
	switch level {
	case contract.LevelLive, contract.LevelActive, contract.LevelReady:
	default:
		return result(contract.OutcomeUnsupported, contract.ReasonUnsupportedLevel, "unknown level "+strconv.Quote(level))
	}
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		return result(contract.OutcomeFailed, contract.ReasonRuntimeUnavailable, "the interfaces were stopped")
	}
	if c.Kind == contract.InterfaceTerminal {
		if _, err := os.Stat(markerFile(s.dir, c.Name)); err != nil {
			return result(contract.OutcomeFailed, contract.ReasonEndpointUnavailable, "the terminal's marker is missing")
		}
		if level != contract.LevelLive {
			return result(contract.OutcomeUnsupported, contract.ReasonUnsupportedLevel, "a terminal interface has no health endpoint")
		}
		return result(contract.OutcomePassed, "", "")
	}
	switch st, err := c.portState(); {
	case err != nil:
		return result(contract.OutcomeUnknown, contract.ReasonProbeError, err.Error())
	case st == portExited:
		info, _ := c.p.ExitState()
		return result(contract.OutcomeFailed, contract.ReasonAgentExited, "the child exited: "+info.String())
	case st != portOwned:
		return result(contract.OutcomeFailed, contract.ReasonEndpointUnavailable, fmt.Sprintf("the child does not own port %d's listening socket", c.Port))
	}
	if level == contract.LevelLive {
		return result(contract.OutcomePassed, "", "")
	}
	probeFailed := func(err error) adapterkit.Health {
		if ctx.Err() != nil {
			return result(contract.OutcomeUnknown, contract.ReasonProbeTimeout, err.Error())
		}
		return result(contract.OutcomeFailed, contract.ReasonHealthFailed, err.Error())
	}
	if err := s.probeHealth(ctx, c); err != nil {
		return probeFailed(err)
	}
	if level == contract.LevelActive {
		return result(contract.OutcomePassed, "", "")
	}
	if c.Ready == nil && c.ReadyPath == "" {
		return result(contract.OutcomeUnsupported, contract.ReasonUnsupportedLevel, "the interface has no ready probe")
	}
	token := ""
	if c.hasToken() {
		b, err := os.ReadFile(tokenFile(s.dir, c.Name))
		if err != nil {
			return result(contract.OutcomeFailed, contract.ReasonHealthFailed, "the stored credential cannot be read")
		}
		token = string(b)
	}
	if err := s.probeReady(ctx, c, token); err != nil {
		return probeFailed(err)
	}
	return result(contract.OutcomePassed, "", "")
}
