package access

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/testaudit"
)

// TestMain lets runtimes of bundled adapters re-execute this test binary
// as their host.
func TestMain(m *testing.M) {
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	// net/http lingers up to 500 ms in closeWriteAndWait after answering a
	// request whose body it did not read (413): the standard library's own
	// bounded delay, not a goroutine of the gateway.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("net/http.(*conn).closeWriteAndWait"))
}

// Agent settings of the scripted adapter (agentConfig renders a config).
const (
	textAgent = `{response: "turn {turn}: {input}", events: 3}`
	hangAgent = `{mode: hang}`
)

func agentConfig(name, settings string) string {
	return "schema_version: fabric.agent/v1alpha1\nmetadata: {name: " + name + "}\nruntime: {}\n" +
		"harness:\n  adapter_id: fabric.scripted\n  settings: " + settings + "\n"
}

// runtimeDispatcher is a real Dispatcher: one real Fabric runtime of the
// scripted adapter per agent, Fabric's record of every request it ran,
// and hooks for the handshakes tests need.
type runtimeDispatcher struct {
	mu       sync.Mutex
	rts      map[string]*fabric.Runtime
	gens     map[string]string
	results  map[string]*contract.RunResult
	running  map[string]bool
	invokes  map[string]int                      // agent -> turns that reached the runtime
	before   func(req contract.RunRequest) error // called before the runtime; an error drops the turn
	agentErr error
}

func newDispatcher(t *testing.T, agents map[string]string) *runtimeDispatcher {
	t.Helper()
	d := &runtimeDispatcher{rts: map[string]*fabric.Runtime{}, gens: map[string]string{}, results: map[string]*contract.RunResult{},
		running: map[string]bool{}, invokes: map[string]int{}}
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(t.TempDir()))
	for name, settings := range agents {
		cfg, err := client.ParseConfig([]byte(agentConfig(name, settings)), name+".yaml", fabric.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rt, err := client.StartRuntime(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Stop(context.Background()) })
		d.rts[name], d.gens[name] = rt, "g1"
	}
	return d
}

func (d *runtimeDispatcher) Invoke(ctx context.Context, agent string, req contract.RunRequest, events func(contract.FabricEvent)) (*contract.RunResult, error) {
	d.mu.Lock()
	rt, before := d.rts[agent], d.before
	if rt != nil {
		d.running[req.RequestID] = true
	}
	d.mu.Unlock()
	if rt == nil {
		return nil, ErrUnavailable
	}
	if before != nil {
		if err := before(req); err != nil {
			d.mu.Lock()
			delete(d.running, req.RequestID)
			d.mu.Unlock()
			return nil, err
		}
	}
	d.mu.Lock()
	d.invokes[agent]++
	d.mu.Unlock()
	res, err := rt.InvokeRequest(ctx, req, events)
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.running, req.RequestID)
	var se *contract.StateError
	if errors.As(err, &se) && se.Code == "runtime_busy" {
		return nil, ErrBusy
	}
	if res != nil {
		d.results[req.RequestID] = res
	}
	return res, err
}

func (d *runtimeDispatcher) Agent(ctx context.Context, agent string) (AgentInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.agentErr != nil {
		return AgentInfo{}, d.agentErr
	}
	rt := d.rts[agent]
	if rt == nil {
		return AgentInfo{}, nil
	}
	return AgentInfo{Generation: d.gens[agent], RuntimeID: rt.ID(), Health: "passed"}, nil
}

func (d *runtimeDispatcher) Lookup(ctx context.Context, agent, id string) (*contract.RunResult, bool, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if res := d.results[id]; res != nil {
		return res, false, true, nil
	}
	if d.running[id] {
		return nil, true, true, nil
	}
	return nil, false, false, nil
}

func (d *runtimeDispatcher) count(agent string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.invokes[agent]
}

func (d *runtimeDispatcher) setBefore(f func(contract.RunRequest) error) {
	d.mu.Lock()
	d.before = f
	d.mu.Unlock()
}

// env is one gateway under test, serving on a real socket.
type env struct {
	t      *testing.T
	d      *runtimeDispatcher
	g      *Gateway
	opts   Options
	tokens []string
	stop   func()
}

func bindings(agents ...string) []Binding {
	var bs []Binding
	for _, a := range agents {
		bs = append(bs, Binding{Agent: a, Generation: "g1", Idempotency: IdempotencyOptional})
	}
	return bs
}

func newEnv(t *testing.T, d *runtimeDispatcher, opts Options) *env {
	t.Helper()
	e := &env{t: t, d: d}
	if opts.StoreDir == "" {
		opts.StoreDir = t.TempDir()
	}
	if opts.Clients == nil {
		opts.Clients = []string{"voice", "web"}
	}
	opts.Dispatcher = d
	// The log goes into the test output, which the suite's ledger scan reads.
	opts.Logger = slog.New(slog.NewJSONHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.opts = opts
	e.start()
	t.Cleanup(func() {
		e.stop()
		testaudit.LogFiles(t, opts.StoreDir)
	})
	return e
}

func (e *env) start() {
	e.t.Helper()
	g, err := New(context.Background(), e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	pepper, _ := os.ReadFile(filepath.Join(e.opts.StoreDir, keyFile))
	harnessui.RecordForAudit(hex.EncodeToString(pepper))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx) }()
	e.g = g
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				e.t.Errorf("serve: %v", err)
			}
			cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer ccancel()
			if err := g.Close(cctx); err != nil {
				e.t.Errorf("close: %v", err)
			}
		})
	}
}

// crash abandons the gateway as a crash would: the store closes under it
// and nothing more is recorded; its turns go on in the supervisor.
func (e *env) crash() *Gateway {
	g := e.g
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.st.close()
	g.srv.Close()
	g.ln.Close()
	return g
}

func (e *env) key(client, agent string) Key {
	e.t.Helper()
	k, err := e.g.Grant(client, agent, time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	harnessui.RecordForAudit(k.Token)
	e.tokens = append(e.tokens, k.Token)
	return k
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	return m
}

func (r reply) code(t *testing.T) string {
	t.Helper()
	er, _ := r.json(t)["error"].(map[string]any)
	c, _ := er["code"].(string)
	return c
}

func (e *env) request(method, path, token string, body any, hdr ...string) *http.Request {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.g.URL()+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	return req
}

func (e *env) do(method, path, token string, body any, hdr ...string) reply {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(e.request(method, path, token, body, hdr...))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	e.checkNoSecret(resp.Header, b)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

func (e *env) checkNoSecret(h http.Header, body []byte) {
	e.t.Helper()
	var all strings.Builder
	for k, vs := range h {
		all.WriteString(k + ": " + strings.Join(vs, ",") + "\n")
	}
	all.Write(body)
	for _, tok := range e.tokens {
		if strings.Contains(all.String(), tok) {
			e.t.Errorf("a token appears in a response")
		}
	}
	if strings.Contains(all.String(), "runtime-") {
		e.t.Errorf("a runtime id appears in a response: %s", all.String())
	}
}

// sse is one open event stream.
type sse struct {
	t    *testing.T
	resp *http.Response
	rd   *bufio.Reader
	e    *env
}

type frame struct {
	event, data, comment string
}

func (e *env) open(method, path, token string, body any, hdr ...string) *sse {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(e.request(method, path, token, body, hdr...))
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	s := &sse{t: e.t, resp: resp, rd: bufio.NewReader(resp.Body), e: e}
	e.t.Cleanup(func() { resp.Body.Close() })
	return s
}

// next reads one frame (a comment line counts as one); io.EOF at the end.
func (s *sse) next() (frame, error) {
	var f frame
	for {
		line, err := s.rd.ReadString('\n')
		if err != nil {
			return f, err
		}
		line = strings.TrimRight(line, "\n")
		for _, tok := range s.e.tokens {
			if strings.Contains(line, tok) {
				s.t.Errorf("a token appears in an SSE frame")
			}
		}
		switch {
		case line == "":
			if f != (frame{}) {
				return f, nil
			}
		case strings.HasPrefix(line, ":"):
			return frame{comment: strings.TrimSpace(line[1:])}, nil
		case strings.HasPrefix(line, "event: "):
			f.event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			f.data = line[len("data: "):]
		case strings.HasPrefix(line, "id:"):
			s.t.Errorf("id: line in SSE: %q", line)
		default:
			s.t.Errorf("unexpected SSE line %q", line)
		}
	}
}

// until reads frames up to and including the first whose event is typ.
func (s *sse) until(typ string) []frame {
	s.t.Helper()
	var out []frame
	for {
		f, err := s.next()
		if err != nil {
			s.t.Fatalf("stream ended before %s: %v (read %d frames)", typ, err, len(out))
		}
		out = append(out, f)
		if f.event == typ {
			return out
		}
	}
}

// rest reads frames to the end of the stream.
func (s *sse) rest() []frame {
	s.t.Helper()
	var out []frame
	for {
		f, err := s.next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			s.t.Fatalf("stream: %v", err)
		}
		out = append(out, f)
	}
}

func (s *sse) close() { s.resp.Body.Close() }

// events decodes the event frames (no comments, no [DONE]).
func events(t *testing.T, fs []frame) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, f := range fs {
		if f.comment != "" || f.data == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(f.data), &m); err != nil {
			t.Fatalf("frame %q: %v", f.data, err)
		}
		if f.event != "" && m["type"] != f.event {
			t.Errorf("event %q carries type %v", f.event, m["type"])
		}
		out = append(out, m)
	}
	return out
}

// knownTypes are the Responses stream event types a client SDK accepts.
var knownTypes = map[string]bool{
	"response.created": true, "response.in_progress": true, "response.queued": true, "response.completed": true,
	"response.failed": true, "response.incomplete": true, "response.output_item.added": true, "response.output_item.done": true,
	"response.content_part.added": true, "response.content_part.done": true, "response.output_text.delta": true,
	"response.output_text.done": true, "response.reasoning_summary_part.added": true, "response.reasoning_summary_part.done": true,
	"response.reasoning_summary_text.delta": true, "response.reasoning_summary_text.done": true,
	"response.mcp_call.in_progress": true, "response.mcp_call.completed": true, "response.mcp_call.failed": true,
	"response.mcp_call_arguments.delta": true, "response.mcp_call_arguments.done": true, "error": true,
}

// checkHygiene: known types, contiguous sequence numbers from first, items
// with ids appended in order.
func checkHygiene(t *testing.T, evs []map[string]any, first int) {
	t.Helper()
	items := 0
	for i, ev := range evs {
		typ, _ := ev["type"].(string)
		if !knownTypes[typ] {
			t.Errorf("unknown event type %q", typ)
		}
		if seq, _ := ev["sequence_number"].(float64); int(seq) != first+i {
			t.Errorf("event %d (%s): sequence_number %v, want %d", i, typ, ev["sequence_number"], first+i)
		}
		if typ == "response.output_item.added" {
			if idx, _ := ev["output_index"].(float64); int(idx) != items {
				t.Errorf("output_item.added at %v, want %d", ev["output_index"], items)
			}
			items++
			if it, _ := ev["item"].(map[string]any); it["id"] == "" || it["id"] == nil {
				t.Errorf("item without id: %v", ev)
			}
		}
	}
}

func lastResponse(t *testing.T, evs []map[string]any) map[string]any {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	r, _ := evs[len(evs)-1]["response"].(map[string]any)
	return r
}

func outputText(resp map[string]any) string {
	var b strings.Builder
	out, _ := resp["output"].([]any)
	for _, it := range out {
		m, _ := it.(map[string]any)
		if m["type"] != "message" {
			continue
		}
		parts, _ := m["content"].([]any)
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			s, _ := pm["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}
