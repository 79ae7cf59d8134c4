package console

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/renameio"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// Files of the console in the supervisor's state directory.
const (
	// TokenFile holds the console token of the running supervisor (0600;
	// removed at stop).
	TokenFile = "console.token"
	// AddrFile keeps the console's address, so that a restarted
	// supervisor serves it at the same URL when the port is free.
	AddrFile = "console.addr"
)

// TokenPrefix starts every console token.
const TokenPrefix = "fabc_"

// Supervisor is what the console shows and acts on (*supervisor.Supervisor).
type Supervisor interface {
	Status() supervisorproto.Status
	Deploy(ctx context.Context, req *agentctl.Request) *agentctl.Response
	Follow(ctx context.Context, agent, runtimeID string, after uint64) (*fabric.Stream, string, error)
}

// Options configure a Console.
type Options struct {
	// Listen is the address (default supervisorproto.ConsoleListen). A non-loopback
	// address is refused unless AllowNonLoopback is set.
	Listen           string
	AllowNonLoopback bool
	// StateDir holds TokenFile and AddrFile.
	StateDir   string
	Supervisor Supervisor
	Logger     *slog.Logger
	// HTTPClient reaches the access gateways for the chat panel (default:
	// a client without a proxy, for loopback).
	HTTPClient *http.Client
}

// Console is the running console of one supervisor.
type Console struct {
	opts      Options
	log       *slog.Logger
	sup       Supervisor
	ln        net.Listener
	srv       *http.Server
	url       string
	token     string
	tokenFile string
	hosts     map[string]bool // Host values accepted
	origin    string          // the console's own origin
	pages     *pages
	client    *http.Client
	// endStreams ends every request's context (the live streams) at stop.
	endStreams context.CancelFunc

	mu       sync.Mutex
	sessions map[string]time.Time // session secret -> created
}

// New binds the console's listener and writes its token file.
func New(opts Options) (*Console, error) {
	if opts.Supervisor == nil || opts.StateDir == "" {
		return nil, errors.New("console: a supervisor and a state directory are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	listen := opts.Listen
	if listen == "" {
		listen = supervisorproto.ConsoleListen
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("console: listen %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" && !opts.AllowNonLoopback {
		return nil, fmt.Errorf("console: listen %q: the console serves on loopback only", listen)
	}
	addrFile := filepath.Join(opts.StateDir, AddrFile)
	var ln net.Listener
	if port == "0" {
		if b, err := os.ReadFile(addrFile); err == nil {
			if kept := strings.TrimSpace(string(b)); kept != "" {
				ln, _ = net.Listen("tcp", kept) // taken now: a new port below
			}
		}
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", listen); err != nil {
			return nil, fmt.Errorf("console: %w", err)
		}
	}
	addr := ln.Addr().(*net.TCPAddr)
	if port == "0" {
		_ = renameio.WriteFile(addrFile, []byte(addr.String()+"\n"))
	}
	tok, err := newSecret(TokenPrefix)
	if err != nil {
		ln.Close()
		return nil, err
	}
	harnessui.RecordForAudit(tok)
	c := &Console{opts: opts, log: opts.Logger, sup: opts.Supervisor, ln: ln, token: tok,
		tokenFile: filepath.Join(opts.StateDir, TokenFile), sessions: map[string]time.Time{}, client: opts.HTTPClient}
	if c.client == nil {
		c.client = &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}}
	}
	p := fmt.Sprint(addr.Port)
	c.hosts = map[string]bool{net.JoinHostPort(addr.IP.String(), p): true}
	if addr.IP.IsLoopback() {
		c.hosts["localhost:"+p] = true
		c.hosts["127.0.0.1:"+p] = true
		c.hosts["[::1]:"+p] = true
	}
	c.url = "http://" + net.JoinHostPort(addr.IP.String(), p)
	c.origin = c.url
	if c.pages, err = loadPages(); err != nil {
		ln.Close()
		return nil, err
	}
	if err := writeSecretFile(c.tokenFile, tok); err != nil {
		ln.Close()
		return nil, fmt.Errorf("console: token file: %w", err)
	}
	// Requests run under base: live streams end as soon as the console
	// stops, instead of holding its shutdown until they time out.
	base, cancel := context.WithCancel(context.Background())
	c.endStreams = cancel
	c.srv = &http.Server{Handler: c.routes(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return base },
		ErrorLog:    slog.NewLogLogger(c.log.Handler(), slog.LevelDebug)}
	return c, nil
}

// URL is the console's address, without any credential.
func (c *Console) URL() string { return c.url }

// TokenFile is the path of the file holding the console token.
func (c *Console) TokenFile() string { return c.tokenFile }

// Serve answers requests until ctx ends, then closes the console (its
// token file goes, every session ends).
func (c *Console) Serve(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- c.srv.Serve(c.ln) }()
	select {
	case <-ctx.Done():
	case err := <-done:
		c.endStreams()
		c.close()
		return err
	}
	c.endStreams()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.srv.Shutdown(sctx); err != nil {
		_ = c.srv.Close()
	}
	<-done
	c.close()
	return nil
}

func (c *Console) close() {
	if err := os.Remove(c.tokenFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		c.log.Error("cannot remove the console token file", "file", c.tokenFile, "error", err)
	}
	c.mu.Lock()
	c.sessions = map[string]time.Time{}
	c.mu.Unlock()
}

// newSecret is prefix and 32 random bytes, base64url.
func newSecret(prefix string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// writeSecretFile writes v to path, owner-only, atomically.
func writeSecretFile(path, v string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".console-token-*") // 0600
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(v + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Handler is the console's HTTP handler (what Serve serves).
func (c *Console) Handler() http.Handler { return c.srv.Handler }
