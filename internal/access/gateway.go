package access

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// Errors a Dispatcher returns for a turn it did not run.
var (
	ErrBusy        = errors.New("access: another turn runs on the agent's runtime")
	ErrUnavailable = errors.New("access: the agent has no runtime")
	// ErrStartFailed: the agent is started on demand and its start failed;
	// the turn was not run (the error says why).
	ErrStartFailed = errors.New("access: the agent's runtime did not start")
)

// Dispatcher is what the gateway needs from the supervisor (defined here,
// implemented there).
type Dispatcher interface {
	// Invoke runs one turn on the agent's current runtime, streaming its
	// events; ctx cancellation cancels the turn (result status cancelled).
	// It returns Fabric's RunResult; an error means the turn was not run or
	// its outcome is unknown (ErrBusy: another turn runs on that runtime;
	// ErrUnavailable: no runtime).
	Invoke(ctx context.Context, agent string, req contract.RunRequest, events func(contract.FabricEvent)) (*contract.RunResult, error)
	// Agent reports the agent's current generation (changes when apply
	// replaces it), runtime id and health level ("passed", "failed",
	// "unknown", "" when not running).
	Agent(ctx context.Context, agent string) (AgentInfo, error)
	// Lookup returns Fabric's own record of a request id if the supervisor
	// has it (the RunResult of a finished turn, or running=true), for
	// adopting turns after a gateway crash; found=false otherwise.
	Lookup(ctx context.Context, agent, requestID string) (res *contract.RunResult, running bool, found bool, err error)
}

// AgentInfo is what the supervisor says of a deployed agent.
type AgentInfo struct {
	Generation string
	RuntimeID  string
	Health     string // passed, failed, unknown; "" when not running
	// OnDemand: the agent has no runtime yet and Invoke starts one (start:
	// on_demand); a turn is admitted and waits for the start.
	OnDemand bool
	// Epoch names the agent's conversation: it changes whenever a new
	// runtime takes over (and, for an on_demand agent without a runtime,
	// is the one its next start will have). Empty: the runtime id is used.
	Epoch string
}

// Binding values.
const (
	IdempotencyRequired  = "required"
	IdempotencyOptional  = "optional"
	OnDisconnectContinue = "continue"
	OnDisconnectCancel   = "cancel"
	OnRevokeCancel       = "cancel"
	OnRevokeContinue     = "continue"
)

// DefaultRetentionSeconds is a binding's default resume window.
const DefaultRetentionSeconds = 3600

// idempotencyRetention is how long a key keeps returning its turn.
const idempotencyRetention = 24 * time.Hour

// retryWindow is how far back a Stainless retry without a key is matched.
const retryWindow = 15 * time.Minute

// Binding attaches one agent to the gateway.
type Binding struct {
	Agent            string
	Generation       string
	Idempotency      string // required (default) | optional
	OnDisconnect     string // continue (default) | cancel
	OnRevoke         string // cancel (default) | continue
	RetentionSeconds int    // resume window of event logs (default DefaultRetentionSeconds)
}

func (b Binding) withDefaults() (Binding, error) {
	if b.Agent == "" {
		return b, errors.New("access: binding without agent")
	}
	b.Idempotency = orDefault(b.Idempotency, IdempotencyRequired)
	b.OnDisconnect = orDefault(b.OnDisconnect, OnDisconnectContinue)
	b.OnRevoke = orDefault(b.OnRevoke, OnRevokeCancel)
	if b.RetentionSeconds <= 0 {
		b.RetentionSeconds = DefaultRetentionSeconds
	}
	if !slices.Contains([]string{IdempotencyRequired, IdempotencyOptional}, b.Idempotency) ||
		!slices.Contains([]string{OnDisconnectContinue, OnDisconnectCancel}, b.OnDisconnect) ||
		!slices.Contains([]string{OnRevokeCancel, OnRevokeContinue}, b.OnRevoke) {
		return b, fmt.Errorf("access: binding %s: invalid idempotency, on_disconnect or on_revoke", b.Agent)
	}
	return b, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Options configure a gateway. Zero tuning fields take their defaults.
type Options struct {
	Name       string
	Listen     string // default 127.0.0.1:0; a non-loopback address needs TLS
	TLSCert    string // file paths
	TLSKey     string
	StoreDir   string // SQLite database and HMAC key file (0600)
	Clients    []string
	Bindings   []Binding
	Dispatcher Dispatcher
	Logger     *slog.Logger
	Now        func() time.Time

	PingInterval          time.Duration // SSE keep-alive (15 s)
	KeyRate               rate.Limit    // requests per second per key (50)
	KeyBurst              int           // (100)
	AddrRate              rate.Limit    // requests per second per address (200)
	AddrBurst             int           // (400)
	AuthFailuresPerMinute int           // per address, then 429 (20)
	MaxBodyBytes          int64         // (1 MiB)
	RetryWait             time.Duration // a non-stream retry of a running keyed turn waits this long, then 409 (30 s)
	AdoptPoll             time.Duration // polling of a turn adopted while running (500 ms)
	RotateGrace           time.Duration // an old key lives this long after Rotate (10 min)
}

// Key is a granted credential; Token is shown once and never stored.
type Key struct {
	ID        string    `json:"key_id"`
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	URL       string    `json:"url"`
}

// Gateway is one access gateway.
type Gateway struct {
	opts   Options
	log    *slog.Logger
	now    func() time.Time
	st     *store
	pepper []byte
	ln     net.Listener
	url    string
	srv    *http.Server
	base   context.Context // turns run under it, not under a request

	mu        sync.Mutex
	bindings  map[string]Binding
	clients   map[string]bool
	grants    map[string]*grant
	live      map[string]*turn // response id -> live turn
	liveScope map[string]*turn // idempotency scope -> live turn
	busy      map[string]*turn // agent -> its running turn
	watchers  map[string]map[*watch]struct{}
	addrLim   map[string]*addrLimits
	keyLim    map[string]*rate.Limiter
	closed    bool
	serving   bool

	wg        sync.WaitGroup // turns and pollers
	handlers  sync.WaitGroup // HTTP handlers
	closeOnce sync.Once
}

// New opens the store, binds the listener and recovers in-flight turns
// (outcome_unknown unless Lookup adopts them).
func New(ctx context.Context, opts Options) (*Gateway, error) {
	if opts.Dispatcher == nil {
		return nil, errors.New("access: Dispatcher is required")
	}
	setDefaults(&opts)
	g := &Gateway{
		opts: opts, log: opts.Logger, now: opts.Now, base: context.WithoutCancel(ctx),
		clients: map[string]bool{}, live: map[string]*turn{}, liveScope: map[string]*turn{}, busy: map[string]*turn{},
		watchers: map[string]map[*watch]struct{}{}, addrLim: map[string]*addrLimits{}, keyLim: map[string]*rate.Limiter{},
	}
	for _, c := range opts.Clients {
		g.clients[c] = true
	}
	bs, err := indexBindings(opts.Bindings)
	if err != nil {
		return nil, err
	}
	g.bindings = bs
	ln, scheme, err := listen(opts)
	if err != nil {
		return nil, err
	}
	st, pepper, err := openStore(ctx, opts.StoreDir)
	if err != nil {
		ln.Close()
		return nil, err
	}
	g.st, g.pepper, g.ln = st, pepper, ln
	g.url = scheme + "://" + ln.Addr().String()
	if g.grants, err = st.loadGrants(ctx); err != nil {
		g.abort()
		return nil, fmt.Errorf("access: load grants: %w", err)
	}
	if err := g.recover(ctx); err != nil {
		g.abort()
		return nil, err
	}
	g.purge(ctx)
	g.srv = &http.Server{Handler: g.routes(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(g.log.Handler(), slog.LevelDebug)}
	return g, nil
}

func setDefaults(o *Options) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.PingInterval, 15*time.Second)
	def(&o.RetryWait, 30*time.Second)
	def(&o.AdoptPoll, 500*time.Millisecond)
	def(&o.RotateGrace, 10*time.Minute)
	if o.KeyRate <= 0 {
		o.KeyRate, o.KeyBurst = 50, max(o.KeyBurst, 100)
	}
	if o.KeyBurst <= 0 {
		o.KeyBurst = 100
	}
	if o.AddrRate <= 0 {
		o.AddrRate, o.AddrBurst = 200, max(o.AddrBurst, 400)
	}
	if o.AddrBurst <= 0 {
		o.AddrBurst = 400
	}
	if o.AuthFailuresPerMinute <= 0 {
		o.AuthFailuresPerMinute = 20
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
}

func indexBindings(list []Binding) (map[string]Binding, error) {
	out := make(map[string]Binding, len(list))
	for _, b := range list {
		b, err := b.withDefaults()
		if err != nil {
			return nil, err
		}
		if _, dup := out[b.Agent]; dup {
			return nil, fmt.Errorf("access: agent %s bound twice", b.Agent)
		}
		out[b.Agent] = b
	}
	return out, nil
}

// listen binds Options.Listen; anything but loopback needs TLS.
func listen(o Options) (net.Listener, string, error) {
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return nil, "", fmt.Errorf("access: listen %q: %w", o.Listen, err)
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	if !loopback && (o.TLSCert == "" || o.TLSKey == "") {
		return nil, "", fmt.Errorf("access: listen %s is not loopback: tls cert and key are required", o.Listen)
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, "", fmt.Errorf("access: %w", err)
	}
	if o.TLSCert == "" {
		return ln, "http", nil
	}
	cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
	if err != nil {
		ln.Close()
		return nil, "", fmt.Errorf("access: tls: %w", err)
	}
	return tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}), "https", nil
}

func (g *Gateway) abort() {
	g.ln.Close()
	g.st.close()
}

// URL is the gateway's base URL (clients use URL()+"/v1").
func (g *Gateway) URL() string { return g.url }

// Serve serves HTTP until ctx ends, applying retention once a minute.
func (g *Gateway) Serve(ctx context.Context) error {
	g.mu.Lock()
	if g.closed || g.serving {
		g.mu.Unlock()
		return errors.New("access: gateway closed or already serving")
	}
	g.serving = true
	g.mu.Unlock()
	errc := make(chan error, 1)
	go func() { errc <- g.srv.Serve(g.ln) }()
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			g.purge(ctx)
		case err := <-errc:
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return err
		case <-ctx.Done():
			g.srv.Close()
			<-errc
			g.handlers.Wait()
			return nil
		}
	}
}

// Close stops serving, lets live turns finish until ctx ends (then
// cancels them and records them cancelled) and closes the store.
func (g *Gateway) Close(ctx context.Context) error {
	var err error
	g.closeOnce.Do(func() {
		g.mu.Lock()
		g.closed = true
		g.mu.Unlock()
		g.srv.Close()
		g.ln.Close()
		g.handlers.Wait()
		done := make(chan struct{})
		go func() { g.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			g.mu.Lock()
			for _, t := range g.live {
				t.cancel()
			}
			g.mu.Unlock()
			<-done
		}
		err = g.st.close()
	})
	return err
}

// SetBindings replaces the bindings (apply changed them). A changed
// Generation invalidates the older keys of that agent (403
// agent_replaced) and ends their live streams.
func (g *Gateway) SetBindings(bs []Binding) error {
	idx, err := indexBindings(bs)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.bindings = idx
	for _, gr := range g.grants {
		if b, ok := idx[gr.agent]; !ok || b.Generation != gr.generation {
			g.endStreamsLocked(gr.keyID, "agent_replaced")
		}
	}
	return nil
}

// SetClients replaces the client names; keys of a removed client stop working.
func (g *Gateway) SetClients(clients []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.clients = map[string]bool{}
	for _, c := range clients {
		g.clients[c] = true
	}
	for _, gr := range g.grants {
		if !g.clients[gr.client] {
			g.endStreamsLocked(gr.keyID, "operation_not_allowed")
		}
	}
}

// Grant issues a key for (client, agent) at the agent's current generation.
func (g *Gateway) Grant(client, agent string, ttl time.Duration) (Key, error) {
	g.mu.Lock()
	b, bound := g.bindings[agent]
	known := g.clients[client]
	g.mu.Unlock()
	if !known {
		return Key{}, fmt.Errorf("access: client %q is not one of the gateway's clients", client)
	}
	if !bound {
		return Key{}, fmt.Errorf("access: agent %q is not attached to the gateway", agent)
	}
	if ttl <= 0 {
		return Key{}, errors.New("access: a key needs a positive lifetime")
	}
	keyID, secret, token := newToken()
	now := g.now()
	gr := &grant{keyID: keyID, client: client, agent: agent, generation: b.Generation,
		verifier: verifier(g.pepper, keyID, secret), created: now.UTC(), expires: now.Add(ttl).UTC()}
	if err := g.st.insertGrant(context.Background(), gr); err != nil {
		return Key{}, fmt.Errorf("access: store grant: %w", err)
	}
	g.mu.Lock()
	g.grants[keyID] = gr
	g.mu.Unlock()
	g.log.Info("access key granted", "key_id", keyID, "client", client, "agent", agent, "expires_at", gr.expires)
	return Key{ID: keyID, Token: token, ExpiresAt: gr.expires, URL: g.url + "/v1"}, nil
}

// List describes every grant, oldest first (never a secret).
func (g *Gateway) List() []supervisorproto.AccessKey {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]supervisorproto.AccessKey, 0, len(g.grants))
	now := g.now()
	for _, gr := range g.grants {
		out = append(out, g.infoLocked(gr, now))
	}
	slices.SortFunc(out, func(a, b supervisorproto.AccessKey) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return compareStrings(a.ID, b.ID)
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (g *Gateway) infoLocked(gr *grant, now time.Time) supervisorproto.AccessKey {
	ki := supervisorproto.AccessKey{ID: gr.keyID, Client: gr.client, Agent: gr.agent, Generation: gr.generation, CreatedAt: gr.created, ExpiresAt: gr.expires, RevokedAt: gr.revoked, State: "active"}
	b, bound := g.bindings[gr.agent]
	switch {
	case gr.revoked != nil:
		ki.State = "revoked"
	case !now.Before(gr.expires):
		ki.State = "expired"
	case !bound || b.Generation != gr.generation:
		ki.State = "replaced"
	}
	return ki
}

// Revoke revokes a key: its live streams end at once, later requests get
// 401 token_revoked, and (on_revoke: cancel) its running turns are cancelled.
func (g *Gateway) Revoke(keyID string) error {
	g.mu.Lock()
	gr := g.grants[keyID]
	g.mu.Unlock()
	if gr == nil {
		return fmt.Errorf("access: no key %q", keyID)
	}
	now := g.now().UTC()
	if err := g.st.revokeGrant(context.Background(), keyID, now); err != nil {
		return fmt.Errorf("access: store revocation: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if gr.revoked == nil {
		gr.revoked = &now
	}
	g.endStreamsLocked(keyID, "token_revoked")
	for _, t := range g.live {
		if t.keyID == keyID && g.bindings[t.agent].OnRevoke != OnRevokeContinue {
			t.cancel()
		}
	}
	g.log.Info("access key revoked", "key_id", keyID)
	return nil
}

// Rotate issues a new key for the same client and agent (ttl) and lets the
// old one live RotateGrace longer at most, so that a client moves without a gap.
func (g *Gateway) Rotate(keyID string, ttl time.Duration) (Key, error) {
	g.mu.Lock()
	gr := g.grants[keyID]
	g.mu.Unlock()
	if gr == nil {
		return Key{}, fmt.Errorf("access: no key %q", keyID)
	}
	k, err := g.Grant(gr.client, gr.agent, ttl)
	if err != nil {
		return Key{}, err
	}
	until := g.now().Add(g.opts.RotateGrace).UTC()
	if err := g.st.expireGrant(context.Background(), keyID, until); err != nil {
		return Key{}, fmt.Errorf("access: store rotation: %w", err)
	}
	g.mu.Lock()
	if until.Before(gr.expires) {
		gr.expires = until
	}
	g.mu.Unlock()
	return k, nil
}

// Status reports the gateway, its grants and its live turns.
func (g *Gateway) Status() supervisorproto.AccessStatus {
	grants := g.List()
	g.mu.Lock()
	s := supervisorproto.AccessStatus{Name: g.opts.Name, URL: g.url, Grants: grants}
	for a := range g.bindings {
		s.Agents = append(s.Agents, a)
	}
	for c := range g.clients {
		s.Clients = append(s.Clients, c)
	}
	for _, t := range g.live {
		s.Turns = append(s.Turns, supervisorproto.AccessTurn{ResponseID: t.id, Agent: t.agent, Client: t.client, KeyID: t.keyID, Status: t.status(), CreatedAt: t.created})
	}
	closed := g.closed
	g.mu.Unlock()
	slices.Sort(s.Agents)
	slices.Sort(s.Clients)
	slices.SortFunc(s.Turns, func(a, b supervisorproto.AccessTurn) int { return a.CreatedAt.Compare(b.CreatedAt) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.StoreOK = !closed && g.st.ping(ctx)
	return s
}

// purge applies retention.
func (g *Gateway) purge(ctx context.Context) {
	now := g.now()
	g.mu.Lock()
	window := 0
	for _, b := range g.bindings {
		window = max(window, b.RetentionSeconds)
	}
	g.mu.Unlock()
	if window == 0 {
		window = DefaultRetentionSeconds
	}
	w := time.Duration(window) * time.Second
	if err := g.st.purge(ctx, now.Add(-w), now.Add(-idempotencyRetention), now.Add(-max(w, idempotencyRetention))); err != nil {
		g.log.Warn("access retention", "err", err)
	}
	g.pruneLimiters(now)
}

func newID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
