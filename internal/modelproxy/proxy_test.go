package modelproxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/internal/testsupport/testaudit"
	"github.com/fabric-runtime/fabric/modelstub"
)

// testScript: a fixed answer in three chunks, a slow stream, and answers
// that echo the real key (KEY is replaced by it).
const testScript = `
default: {text: "alpha beta gamma", chunks: 3}
rules:
  - match: {contains: SLOW}
    reply: {text: "s0 s1 s2 s3 s4 s5 s6 s7 s8 s9 s10 s11 s12 s13 s14 s15 s16 s17 s18 s19", chunks: 20, interval_ms: 500}
  - match: {contains: ECHOTEXT}
    reply: {text: "your key is KEY"}
  - match: {contains: ECHOERROR}
    reply: {error: {status: 500, message: "upstream says KEY is wrong", headers: {x-echo: "KEY"}}}
`

// apiCase is one wire API behind one route.
type apiCase struct {
	route, api string
	stubAPI    modelstub.API
	path       string // appended to BaseURL(route)
	stubPath   string // what the upstream sees
	header     string // where its clients send the key
	done       string // the stream's last event
}

var apiCases = []apiCase{
	{"resp", APIOpenAIResponses, modelstub.APIResponses, "/responses", "/v1/responses", "authorization", "response.completed"},
	{"chat", APIOpenAIChat, modelstub.APIChat, "/chat/completions", "/v1/chat/completions", "authorization", "data: [DONE]"},
	{"claude", APIAnthropicMessages, modelstub.APIMessages, "/v1/messages", "/v1/messages", "x-api-key", "message_stop"},
}

func (c apiCase) body(prompt string, stream bool) string {
	p, _ := json.Marshal(prompt)
	switch c.api {
	case APIOpenAIResponses:
		return fmt.Sprintf(`{"model":"m","input":%s,"stream":%v}`, p, stream)
	case APIOpenAIChat:
		if stream {
			return fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":%s}],"stream":true,"stream_options":{"include_usage":true}}`, p)
		}
		return fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":%s}]}`, p)
	}
	return fmt.Sprintf(`{"model":"m","max_tokens":64,"messages":[{"role":"user","content":%s}],"stream":%v}`, p, stream)
}

// fixture is a real modelstub upstream that requires the real key, a real
// proxy in front of it with the three routes, and a real HTTP client. At
// cleanup it proves that no secret reached the proxy's log or anything the
// client received.
type fixture struct {
	t       *testing.T
	stub    *modelstub.Server
	p       *Proxy
	key     string
	logs    string // the proxy's log file
	client  *http.Client
	mu      sync.Mutex
	secrets []string
	seen    [][]byte // every response (headers and body) the client read
}

func newToken(t *testing.T, prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := prefix + hex.EncodeToString(b)
	RecordForAudit(tok)
	return tok
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	f := &fixture{t: t, key: newToken(t, "sk-real-"), logs: filepath.Join(t.TempDir(), "proxy.log")}
	logFile, err := os.Create(f.logs)
	if err != nil {
		t.Fatal(err)
	}
	f.secrets = []string{f.key}
	script, err := modelstub.ParseScript([]byte(strings.ReplaceAll(testScript, "KEY", f.key)))
	if err != nil {
		t.Fatal(err)
	}
	f.stub = modelstub.New(script, modelstub.WithExpectKey(f.key))
	opts.Logger = slog.New(slog.NewJSONHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.p = p
	for _, c := range apiCases {
		base := f.stub.OpenAIBaseURL()
		if c.api == APIAnthropicMessages {
			base = f.stub.AnthropicBaseURL()
		}
		p.SetRoute(c.route, Route{API: c.api, BaseURL: base, Credential: f.key})
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx) }()
	f.client = &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		f.client.CloseIdleConnections()
		f.stub.Close()
		logFile.Close()
		b, err := os.ReadFile(f.logs)
		if err != nil {
			t.Fatal(err)
		}
		logs := string(b)
		testaudit.Log(t, "model proxy log", logs)
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, s := range f.secrets {
			if strings.Contains(logs, s) {
				t.Errorf("a credential is in the proxy's log")
			}
			for _, b := range f.seen {
				if bytes.Contains(b, []byte(s)) {
					t.Errorf("a credential is in a response the client got")
				}
			}
		}
	})
	return f
}

func (f *fixture) grant(route, agent string) string {
	f.t.Helper()
	ph, err := f.p.Grant(route, agent)
	if err != nil {
		f.t.Fatal(err)
	}
	if !strings.HasPrefix(ph, PlaceholderPrefix) || len(ph) < len(PlaceholderPrefix)+22 {
		f.t.Fatalf("placeholder of %d bytes", len(ph))
	}
	f.mu.Lock()
	f.secrets = append(f.secrets, ph)
	f.mu.Unlock()
	return ph
}

// send posts body to the route's path with headers (name, value pairs) and
// returns the response for the caller to read with f.read.
func (f *fixture) send(c apiCase, body string, hdr ...string) *http.Response {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.p.BaseURL(c.route)+c.path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := f.client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	f.keepHeaders(resp)
	return resp
}

func (f *fixture) keepHeaders(resp *http.Response) {
	var hb bytes.Buffer
	_ = resp.Header.Write(&hb)
	f.keep(hb.Bytes())
}

func (f *fixture) keep(b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, append([]byte(nil), b...))
}

// read reads and keeps a whole response.
func (f *fixture) read(resp *http.Response) (int, []byte) {
	f.t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	f.keep(b)
	if err != nil {
		f.t.Fatalf("reading the response: %v", err)
	}
	return resp.StatusCode, b
}

// call sends with the header the API's clients use.
func (f *fixture) call(c apiCase, placeholder, body string) (int, []byte) {
	f.t.Helper()
	if c.header == "x-api-key" {
		return f.read(f.send(c, body, "x-api-key", placeholder))
	}
	return f.read(f.send(c, body, "Authorization", "Bearer "+placeholder))
}

// tokens is the stub's estimate: about four bytes a token, at least one.
func tokens(n int) int64 { return int64(max(1, (n+3)/4)) }

// TestAPIs: for each API, streamed and not, the answer arrives intact, the
// upstream got the real key (it requires it) and no client credential
// header, and the usage is counted for the agent that asked.
func TestAPIs(t *testing.T) {
	f := newFixture(t, Options{})
	for _, c := range apiCases {
		ph := f.grant(c.route, "agent-"+c.route)
		other := f.grant(c.route, "other-"+c.route)
		var want Usage
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", c.route, stream), func(t *testing.T) {
				f.stub.ClearRequests()
				body := c.body("hello", stream)
				// The client sends both credential headers: neither may reach
				// the upstream.
				resp := f.send(c, body, "Authorization", "Bearer "+ph, "x-api-key", ph, "Cookie", "session=1")
				if !stream && resp.Header.Get("Content-Length") == "" {
					t.Errorf("Content-Length lost")
				}
				status, got := f.read(resp)
				if status != http.StatusOK {
					t.Fatalf("status %d: %s", status, got)
				}
				if stream {
					if !strings.Contains(resp.Header.Get("Content-Type"), "text/event-stream") {
						t.Errorf("content type %q", resp.Header.Get("Content-Type"))
					}
					text := string(got)
					at := 0
					for _, chunk := range []string{`"alpha"`, `" beta"`, `" gamma"`, c.done} {
						i := strings.Index(text[at:], chunk)
						if i < 0 {
							t.Fatalf("stream lacks %s in order: %s", chunk, got)
						}
						at += i
					}
				} else if !bytes.Contains(got, []byte(`"alpha beta gamma"`)) {
					t.Fatalf("answer: %s", got)
				}
				recs := f.stub.Requests()
				if len(recs) != 1 {
					t.Fatalf("%d upstream requests", len(recs))
				}
				rec := recs[0]
				if !rec.KeyOK || rec.Path != c.stubPath || rec.API != c.stubAPI || rec.Stream != stream {
					t.Fatalf("upstream record: key_ok %v path %s api %s stream %v", rec.KeyOK, rec.Path, rec.API, rec.Stream)
				}
				for _, h := range []string{"authorization", "x-api-key", "cookie"} {
					if _, ok := rec.Headers[h]; ok != (h == c.header) {
						t.Errorf("upstream header %s present: %v", h, ok)
					}
				}
				want.Requests++
				want.InputTokens += tokens(len(body))
				want.OutputTokens += tokens(len("alpha beta gamma"))
				u := f.p.Usage()[c.route]
				if got := u["agent-"+c.route]; got.LastAtMillis == 0 || (Usage{got.Requests, got.Failed, got.InputTokens, got.OutputTokens, 0} != want) {
					t.Fatalf("usage %+v, want %+v", got, want)
				}
				if u["other-"+c.route] != (Usage{}) {
					t.Fatalf("the other agent was charged: %+v", u["other-"+c.route])
				}
			})
		}
		// The other agent's own placeholder works for it, with the header
		// of the other API.
		hdr := []string{"x-api-key", other}
		if c.header == "x-api-key" {
			hdr = []string{"Authorization", "Bearer " + other}
		}
		if status, got := f.read(f.send(c, c.body("hi", false), hdr...)); status != http.StatusOK {
			t.Fatalf("%s via the other header: %d %s", c.route, status, got)
		}
		if got := f.p.Usage()[c.route]["other-"+c.route].Requests; got != 1 {
			t.Fatalf("other agent: %d requests", got)
		}
	}
}

// TestRefused: a missing, unknown, malformed, other route's, replaced or
// revoked placeholder gets 401 in the API's own error shape, and no request
// reaches the upstream.
func TestRefused(t *testing.T) {
	f := newFixture(t, Options{})
	for _, c := range apiCases {
		t.Run(c.route, func(t *testing.T) {
			mine := f.grant(c.route, "a")
			otherRoute := "chat"
			if c.route == "chat" {
				otherRoute = "resp"
			}
			foreign := f.grant(otherRoute, "a")
			revoked := f.grant(c.route, "b")
			f.p.Revoke(c.route, "b")
			replaced := f.grant(c.route, "c")
			f.grant(c.route, "c")
			unknown := PlaceholderPrefix + strings.Repeat("A", 43)
			f.stub.ClearRequests()
			body := c.body("hello", false)
			cases := map[string][]string{
				"absent":            nil,
				"unknown":           {"Authorization", "Bearer " + unknown},
				"real key":          {"Authorization", "Bearer " + f.key},
				"not bearer":        {"Authorization", "Basic " + mine},
				"two that differ":   {"Authorization", "Bearer " + mine, "x-api-key", unknown},
				"other route":       {c.header, foreign},
				"revoked":           {c.header, revoked},
				"replaced":          {c.header, replaced},
				"empty bearer":      {"Authorization", "Bearer "},
				"prefix only":       {"x-api-key", PlaceholderPrefix},
				"bearer, x-api-key": {"x-api-key", revoked, "Authorization", "Bearer " + revoked},
			}
			for name, hdr := range cases {
				if c.header == "authorization" && len(hdr) == 2 && hdr[0] == "authorization" {
					hdr = []string{"Authorization", "Bearer " + hdr[1]}
				}
				status, got := f.read(f.send(c, body, hdr...))
				if status != http.StatusUnauthorized {
					t.Errorf("%s: status %d: %s", name, status, got)
					continue
				}
				var e struct {
					Type  string `json:"type"`
					Error struct {
						Type, Code, Message string
					} `json:"error"`
				}
				if err := json.Unmarshal(got, &e); err != nil {
					t.Fatalf("%s: %s", name, got)
				}
				if c.api == APIAnthropicMessages {
					if e.Type != "error" || e.Error.Type != "authentication_error" {
						t.Errorf("%s: not Anthropic's shape: %s", name, got)
					}
				} else if e.Error.Code != "invalid_api_key" || e.Error.Message == "" {
					t.Errorf("%s: not OpenAI's shape: %s", name, got)
				}
			}
			if n := len(f.stub.Requests()); n != 0 {
				t.Fatalf("%d refused requests reached the upstream", n)
			}
			if status, got := f.call(c, mine, body); status != http.StatusOK {
				t.Fatalf("the valid placeholder: %d %s", status, got)
			}
		})
	}
}

// readUntil reads lines of a stream until one contains s.
func readUntil(t *testing.T, r *bufio.Reader, s string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if strings.Contains(line, s) {
			return
		}
		if err != nil {
			t.Fatalf("stream ended before %q: %v", s, err)
		}
	}
}

// TestRevokeCutsStream: revoking a placeholder cuts its stream in flight
// within a second, and its next request is refused. That the first chunk
// of a ten-second stream arrives at all shows that chunks are flushed as
// they come.
func TestRevokeCutsStream(t *testing.T) {
	f := newFixture(t, Options{})
	for _, c := range apiCases {
		t.Run(c.route, func(t *testing.T) {
			ph := f.grant(c.route, "slow")
			resp := f.send(c, c.body("SLOW please", true), c.header, bearer(c, ph))
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			var seen bytes.Buffer
			r := bufio.NewReader(io.TeeReader(resp.Body, &seen))
			readUntil(t, r, `s0 `) // the first chunk arrived: the stream is live
			start := time.Now()
			f.p.Revoke(c.route, "slow")
			rest, err := io.ReadAll(r)
			elapsed := time.Since(start)
			f.keep(seen.Bytes())
			if err == nil {
				t.Errorf("the cut stream ended cleanly")
			}
			if elapsed > time.Second {
				t.Fatalf("the stream was cut after %v", elapsed)
			}
			if bytes.Contains(rest, []byte("s19")) || bytes.Contains(rest, []byte(c.done)) {
				t.Fatalf("the stream went on: %s", rest)
			}
			if status, _ := f.call(c, ph, c.body("hello", false)); status != http.StatusUnauthorized {
				t.Fatalf("after Revoke: %d", status)
			}
			if u := f.p.Usage()[c.route]["slow"]; u.Requests != 1 || u.Failed != 1 {
				t.Fatalf("usage %+v", u)
			}
		})
	}
}

func bearer(c apiCase, ph string) string {
	if c.header == "authorization" {
		return "Bearer " + ph
	}
	return ph
}

// TestConcurrent: many agents on all routes at once; each agent's counts
// are exact (run with -race).
func TestConcurrent(t *testing.T) {
	f := newFixture(t, Options{})
	const agents, each = 3, 4
	type agent struct {
		c    apiCase
		name string
		ph   string
	}
	var all []agent
	for _, c := range apiCases {
		for i := range agents {
			name := fmt.Sprintf("agent-%d", i)
			all = append(all, agent{c, name, f.grant(c.route, name)})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(all)*each)
	for _, a := range all {
		for i := range each {
			wg.Go(func() {
				stream := i%2 == 1
				req, _ := http.NewRequest(http.MethodPost, f.p.BaseURL(a.c.route)+a.c.path, strings.NewReader(a.c.body("hello", stream)))
				req.Header.Set(a.c.header, bearer(a.c, a.ph))
				resp, err := f.client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				f.keep(b)
				if err != nil || resp.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("%s %s: %d %v", a.c.route, a.name, resp.StatusCode, err)
				}
			})
		}
	}
	wg.Go(func() {
		for range 50 {
			_ = f.p.Usage()
			f.p.SetRoute("extra", Route{API: APIOpenAIChat, BaseURL: f.stub.OpenAIBaseURL()})
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	usage := f.p.Usage()
	for _, a := range all {
		u := usage[a.c.route][a.name]
		in := tokens(len(a.c.body("hello", false)))*each/2 + tokens(len(a.c.body("hello", true)))*each/2
		if u.Requests != each || u.Failed != 0 || u.InputTokens != in || u.OutputTokens != tokens(len("alpha beta gamma"))*each {
			t.Errorf("%s %s: %+v", a.c.route, a.name, u)
		}
	}
}

// TestEchoedKeyMasked: a key the upstream echoes, in a body, a stream or an
// error with its headers, reaches the client masked.
func TestEchoedKeyMasked(t *testing.T) {
	f := newFixture(t, Options{})
	mask := strings.Repeat("*", len(f.key))
	for _, c := range apiCases {
		ph := f.grant(c.route, "echo")
		for _, stream := range []bool{false, true} {
			status, got := f.call(c, ph, c.body("ECHOTEXT", stream))
			if status != http.StatusOK || !strings.Contains(string(got), "your key is "+mask) {
				t.Errorf("%s stream=%v: %d %s", c.route, stream, status, got)
			}
		}
		resp := f.send(c, c.body("ECHOERROR", false), c.header, bearer(c, ph))
		status, got := f.read(resp)
		if status != http.StatusInternalServerError || !strings.Contains(string(got), "upstream says "+mask) || resp.Header.Get("X-Echo") != mask {
			t.Errorf("%s error: %d %s %q", c.route, status, got, resp.Header.Get("X-Echo"))
		}
		if u := f.p.Usage()[c.route]["echo"]; u.Requests != 3 || u.Failed != 1 {
			t.Errorf("%s usage %+v", c.route, u)
		}
	}
}

// TestModelOverride: a route's Model replaces the request's.
func TestModelOverride(t *testing.T) {
	f := newFixture(t, Options{})
	c := apiCases[1]
	f.p.SetRoute(c.route, Route{API: c.api, BaseURL: f.stub.OpenAIBaseURL(), Credential: f.key, Model: "pinned-model"})
	ph := f.grant(c.route, "a")
	status, got := f.call(c, ph, c.body("hello", false))
	if status != http.StatusOK || !strings.Contains(string(got), `"model":"pinned-model"`) {
		t.Fatalf("%d %s", status, got)
	}
	if recs := f.stub.Requests(); len(recs) != 1 || recs[0].Model != "pinned-model" {
		t.Fatalf("upstream saw %+v", recs)
	}
	if status, got := f.call(c, ph, `not json`); status != http.StatusBadRequest {
		t.Fatalf("a body that is not JSON: %d %s", status, got)
	}
}

// TestLimitsAndPaths: bodies over the bound, paths outside a route, an
// unreachable upstream.
func TestLimitsAndPaths(t *testing.T) {
	f := newFixture(t, Options{MaxBodyBytes: 1024})
	c := apiCases[0]
	ph := f.grant(c.route, "a")
	f.stub.ClearRequests()
	if status, _ := f.call(c, ph, `{"input":"`+strings.Repeat("x", 2048)+`"}`); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("large body: %d", status)
	}
	get := func(path string) int {
		req, _ := http.NewRequest(http.MethodGet, f.p.URL()+path, nil)
		req.Header.Set("Authorization", "Bearer "+ph)
		status, _ := f.read(must(f.client.Do(req)))
		return status
	}
	for path, want := range map[string]int{
		"/health":                    200,
		"/r/resp/v1/models":          200,
		"/r/resp/models":             404, // OpenAI paths are below /v1
		"/r/nope/v1/models":          404,
		"/r/resp/v1/../../_requests": 404,
		"/r/resp/v1/%2e%2e/x":        404,
		"/r/resp/v1%2Fmodels":        404,
		"/other":                     404,
	} {
		if got := get(path); got != want {
			t.Errorf("GET %s: %d, want %d", path, got, want)
		}
	}
	if n := len(f.stub.Requests()); n != 1 {
		t.Fatalf("%d upstream requests, want only the model listing", n)
	}
	f.p.SetRoute("gone", Route{API: APIOpenAIChat, BaseURL: "http://127.0.0.1:1/v1", Credential: f.key})
	gone := apiCase{route: "gone", api: APIOpenAIChat, path: "/chat/completions", header: "authorization"}
	phg := f.grant("gone", "a")
	if status, got := f.call(gone, phg, gone.body("hello", false)); status != http.StatusBadGateway {
		t.Fatalf("unreachable upstream: %d %s", status, got)
	}
	if u := f.p.Usage()["gone"]["a"]; u.Requests != 1 || u.Failed != 1 {
		t.Fatalf("usage %+v", u)
	}
	f.p.SetRoute("bad", Route{API: "gemini", BaseURL: "ftp://x"})
	if err := CheckRoute("bad", Route{API: "gemini"}); err == nil {
		t.Fatal("CheckRoute accepted an unknown API")
	}
	phb := f.grant("bad", "a")
	if status, _ := f.call(apiCase{route: "bad", path: "/x", header: "authorization"}, phb, "{}"); status != http.StatusInternalServerError {
		t.Fatalf("misconfigured route: %d", status)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestGrantsAndRoutes: grants need a route and a sane agent name; removing
// a route revokes its grants and forgets its usage; BaseURL per API.
func TestGrantsAndRoutes(t *testing.T) {
	f := newFixture(t, Options{})
	if _, err := f.p.Grant("nope", "a"); err == nil {
		t.Error("a grant on no route")
	}
	if _, err := f.p.Grant("resp", "a\nb"); err == nil {
		t.Error("an agent name with a newline")
	}
	if got := f.p.BaseURL("resp"); got != f.p.URL()+"/r/resp/v1" {
		t.Errorf("BaseURL(resp) = %s", got)
	}
	if got := f.p.BaseURL("claude"); got != f.p.URL()+"/r/claude" {
		t.Errorf("BaseURL(claude) = %s", got)
	}
	c := apiCases[2]
	ph := f.grant(c.route, "a")
	if status, _ := f.call(c, ph, c.body("hi", false)); status != 200 {
		t.Fatal(status)
	}
	f.p.RemoveRoute(c.route)
	if _, ok := f.p.Usage()[c.route]; ok {
		t.Error("usage kept after RemoveRoute")
	}
	f.p.SetRoute(c.route, Route{API: c.api, BaseURL: f.stub.AnthropicBaseURL(), Credential: f.key})
	if status, _ := f.call(c, ph, c.body("hi", false)); status != http.StatusUnauthorized {
		t.Fatalf("a grant survived RemoveRoute: %d", status)
	}
}

func TestNonLoopbackRefused(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		if p, err := New(Options{Addr: addr}); err == nil {
			p.Close()
			t.Errorf("%s accepted", addr)
		}
	}
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLedger: Grant records each placeholder in the suite's token ledger,
// but only in an existing 0600 file, never through a symlink.
func TestLedger(t *testing.T) {
	dir := t.TempDir()
	good, loose, link := filepath.Join(dir, "ledger"), filepath.Join(dir, "loose"), filepath.Join(dir, "link")
	for path, mode := range map[string]os.FileMode{good: 0o600, loose: 0o644} {
		if err := os.WriteFile(path, nil, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	suite := os.Getenv(harnessui.EnvTokenLedger)
	var made []string
	defer func() { // the placeholders made here go to the suite's ledger, too
		os.Setenv(harnessui.EnvTokenLedger, suite)
		for _, ph := range made {
			RecordForAudit(ph)
		}
	}()
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.SetRoute("r", Route{API: APIOpenAIChat, BaseURL: "http://127.0.0.1:1/v1"})
	for _, c := range []struct {
		path, read string
		recorded   bool
	}{{good, good, true}, {loose, loose, false}, {link, good, false}, {filepath.Join(dir, "missing"), good, false}} {
		t.Setenv(harnessui.EnvTokenLedger, c.path)
		before, _ := os.ReadFile(c.read)
		ph, err := p.Grant("r", "a")
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, ph)
		after, _ := os.ReadFile(c.read)
		if got := string(after) == string(before)+ph+"\n"; got != c.recorded {
			t.Errorf("%s: recorded %v", c.path, got)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Error("a ledger was created")
	}
}
