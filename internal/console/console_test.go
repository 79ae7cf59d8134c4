package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/internal/console"
	"github.com/fabric-runtime/fabric/internal/supervisor"
)

// rig is a real supervisor (nothing applied) with its console serving.
type rig struct {
	c     *console.Console
	token string
	stop  func()
}

func newRig(t *testing.T) *rig {
	t.Helper()
	// A short state dir: the control socket's path must fit sun_path.
	dir, err := os.MkdirTemp("", "fcons-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sup, err := supervisor.New(supervisor.Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c, err := console.New(console.Options{StateDir: dir, Supervisor: sup})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(c.TokenFile())
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(string(b))
	harnessui.RecordForAudit(tok)
	ctx, cancel := context.WithCancel(context.Background())
	supDone, consDone := make(chan struct{}), make(chan error, 1)
	go func() { sup.Serve(ctx); close(supDone) }()
	go func() { consDone <- c.Serve(ctx) }()
	r := &rig{c: c, token: tok}
	r.stop = func() {
		cancel()
		<-supDone
		if err := <-consDone; err != nil {
			t.Errorf("console serve: %v", err)
		}
	}
	t.Cleanup(func() {
		if ctx.Err() == nil {
			r.stop()
		}
	})
	return r
}

func (r *rig) do(t *testing.T, method, path string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, r.c.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestSignInAndRefusals(t *testing.T) {
	r := newRig(t)
	bearer := "Bearer " + r.token
	fi, err := os.Stat(r.c.TokenFile())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v mode %v, want 0600", err, fi.Mode())
	}
	if !strings.HasPrefix(r.c.URL(), "http://127.0.0.1:") {
		t.Fatalf("console URL %s is not on loopback", r.c.URL())
	}
	tests := []struct {
		name   string
		method string
		path   string
		hdr    []string
		status int
		body   string // a substring of the answer
	}{
		{"API without a token", "GET", "/api/status", nil, 401, `"unauthorized"`},
		{"page without a token is the sign-in page", "GET", "/", nil, 401, `data-page="signin"`},
		{"wrong token", "GET", "/api/status", []string{"Authorization", "Bearer fabc_wrong"}, 401, `"unauthorized"`},
		{"token", "GET", "/api/status", []string{"Authorization", bearer}, 200, `"schema_version":"fabric.deploy.status/v1alpha1"`},
		{"page with the token", "GET", "/", []string{"Authorization", bearer}, 200, `No deployment`},
		{"another origin, even with the token", "GET", "/api/status", []string{"Authorization", bearer, "Origin", "http://evil.example"}, 403, `"bad_origin"`},
		{"another Host (DNS rebinding)", "GET", "/api/status", []string{"Authorization", bearer, "Host", "evil.example:80"}, 403, `"bad_host"`},
		{"sign-in with a wrong token", "POST", "/session", []string{"Authorization", "Bearer fabc_wrong", "Origin", r.c.URL()}, 401, `"unauthorized"`},
		{"static files need no session", "GET", "/static/console.js", nil, 200, `use strict`},
		{"unknown API", "GET", "/api/nothing", []string{"Authorization", bearer}, 404, `"not_found"`},
		{"events of an unknown agent", "GET", "/api/agents/nobody/events", []string{"Authorization", bearer}, 404, `"no_such_agent"`},
		{"a bad cursor", "GET", "/api/agents/nobody/events?after=x", []string{"Authorization", bearer}, 400, `"invalid_cursor"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, h, body := r.do(t, tc.method, tc.path, tc.hdr...)
			if st != tc.status || !strings.Contains(body, tc.body) {
				t.Fatalf("%s %s = %d %q, want %d with %q", tc.method, tc.path, st, clip(body), tc.status, tc.body)
			}
			if h.Get("Content-Security-Policy") == "" || h.Get("Cache-Control") != "no-store" {
				t.Fatalf("missing security headers: %v", h)
			}
			if strings.Contains(body, r.token) {
				t.Fatal("an answer carries the console token")
			}
		})
	}

	// The browser's exchange: the token for an HttpOnly, SameSite=Strict
	// session cookie.
	st, h, _ := r.do(t, "POST", "/session", "Authorization", bearer, "Origin", r.c.URL())
	if st != 204 {
		t.Fatalf("sign-in = %d", st)
	}
	ck := h.Get("Set-Cookie")
	if !strings.Contains(ck, console.CookieName+"=fabs_") || !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Strict") || strings.Contains(ck, r.token) {
		t.Fatalf("session cookie %q", ck)
	}
	sess := strings.SplitN(strings.SplitN(ck, ";", 2)[0], "=", 2)[1]
	harnessui.RecordForAudit(sess)
	cookie := console.CookieName + "=" + sess
	if st, _, body := r.do(t, "GET", "/", "Cookie", cookie); st != 200 || !strings.Contains(body, `data-page="deployment"`) {
		t.Fatalf("page with the session = %d", st)
	}
	// A state change with the cookie must say where it comes from.
	if st, _, body := r.do(t, "POST", "/api/access", "Cookie", cookie); st != 403 || !strings.Contains(body, "bad_origin") {
		t.Fatalf("POST with a cookie and no Origin = %d %s", st, clip(body))
	}
	if st, _, body := r.do(t, "POST", "/api/access", "Cookie", cookie, "Origin", "http://evil.example"); st != 403 || !strings.Contains(body, "bad_origin") {
		t.Fatalf("POST from another origin = %d %s", st, clip(body))
	}
	if st, _, body := r.do(t, "POST", "/api/access", "Cookie", cookie, "Origin", r.c.URL()); st != 400 || !strings.Contains(body, "invalid_request") {
		t.Fatalf("POST from the console's origin = %d %s, want it decoded (400 for an empty body)", st, clip(body))
	}
	// Sign-out ends the session.
	if st, _, _ := r.do(t, "POST", "/session/end", "Cookie", cookie, "Origin", r.c.URL()); st != 204 {
		t.Fatalf("sign-out = %d", st)
	}
	if st, _, _ := r.do(t, "GET", "/api/status", "Cookie", cookie); st != 401 {
		t.Fatalf("after sign-out = %d, want 401", st)
	}

	// Stop: the token file is gone.
	r.stop()
	if _, err := os.Stat(r.c.TokenFile()); !os.IsNotExist(err) {
		t.Fatalf("token file after stop: %v", err)
	}
}

// TestNonLoopbackPeer: a request from another machine is refused even
// with the token (the console's handler, with the peer address such a
// request would have).
func TestNonLoopbackPeer(t *testing.T) {
	r := newRig(t)
	u := strings.TrimPrefix(r.c.URL(), "http://")
	req := httptest.NewRequest("GET", "/api/status", nil)
	req.Host = u
	req.RemoteAddr = "192.0.2.7:40000"
	req.Header.Set("Authorization", "Bearer "+r.token)
	w := httptest.NewRecorder()
	r.c.Handler().ServeHTTP(w, req)
	if w.Code != 403 || !strings.Contains(w.Body.String(), "not_loopback") {
		t.Fatalf("non-loopback peer = %d %s", w.Code, w.Body)
	}
}

// TestKeptAddress: a restarted console serves at the same address.
func TestKeptAddress(t *testing.T) {
	dir, err := os.MkdirTemp("", "fcons-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sup, err := supervisor.New(supervisor.Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c1, err := console.New(console.Options{StateDir: dir, Supervisor: sup})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c1.Serve(ctx) }()
	cancel()
	<-done
	c2, err := console.New(console.Options{StateDir: dir, Supervisor: sup})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c2.Serve(ctx)
	}()
	if c1.URL() != c2.URL() {
		t.Fatalf("restarted console at %s, was %s", c2.URL(), c1.URL())
	}
	if _, err := console.New(console.Options{StateDir: filepath.Join(dir, "x"), Supervisor: sup, Listen: "0.0.0.0:0"}); err == nil {
		t.Fatal("a non-loopback listen address was accepted")
	}
}

func TestParseCursor(t *testing.T) {
	tests := []struct {
		in   string
		want console.Cursor
		ok   bool
	}{
		{"", console.Cursor{}, true},
		{"runtime-abc/12", console.Cursor{RuntimeID: "runtime-abc", Seq: 12}, true},
		{"runtime-abc/0", console.Cursor{RuntimeID: "runtime-abc"}, true},
		{"runtime-abc", console.Cursor{}, false},
		{"runtime-abc/x", console.Cursor{}, false},
		{"runtime-abc/-1", console.Cursor{}, false},
		{"a/b/3", console.Cursor{}, false},
		{"a b/3", console.Cursor{}, false},
		{strings.Repeat("r", 200) + "/1", console.Cursor{}, false},
	}
	for _, tc := range tests {
		got, err := console.ParseCursor(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseCursor(%q) = %+v, %v; want %+v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if err == nil && tc.in != "" && got.String() != tc.in {
			t.Errorf("Cursor(%q).String() = %q", tc.in, got.String())
		}
	}
}

func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"", "r/1", "runtime-x/18446744073709551615", "/", "a/b/c", "r/01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := console.ParseCursor(s)
		if err != nil || s == "" {
			return
		}
		back, err := console.ParseCursor(c.String())
		if err != nil || back != c {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, c, c.String(), back, err)
		}
	})
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300]
	}
	return s
}
