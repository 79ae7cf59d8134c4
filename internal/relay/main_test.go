package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testTimeout bounds waits that only fail when something is broken; no test
// asserts on durations.
const testTimeout = 30 * time.Second

func newListener(t *testing.T, opts Options) *Listener {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.DrainWindow == 0 {
		opts.DrainWindow = -1 // tests end turns explicitly
	}
	l, err := NewListener(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := l.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l
}

// collector is a Sink that records events.
type collector struct {
	mu     sync.Mutex
	events []contract.FabricEvent
	gate   chan struct{} // when non-nil, each delivery waits for a value
	err    error
}

func (c *collector) sink(ctx context.Context, ev contract.FabricEvent) error {
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	c.events = append(c.events, ev)
	return nil
}

func (c *collector) uuids() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, ev := range c.events {
		out = append(out, atofOf(ev)["uuid"].(string))
	}
	return out
}

func (c *collector) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.events)
}

func atofOf(ev contract.FabricEvent) map[string]any { return ev.Metadata[MetaATOF].(map[string]any) }

// rec builds one ATOF record line (without '\n').
type rec struct {
	kind, cat, uuid, parent, name string
	md                            map[string]any
	extra                         map[string]any
}

func (r rec) line() string {
	m := map[string]any{"kind": r.kind, "atof_version": "0.1", "uuid": r.uuid, "name": r.name, "timestamp": "2026-03-01T12:34:56.123456Z"}
	if r.name == "" {
		m["name"] = r.uuid
	}
	if r.kind == "" {
		m["kind"] = KindScope
	}
	if m["kind"] == KindScope {
		m["scope_category"] = r.cat
		m["category"] = "agent"
		m["attributes"] = []string{}
	}
	if r.parent != "" {
		m["parent_uuid"] = r.parent
	} else {
		m["parent_uuid"] = nil
	}
	if r.md != nil {
		m["metadata"] = r.md
	}
	for k, v := range r.extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func start(uuid, parent string, md map[string]any) rec {
	return rec{kind: KindScope, cat: ScopeStart, uuid: uuid, parent: parent, md: md}
}
func end(uuid, parent string) rec {
	return rec{kind: KindScope, cat: ScopeEnd, uuid: uuid, parent: parent}
}
func mark(uuid, parent string, md map[string]any) rec {
	return rec{kind: KindMark, uuid: uuid, parent: parent, md: md}
}

func ndjson(rs ...rec) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.line())
		b.WriteByte('\n')
	}
	return b.String()
}

// rawConn is a raw HTTP/1.1 client connection to the listener.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, l *Listener) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(testTimeout))
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

func (rc *rawConn) send(s string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.c, s); err != nil {
		rc.t.Fatal(err)
	}
}

// response reads one response (status line, headers, body).
func (rc *rawConn) response() (*http.Response, string) {
	rc.t.Helper()
	return rc.responseTo(nil)
}

// responseTo reads the response to req (needed for HEAD).
func (rc *rawConn) responseTo(req *http.Request) (*http.Response, string) {
	rc.t.Helper()
	resp, err := http.ReadResponse(rc.br, req)
	if err != nil {
		rc.t.Fatalf("reading response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		rc.t.Fatalf("reading body: %v", err)
	}
	return resp, string(body)
}

// statusLine reads one raw status line (for 100 Continue).
func (rc *rawConn) statusLine() string {
	rc.t.Helper()
	line, err := rc.br.ReadString('\n')
	if err != nil {
		rc.t.Fatalf("reading status line: %v", err)
	}
	return strings.TrimRight(line, "\r\n")
}

// expectClosed reads until EOF, failing on anything but EOF or a reset.
func (rc *rawConn) expectClosed() {
	rc.t.Helper()
	b, err := io.ReadAll(rc.br)
	if len(b) > 0 {
		rc.t.Fatalf("unexpected data before close: %q", b)
	}
	if err != nil && !strings.Contains(err.Error(), "reset") {
		rc.t.Fatalf("expected the server to close the connection, got %v", err)
	}
}

func post(target string, headers ...string) string {
	h := "POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	for _, x := range headers {
		h += x + "\r\n"
	}
	return h + "\r\n"
}

func sized(target, body string, headers ...string) string {
	return post(target, append(headers, fmt.Sprintf("Content-Length: %d", len(body)))...) + body
}

func chunk(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }

const lastChunk = "0\r\n\r\n"

// target is the path of runtime "runtime-a".
const target = "/atof?runtime=runtime-a"

func endTurn(t *testing.T, turn *Turn) Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	return turn.End(ctx)
}

func begin(t *testing.T, l *Listener, key TurnKey, c *collector) *Turn {
	t.Helper()
	turn, err := l.BeginTurn(key, c.sink)
	if err != nil {
		t.Fatal(err)
	}
	return turn
}
