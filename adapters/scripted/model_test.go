package scripted_test

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapters/scripted"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/catalog"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/modelstub"
)

const (
	modelKeyEnv = "FABRIC_SCRIPTED_TEST_KEY"
	modelKey    = "sk-scripted-test-7d2e"
)

// endpoint is a modelstub behind a front server that announces each
// request (arrived) and sums the usage of the answers it relays.
type endpoint struct {
	stub    *modelstub.Server
	front   *httptest.Server
	arrived chan string   // the request path, as it arrives
	served  chan struct{} // after an answer's usage is counted
	mu      sync.Mutex
	usage   modelstub.Usage
}

type teeWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (w *teeWriter) Write(p []byte) (int, error) { w.buf.Write(p); return w.ResponseWriter.Write(p) }
func (w *teeWriter) Flush()                      { w.ResponseWriter.(http.Flusher).Flush() }

func newEndpoint(t *testing.T, script *modelstub.Script) *endpoint {
	t.Helper()
	e := &endpoint{arrived: make(chan string, 64), served: make(chan struct{}, 64)}
	e.stub = modelstub.New(script, modelstub.WithExpectKey(modelKey))
	e.front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.arrived <- r.URL.Path
		tw := &teeWriter{ResponseWriter: w}
		e.stub.ServeHTTP(tw, r)
		var req modelstub.Usage // this answer's usage
		sc := bufio.NewScanner(&tw.buf)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				if u, ok := modelstub.EventUsage(modelstub.APIChat, []byte(data)); ok {
					req.Update(u)
				}
			}
		}
		e.mu.Lock()
		e.usage.InputTokens += req.InputTokens
		e.usage.OutputTokens += req.OutputTokens
		e.mu.Unlock()
		e.served <- struct{}{}
	}))
	t.Cleanup(func() { e.front.Close(); e.stub.Close() })
	return e
}

// summed waits for n answers to be counted and returns their usage.
func (e *endpoint) summed(n int) modelstub.Usage {
	for range n {
		<-e.served
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.usage
}

func modelParams(baseURL, workspace string, settings map[string]any) hostproto.StartParams {
	p := startParams(settings)
	if p.Config.Harness.Settings == nil {
		p.Config.Harness.Settings = map[string]any{}
	}
	p.Config.Harness.Settings["mode"] = scripted.ModeModel
	env := modelKeyEnv
	p.Config.Models = map[string]contract.AgentModel{"default": {Provider: "openai", Model: "stub-model", APIKeyEnv: &env, BaseURL: &baseURL}}
	p.Config.Instructions = &contract.AgentInstructionsConfig{System: &contract.AgentInstruction{Content: "You are terse."}}
	p.RuntimeContext.Environment.Workspace = &workspace
	return p
}

func startModel(t *testing.T, e *endpoint, settings map[string]any) (*core, string) {
	t.Helper()
	t.Setenv(modelKeyEnv, modelKey)
	ws := t.TempDir()
	c, err := startHostWith(t, modelParams(e.front.URL+"/v1", ws, settings))
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	return c, ws
}

func TestModelModeTurns(t *testing.T) {
	tests := []struct {
		name     string
		script   *modelstub.Script
		input    string
		want     string
		requests int
		check    func(t *testing.T, ws string, reqs []modelstub.Request, evs []hostproto.EventParams)
	}{
		{
			name:   "text reply",
			script: &modelstub.Script{Default: &modelstub.Reply{Text: "four, as asked", Chunks: 3}},
			input:  "What is 2+2?", want: "four, as asked", requests: 1,
			check: func(t *testing.T, ws string, reqs []modelstub.Request, evs []hostproto.EventParams) {
				var joined strings.Builder
				for _, ev := range evs {
					if ev.Event.Kind == scripted.EventKind {
						joined.WriteString(ev.Event.Message)
					}
				}
				if joined.String() != "four, as asked" {
					t.Errorf("streamed %q", joined.String())
				}
				r := reqs[0]
				if r.API != modelstub.APIChat || !r.Stream || !r.KeyOK || r.Model != "stub-model" || r.UserText != "What is 2+2?" || len(r.Tools) != 1 || r.Tools[0] != scripted.ShellTool {
					t.Errorf("request %+v", r)
				}
				if !bytes.Contains(r.Body, []byte(`"You are terse."`)) {
					t.Errorf("no system instruction in %s", r.Body)
				}
			},
		},
		{
			name: "tool call writes a file in the workspace",
			script: &modelstub.Script{Rules: []modelstub.Rule{
				{Match: modelstub.Match{Contains: "STUBTOOL"}, Reply: modelstub.Reply{ToolCall: &modelstub.ToolCall{Command: "printf made > made.txt && echo TOOL_OK"}}},
			}, Default: &modelstub.Reply{Text: "done"}},
			input: "STUBTOOL please", want: "done", requests: 2,
			check: func(t *testing.T, ws string, reqs []modelstub.Request, evs []hostproto.EventParams) {
				if b, err := os.ReadFile(filepath.Join(ws, "made.txt")); err != nil || string(b) != "made" {
					t.Errorf("made.txt: %q %v", b, err)
				}
				if !reqs[1].ToolResult || !bytes.Contains(reqs[1].Body, []byte("TOOL_OK")) {
					t.Errorf("second request carries no tool result: %s", reqs[1].Body)
				}
				var kinds []string
				for _, ev := range evs {
					kinds = append(kinds, ev.Event.Kind)
				}
				if !strings.Contains(strings.Join(kinds, " "), scripted.EventToolCall+" "+scripted.EventToolResult) {
					t.Errorf("event kinds %v", kinds)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEndpoint(t, tt.script)
			c, ws := startModel(t, e, nil)
			res := c.invoke("i1", tt.input)
			if res.Status != contract.StatusSucceeded || res.Output != tt.want {
				t.Fatalf("result %+v (error %+v), want succeeded %q", res, res.Error, tt.want)
			}
			reqs := e.stub.Requests()
			if len(reqs) != tt.requests {
				t.Fatalf("%d requests, want %d", len(reqs), tt.requests)
			}
			u := e.summed(tt.requests)
			in, out := uint64(u.InputTokens), uint64(u.OutputTokens)
			if res.Usage == nil || *res.Usage.InputTokens != in || *res.Usage.OutputTokens != out ||
				*res.Usage.TotalTokens != in+out || in == 0 {
				t.Errorf("usage %+v, want the sum over the requests %+v", res.Usage, u)
			}
			tt.check(t, ws, reqs, c.takeEvents())
		})
	}
}

func TestModelModeErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        modelstub.ErrorReply
		code       string
		retryable  bool
		retryAfter any // metadata retry_after_seconds, nil = absent
	}{
		{"429 retry_after", modelstub.ErrorReply{Status: 429, RetryAfter: 3}, scripted.CodeModelRateLimited, true, float64(3)},
		{"429 insufficient_quota", modelstub.ErrorReply{Status: 429, Type: "insufficient_quota", RetryAfter: -1}, scripted.CodeModelQuotaExhausted, false, nil},
		{"401", modelstub.ErrorReply{Status: 401}, scripted.CodeModelAuth, false, nil},
		{"403", modelstub.ErrorReply{Status: 403}, scripted.CodeModelAuth, false, nil},
		{"404", modelstub.ErrorReply{Status: 404}, scripted.CodeModelNotFound, false, nil},
		{"529", modelstub.ErrorReply{Status: 529}, scripted.CodeModelOverloaded, true, nil},
		{"503", modelstub.ErrorReply{Status: 503, RetryAfter: 2}, scripted.CodeModelOverloaded, true, float64(2)},
		{"502", modelstub.ErrorReply{Status: 502}, scripted.CodeModelServerError, true, nil},
		{"context length", modelstub.ErrorReply{Status: 400, Type: "context_length_exceeded", Message: "This model's maximum context length is 8192 tokens."}, scripted.CodeModelContextExceeded, false, nil},
		{"other 400", modelstub.ErrorReply{Status: 400, Message: "bad field"}, scripted.CodeModelBadRequest, false, nil},
	}
	d := scriptedDescriptor(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEndpoint(t, &modelstub.Script{Default: &modelstub.Reply{Error: &tt.err}})
			c, _ := startModel(t, e, nil)
			res := c.invoke("i1", "hello")
			if res.Status != contract.StatusFailed || res.Error == nil || res.Error.Code != tt.code || res.Error.Retryable != tt.retryable {
				t.Fatalf("result %+v error %+v, want failed %s retryable %v", res, res.Error, tt.code, tt.retryable)
			}
			if got := res.Error.Extensions["retry_after_seconds"]; got != tt.retryAfter {
				t.Errorf("retry_after_seconds %v, want %v", got, tt.retryAfter)
			}
			if res.Error.Extensions["http_status"] != float64(tt.err.Status) {
				t.Errorf("extensions %v", res.Error.Extensions)
			}
			if strings.Contains(res.Error.Message, modelKey) {
				t.Error("the error shows the key")
			}
			norm, retryable, ok := d.ClassifyModelError(&contract.ErrorInfo{Code: res.Error.Code, Message: res.Error.Message, Retryable: res.Error.Retryable})
			if isModelCode(tt.code) != ok || (ok && (norm != tt.code || retryable != tt.retryable)) {
				t.Errorf("classified %q %v %v", norm, retryable, ok)
			}
		})
	}
}

func isModelCode(code string) bool {
	for _, c := range contract.ModelErrorCodes() {
		if c == code {
			return true
		}
	}
	return false
}

func scriptedDescriptor(t *testing.T) *contract.AdapterDescriptor {
	t.Helper()
	entry, err := catalog.LoadDescriptor(scripted.Descriptor(), "scripted.fabric-adapter.json")
	if err != nil {
		t.Fatal(err)
	}
	return &entry.Descriptor
}

// TestModelModeServerErrorOnNth: a 500 on the first request only fails the
// first turn (retryable); the next turn succeeds.
func TestModelModeServerErrorOnNth(t *testing.T) {
	e := newEndpoint(t, &modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Nth: 1}, Reply: modelstub.Reply{Error: &modelstub.ErrorReply{Status: 500}}},
	}, Default: &modelstub.Reply{Text: "recovered"}})
	c, _ := startModel(t, e, nil)
	if res := c.invoke("i1", "first"); res.Status != contract.StatusFailed || res.Error == nil || res.Error.Code != scripted.CodeModelServerError || !res.Error.Retryable {
		t.Fatalf("first turn %+v %+v", res, res.Error)
	}
	if res := c.invoke("i2", "second"); res.Status != contract.StatusSucceeded || res.Output != "recovered" {
		t.Fatalf("second turn %+v %+v", res, res.Error)
	}
	if reqs := e.stub.Requests(); len(reqs) != 2 || reqs[0].Status != 500 || reqs[1].Status != 200 || !reqs[1].Time.After(reqs[0].Time) {
		t.Errorf("requests %+v", reqs)
	}
}

// TestModelModeStallCancel: cancelling a turn whose request stalls ends it
// at once, and the endpoint sees the client go away.
func TestModelModeStallCancel(t *testing.T) {
	e := newEndpoint(t, &modelstub.Script{Default: &modelstub.Reply{Stall: true}})
	c, _ := startModel(t, e, nil)
	done := make(chan contract.AgentRunResult, 1)
	go func() { done <- c.invoke("i1", "HANG") }()
	<-e.arrived // the request is at the endpoint
	t0 := time.Now()
	if err := c.call(hostproto.MethodCancel, hostproto.CancelParams{InvocationID: "i1"}, nil); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if took := time.Since(t0); res.Status != contract.StatusCancelled || took > 2*time.Second {
		t.Fatalf("result %+v after %s, want cancelled promptly", res, took)
	}
}

// TestModelModeUnreachable: a refused connection is model_unreachable,
// retryable.
func TestModelModeUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	t.Setenv(modelKeyEnv, modelKey)
	c, err := startHostWith(t, modelParams(url, t.TempDir(), nil))
	if err != nil {
		t.Fatal(err)
	}
	res := c.invoke("i1", "hello")
	if res.Status != contract.StatusFailed || res.Error == nil || res.Error.Code != scripted.CodeModelUnreachable || !res.Error.Retryable ||
		!strings.Contains(res.Error.Message, "refused") {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
}

// TestModelModeStartErrors: a model mode without a usable model fails start.
func TestModelModeStartErrors(t *testing.T) {
	ws := t.TempDir()
	noURL := modelParams("", ws, nil)
	noModel := modelParams("http://127.0.0.1:9/v1", ws, nil)
	noModel.Config.Models = nil
	badRole := modelParams("http://127.0.0.1:9/v1", ws, map[string]any{"model_role": "judge"})
	for name, p := range map[string]hostproto.StartParams{"no base_url": noURL, "no model": noModel, "unknown role": badRole} {
		_, err := startHostWith(t, p)
		if err == nil {
			t.Errorf("%s: start succeeded", name)
			continue
		}
		if d := errorData(t, err); d.Code != scripted.CodeInvalidSettings {
			t.Errorf("%s: %+v", name, d)
		}
	}
}

// TestModelModeMaxSteps: a turn still calling tools after max_steps
// requests fails.
func TestModelModeMaxSteps(t *testing.T) {
	e := newEndpoint(t, &modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Contains: "loop"}, Reply: modelstub.Reply{ToolCall: &modelstub.ToolCall{Command: "true"}}},
	}})
	c, _ := startModel(t, e, map[string]any{"max_steps": 1})
	res := c.invoke("i1", "loop")
	if res.Status != contract.StatusFailed || res.Error == nil || res.Error.Code != scripted.CodeMaxSteps {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if n := len(e.stub.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
