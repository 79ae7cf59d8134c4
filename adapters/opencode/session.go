package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/serverharness"
	"github.com/fabric-runtime/fabric/contract"
)

// Timing of the adapter's waits.
const (
	// serverGrace is the SIGTERM-to-SIGKILL grace of a server that is not
	// an interface (OpenCode exits about 1.7 s after SIGTERM). A server
	// that serves the web UI is stopped by harnessui with the contract's 5 s.
	serverGrace = 3 * time.Second
	// abortWait is how long a cancelled turn waits for the session to be
	// idle after the abort request.
	abortWait = 1200 * time.Millisecond
)

// Names of OpenCode's Basic auth.
const (
	passwordEnv = "OPENCODE_SERVER_PASSWORD"
	username    = "opencode"
)

// event kinds the adapter emits.
const (
	eventOutputDelta    = "output_delta"
	eventReasoningDelta = "reasoning_delta"
	eventToolCall       = "tool_call"
	eventToolResult     = "tool_result"
	eventUsage          = "usage"
)

// New returns the OpenCode adapter.
func New() adapterkit.Adapter { return adapter{} }

type adapter struct{}

// session is one runtime: one `opencode serve` and one session on it.
type session struct {
	log       *slog.Logger
	in        adapterkit.StartInput
	set       Settings
	model     model
	key       string // the model key, only to scrub it from text; never logged
	runtimeID string

	// Private directories and files, all under dirs.Root, all removed at
	// stop.
	dirs                  adapterkit.Dirs
	configPath, instrPath string
	marker                string // the server's proc.Spec.EnvMarker

	bin       string
	workspace string
	srv       *serverharness.Server // the server and the interfaces
	base      string                // http://127.0.0.1:<port>
	password  string                // the server's per-start password; never logged or reported
	ownSrv    bool                  // srv was started here (not by harnessui)
	listening chan int              // the port from the server's "listening on" line
	client    *http.Client          // loopback only, no proxy, request timeout
	stream    *http.Client          // for /event: no overall timeout
	sessionID string

	turns atomic.Int64
}

// request sends one request to the server with Basic auth and the request
// timeout, and decodes a 2xx JSON answer into out (when not nil).
func (s *session) request(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, s.set.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		return err
	}
	req.SetBasicAuth(username, s.password)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &httpError{Method: method, Path: path, Status: resp.StatusCode, Body: s.scrub(cut(string(data), 500))}
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return nil
}

// httpError is a non-2xx answer of the server.
type httpError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("%s %s: status %d: %s", e.Method, e.Path, e.Status, e.Body)
}

// health asks the server's /global/health (authenticated).
func (s *session) health(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, serverharness.ProbeTimeout)
	defer cancel()
	var h struct {
		Healthy bool `json:"healthy"`
	}
	if err := s.request(ctx, http.MethodGet, "/global/health", nil, &h); err != nil {
		return err
	}
	if !h.Healthy {
		return errors.New("GET /global/health: not healthy")
	}
	return nil
}

// scrub replaces the model key and the password in text.
func (s *session) scrub(text string) string {
	for _, secret := range []string{s.key, s.password} {
		if len(secret) >= 4 {
			text = strings.ReplaceAll(text, secret, contract.Redacted)
		}
	}
	return text
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Health reports evidence from the server for one level, without calling
// the model: live, the server runs and owns its port; active, its
// /global/health answers; ready, the runtime's session is there.
func (s *session) Health(ctx context.Context, level string) (adapterkit.Health, error) {
	return s.srv.Health(ctx, level, s.health, func(ctx context.Context) error {
		return s.request(ctx, http.MethodGet, "/session/"+s.sessionID, nil, nil)
	}), nil
}

// Interfaces reports the runtime's interfaces for its handle: where they
// are and where their password is stored, never the password.
func (s *session) Interfaces() []contract.InterfaceInfo { return s.srv.Interfaces() }

// CheckInterface reports one interface's health (L4).
func (s *session) CheckInterface(ctx context.Context, name, level string) (adapterkit.Health, error) {
	runs := (name == Web && s.set.Web != nil) || (name == Terminal && s.set.Terminal != nil)
	return s.srv.CheckInterface(ctx, name, level, runs), nil
}

// The session reports and checks its interfaces.
var _ adapterkit.InterfaceSession = (*session)(nil)

// Stop ends the server: harnessui removes the token files and markers first;
// then SIGTERM to the server's group, a grace, SIGKILL; then every process
// that left the group but carries the runtime's configuration path is
// killed and the private directories are removed.
func (s *session) Stop(ctx context.Context) error {
	s.client.CloseIdleConnections()
	return s.srv.Stop(ctx, serverharness.StopSpec{Own: s.ownSrv, Marker: s.marker, Root: s.dirs.Root})
}
