package relay

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

var keyA = TurnKey{RuntimeID: "runtime-a", InvocationID: "invocation-1", RequestID: "request-1", Index: 1}

var rootMD = map[string]any{"nemo_fabric_request_id": "request-1"}

func TestListenerBindsLoopbackEphemeral(t *testing.T) {
	l := newListener(t, Options{})
	addr := l.Addr().(*net.TCPAddr)
	if !addr.IP.IsLoopback() || addr.Port == 0 {
		t.Fatalf("Addr = %v, want loopback with an ephemeral port", addr)
	}
	if want := "http://" + addr.String() + "/atof"; l.URL() != want {
		t.Fatalf("URL = %q, want %q", l.URL(), want)
	}
	for _, host := range []string{"0.0.0.0", "::"} {
		if l2, err := NewListener(Options{Host: host}); err == nil {
			l2.Close(context.Background())
			t.Fatalf("NewListener(Host %q) succeeded; want a loopback error", host)
		}
	}
}

func TestNonLoopbackForcesToken(t *testing.T) {
	l := newListener(t, Options{Host: "127.0.0.1", AllowNonLoopback: true})
	if l.token == "" {
		t.Fatal("AllowNonLoopback did not force a token")
	}
}

func TestContentLengthBody(t *testing.T) {
	l := newListener(t, Options{})
	c := &collector{}
	turn := begin(t, l, keyA, c)
	rc := dial(t, l)
	rc.send(sized(target, ndjson(start("r", "", rootMD), end("r", ""))))
	resp, body := rc.response()
	if resp.StatusCode != 200 || body != "OK" {
		t.Fatalf("got %d %q, want 200 OK", resp.StatusCode, body)
	}
	// Kept alive: a second request on the same connection.
	rc.send(sized(target, ndjson(mark("m", "r", nil))))
	if resp, _ := rc.response(); resp.StatusCode != 200 {
		t.Fatalf("second request: %d", resp.StatusCode)
	}
	st := endTurn(t, turn)
	if got := c.uuids(); !slices.Equal(got, []string{"r", "r", "m"}) {
		t.Fatalf("delivered %v", got)
	}
	if st.Correlated != 3 || st.Uploads != 2 || st.Uncorrelated+st.Dropped+st.Malformed+st.Oversized+st.Interrupted != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestChunkedBodySplitsRecordsAnywhere(t *testing.T) {
	l := newListener(t, Options{})
	c := &collector{}
	turn := begin(t, l, keyA, c)
	body := ndjson(start("r", "", rootMD), start("c", "r", nil), end("c", "r"), end("r", ""))
	rc := dial(t, l)
	rc.send(post(target, "Transfer-Encoding: chunked"))
	// Chunks of 7 bytes cut records, and the final record has no newline.
	body = strings.TrimSuffix(body, "\n")
	for i := 0; i < len(body); i += 7 {
		rc.send(chunk(body[i:min(i+7, len(body))]))
	}
	rc.send(lastChunk)
	if resp, _ := rc.response(); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	endTurn(t, turn)
	if got := c.uuids(); !slices.Equal(got, []string{"r", "c", "c", "r"}) {
		t.Fatalf("delivered %v", got)
	}
}

func TestChunkedUploadDeliversBeforeItEnds(t *testing.T) {
	l := newListener(t, Options{})
	c := &collector{}
	turn := begin(t, l, keyA, c)
	rc := dial(t, l)
	rc.send(post(target, "Transfer-Encoding: chunked"))
	rc.send(chunk(ndjson(start("r", "", rootMD))))
	// Relay's ndjson transport keeps one upload open: the record arrives
	// while the body is still open.
	testproc.Eventually(t, testTimeout, "the first record", func() bool { return c.len() == 1 })
	rc.send(chunk(ndjson(end("r", ""))) + lastChunk)
	if resp, _ := rc.response(); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if st := endTurn(t, turn); st.Correlated != 2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestExpectContinue(t *testing.T) {
	l := newListener(t, Options{})
	c := &collector{}
	turn := begin(t, l, keyA, c)
	body := ndjson(start("r", "", rootMD))

	// Sized body: the listener says 100 Continue before the body is sent.
	rc := dial(t, l)
	rc.send(post(target, "Expect: 100-continue", "Content-Length: "+itoa(len(body))))
	if got := rc.statusLine(); got != "HTTP/1.1 100 Continue" {
		t.Fatalf("interim response %q", got)
	}
	if blank := rc.statusLine(); blank != "" {
		t.Fatalf("after 100 Continue: %q", blank)
	}
	rc.send(body)
	if resp, _ := rc.response(); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}

	// Chunked body, the same.
	rc = dial(t, l)
	rc.send(post(target, "Expect: 100-continue", "Transfer-Encoding: chunked"))
	if got := rc.statusLine(); got != "HTTP/1.1 100 Continue" {
		t.Fatalf("interim response %q", got)
	}
	rc.statusLine()
	rc.send(chunk(ndjson(end("r", ""))) + lastChunk)
	if resp, _ := rc.response(); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if st := endTurn(t, turn); st.Correlated != 2 {
		t.Fatalf("stats %+v", st)
	}

	// A request that is refused gets its final status, never 100 Continue.
	for _, req := range []string{
		post("/other", "Expect: 100-continue", "Content-Length: 10"),
		post(target, "Expect: 100-continue"), // no length: 411
	} {
		rc = dial(t, l)
		rc.send(req)
		resp, _ := rc.response()
		if resp.StatusCode == 100 || resp.StatusCode == 200 {
			t.Fatalf("%q: status %d", req, resp.StatusCode)
		}
		rc.expectClosed()
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestStatusRules(t *testing.T) {
	l := newListener(t, Options{MaxBodyBytes: 1 << 10})
	good := ndjson(mark("m", "", nil))
	cases := []struct {
		name   string
		req    string
		status int
	}{
		{"GET is 404 as upstream", "GET /atof HTTP/1.1\r\nHost: x\r\n\r\n", 404},
		{"PUT is 404", "PUT /atof HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 404},
		{"HEAD is 404", "HEAD /atof HTTP/1.1\r\nHost: x\r\n\r\n", 404},
		{"other path", sized("/events", good), 404},
		{"trailing slash", sized("/atof/", good), 404},
		{"sub path", sized("/atof/x", good), 404},
		{"query is ignored", sized("/atof?a=b", good), 200},
		{"no length", post("/atof"), 411},
		{"HTTP/1.0 without length", "POST /atof HTTP/1.0\r\n\r\n", 411},
		{"HTTP/1.0 sized", "POST /atof HTTP/1.0\r\nContent-Length: " + itoa(len(good)) + "\r\n\r\n" + good, 200},
		{"empty sized body", sized("/atof", ""), 200},
		{"blank lines only", sized("/atof", "\n\r\n  \n"), 200},
		{"bad content length", post("/atof", "Content-Length: x"), 400},
		{"negative content length", post("/atof", "Content-Length: -1"), 400},
		{"conflicting content lengths", post("/atof", "Content-Length: 1", "Content-Length: 2") + "ab", 400},
		{"malformed JSON line", sized("/atof", "{nope\n"+good), 400},
		{"JSON array line", sized("/atof", "[1,2]\n"), 400},
		{"JSON string line", sized("/atof", "\"x\"\n"), 400},
		{"two objects on a line", sized("/atof", "{} {}\n"), 400},
		{"invalid UTF-8", sized("/atof", "{\"name\":\"\xff\"}\n"), 400},
		{"bad chunk size", post("/atof", "Transfer-Encoding: chunked") + "zz\r\nabc\r\n0\r\n\r\n", 400},
		{"bad chunk terminator", post("/atof", "Transfer-Encoding: chunked") + "3\r\nabcXX0\r\n\r\n", 400},
		{"unknown transfer coding", post("/atof", "Transfer-Encoding: gzip, chunked") + lastChunk, 501},
		{"headers over 64 KiB", post("/atof", "X-Big: "+strings.Repeat("x", 80<<10), "Content-Length: 0"), 431},
		{"body over MaxBodyBytes", sized("/atof", strings.Repeat(good, 100)), 413},
		{"chunked body over MaxBodyBytes", post("/atof", "Transfer-Encoding: chunked") + chunk(strings.Repeat(good, 100)) + lastChunk, 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := dial(t, l)
			rc.send(tc.req)
			var req *http.Request
			if strings.HasPrefix(tc.req, "HEAD") {
				req = &http.Request{Method: "HEAD"}
			}
			resp, body := rc.responseTo(req)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d %q, want %d", resp.StatusCode, body, tc.status)
			}
			if tc.status != 200 && !resp.Close {
				t.Fatalf("status %d without closing the connection", tc.status)
			}
		})
	}
	if st := l.Stats(); st.Rejected == 0 || st.Malformed == 0 {
		t.Fatalf("listener stats %+v", st)
	}
}

func TestTruncatedSizedBody(t *testing.T) {
	l := newListener(t, Options{})
	c := &collector{}
	turn := begin(t, l, keyA, c)
	rc := dial(t, l)
	full := ndjson(start("r", "", rootMD), end("r", ""))
	rc.send(post(target, "Content-Length: "+itoa(len(full)+100)) + full)
	rc.c.(*net.TCPConn).CloseWrite()
	resp, _ := rc.response()
	if resp.StatusCode != 400 {
		t.Fatalf("status %d, want 400", resp.StatusCode)
	}
	st := endTurn(t, turn)
	// The complete records before the break still count.
	if st.Correlated != 2 || st.Interrupted != 1 || st.Uploads != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestChunkedUploadBrokenOff(t *testing.T) {
	l := newListener(t, Options{})
	c := &collector{}
	turn := begin(t, l, keyA, c)
	rc := dial(t, l)
	rc.send(post(target, "Transfer-Encoding: chunked") + chunk(ndjson(start("r", "", rootMD))+`{"kind":"sco`))
	testproc.Eventually(t, testTimeout, "the first record", func() bool { return c.len() == 1 })
	rc.c.Close()
	testproc.Eventually(t, testTimeout, "the interruption", func() bool { return turn.Stats().Interrupted == 1 })
	st := endTurn(t, turn)
	if st.Correlated != 1 || st.Malformed != 0 {
		t.Fatalf("stats %+v (the partial record must not count as malformed)", st)
	}
}

func TestOversizedRecordAtUpstreamLimit(t *testing.T) {
	l := newListener(t, Options{}) // default 1 MiB per record
	c := &collector{}
	turn := begin(t, l, keyA, c)
	pad := func(r rec, size int) string {
		r.extra = map[string]any{"data": map[string]any{"pad": ""}}
		base := len(r.line())
		r.extra = map[string]any{"data": map[string]any{"pad": strings.Repeat("x", size-base)}}
		s := r.line()
		if len(s) != size {
			t.Fatalf("padded record is %d bytes, want %d", len(s), size)
		}
		return s
	}
	exact := pad(start("r", "", rootMD), DefaultMaxRecordBytes)
	over := pad(mark("big", "r", nil), DefaultMaxRecordBytes+1)
	body := exact + "\n" + over + "\n" + ndjson(end("r", ""))
	rc := dial(t, l)
	rc.send(post(target, "Transfer-Encoding: chunked"))
	for i := 0; i < len(body); i += 100_000 {
		rc.send(chunk(body[i:min(i+100_000, len(body))]))
	}
	rc.send(lastChunk)
	resp, _ := rc.response()
	if resp.StatusCode != 413 {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
	st := endTurn(t, turn)
	// The record at the limit and the one after the oversized record
	// both arrive: one bad record does not cost the rest of the upload.
	if got := c.uuids(); !slices.Equal(got, []string{"r", "r"}) {
		t.Fatalf("delivered %v", got)
	}
	if st.Oversized != 1 || st.Correlated != 2 {
		t.Fatalf("stats %+v", st)
	}
	if ls := l.Stats(); ls.Oversized != 1 {
		t.Fatalf("listener stats %+v", ls)
	}
}

func TestMalformedRecordsSkippedAndCounted(t *testing.T) {
	l := newListener(t, Options{})
	c := &collector{}
	turn := begin(t, l, keyA, c)
	rc := dial(t, l)
	rc.send(sized(target, start("r", "", rootMD).line()+"\n{broken\n[]\n"+end("r", "").line()+"\n"))
	if resp, _ := rc.response(); resp.StatusCode != 400 {
		t.Fatalf("status %d, want 400", resp.StatusCode)
	}
	st := endTurn(t, turn)
	if st.Correlated != 2 || st.Malformed != 2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestToken(t *testing.T) {
	l := newListener(t, Options{RequireToken: true})
	sc := l.SinkConfig("runtime-a")
	auth := sc.Env[EnvToken]
	if !strings.HasPrefix(auth, "Bearer ") || len(auth) < 40 {
		t.Fatalf("Env[%s] = %q", EnvToken, auth)
	}
	c := &collector{}
	turn := begin(t, l, keyA, c)
	body := ndjson(start("r", "", rootMD))
	for _, h := range []string{"", "Authorization: Bearer nope", "Authorization: " + strings.TrimPrefix(auth, "Bearer ")} {
		rc := dial(t, l)
		hs := []string{"Expect: 100-continue"}
		if h != "" {
			hs = append(hs, h)
		}
		rc.send(post(target, append(hs, "Content-Length: "+itoa(len(body)))...))
		resp, _ := rc.response()
		if resp.StatusCode != 401 {
			t.Fatalf("%q: status %d, want 401", h, resp.StatusCode)
		}
	}
	rc := dial(t, l)
	rc.send(sized(target, body, "Authorization: "+auth))
	if resp, _ := rc.response(); resp.StatusCode != 200 {
		t.Fatalf("status %d with the token", resp.StatusCode)
	}
	if st := endTurn(t, turn); st.Correlated != 1 || st.Uploads != 1 {
		t.Fatalf("stats %+v (refused requests are not uploads)", st)
	}
}

func TestReadHeaderTimeoutClosesConnection(t *testing.T) {
	l := newListener(t, Options{ReadHeaderTimeout: 50 * time.Millisecond})
	rc := dial(t, l)
	rc.send("POST /atof HTTP/1.1\r\nHost: x\r\n") // headers never end
	rc.expectClosed()
}

func TestBodyIdleTimeoutEndsUpload(t *testing.T) {
	l := newListener(t, Options{BodyIdleTimeout: 50 * time.Millisecond})
	c := &collector{}
	turn := begin(t, l, keyA, c)
	rc := dial(t, l)
	rc.send(post(target, "Transfer-Encoding: chunked") + chunk(ndjson(start("r", "", rootMD))))
	testproc.Eventually(t, testTimeout, "the interruption", func() bool { return turn.Stats().Interrupted == 1 })
	if st := endTurn(t, turn); st.Correlated != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCloseEndsOpenUploadsAndTurns(t *testing.T) {
	l, err := NewListener(Options{Logger: discard(), DrainWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	turn := begin(t, l, keyA, c)
	rc := dial(t, l)
	rc.send(post(target, "Transfer-Encoding: chunked") + chunk(ndjson(start("r", "", rootMD))))
	testproc.Eventually(t, testTimeout, "the first record", func() bool { return c.len() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if st := turn.End(ctx); st.Correlated != 1 {
		t.Fatalf("stats after Close %+v", st)
	}
	if _, err := l.BeginTurn(keyA, c.sink); err != ErrClosed {
		t.Fatalf("BeginTurn after Close: %v", err)
	}
	rc.expectClosed()
	if _, err := http.Post(l.URL(), "application/x-ndjson", strings.NewReader("")); err == nil {
		t.Fatal("the listener still accepts connections after Close")
	}
}

func TestIdleTimeoutClosesKeptAliveConnection(t *testing.T) {
	l := newListener(t, Options{IdleTimeout: 50 * time.Millisecond})
	rc := dial(t, l)
	rc.send(sized("/atof", ndjson(mark("m", "", nil))))
	if resp, _ := rc.response(); resp.StatusCode != 200 || resp.Close {
		t.Fatalf("status %d, close %v", resp.StatusCode, resp.Close)
	}
	rc.expectClosed()
}

func TestTurnBufferLimitsOverHTTP(t *testing.T) {
	l := newListener(t, Options{MaxRecords: 4, BackpressureWait: -1})
	c := &collector{gate: make(chan struct{})}
	turn := begin(t, l, keyA, c)
	in := []rec{start("r", "", rootMD)}
	for i := range 19 {
		in = append(in, mark("m"+strconv.Itoa(i), "r", nil))
	}
	rc := dial(t, l)
	rc.send(sized(target, ndjson(in...)))
	// Dropping for lack of room is not the client's fault: 200, and the
	// turn reports it.
	if resp, _ := rc.response(); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	close(c.gate)
	st := endTurn(t, turn)
	if st.Correlated+st.Dropped != len(in) || st.Dropped < len(in)-5 {
		t.Fatalf("stats %+v", st)
	}
}
