//go:build linux

package pi_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestLiveOneTurn: one turn through the real pi against the stub: output,
// streamed deltas, usage, and only the configured endpoint and key used.
func TestLiveOneTurn(t *testing.T) {
	l := newLive(t, &modelstub.Script{Default: &modelstub.Reply{Text: "hello from the stub", Chunks: 3}})
	rt := l.Start(l.config(nil, map[string]any{"instructions": map[string]any{"system": map[string]any{"content": "FABRIC_SYSTEM_MARKER", "mode": "append"}}}))
	res := l.Invoke(t, rt, "say hello")
	if res.Status != contract.StatusSucceeded || res.Output != "hello from the stub" {
		t.Fatalf("result %s %v %+v", res.Status, res.Output, res.Error)
	}
	var streamed strings.Builder
	for _, e := range harnesstest.Events(res, "output_delta") {
		streamed.WriteString(e.Message)
	}
	if streamed.String() != "hello from the stub" {
		t.Errorf("output deltas %q", streamed.String())
	}
	if res.Usage == nil || res.Usage.InputTokens == nil || *res.Usage.InputTokens == 0 {
		t.Errorf("usage %+v", res.Usage)
	}
	reqs := l.Stub.Requests()
	if len(reqs) != 1 || reqs[0].Model != testModel || !strings.Contains(string(reqs[0].Body), "FABRIC_SYSTEM_MARKER") {
		t.Errorf("requests %d; first model %q, system instruction present %v", len(reqs), reqs[0].Model, strings.Contains(string(reqs[0].Body), "FABRIC_SYSTEM_MARKER"))
	}
	l.checkRequests()
}

// TestLiveSecondTurnCarriesHistory: the second turn's model request holds
// the first question and answer (one pi session per runtime).
func TestLiveSecondTurnCarriesHistory(t *testing.T) {
	l := newLive(t, &modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Contains: "FIRST_QUESTION"}, Reply: modelstub.Reply{Text: "FIRST_ANSWER_5521"}},
		{Match: modelstub.Match{Contains: "SECOND_QUESTION"}, Reply: modelstub.Reply{Text: "SECOND_ANSWER"}},
	}})
	rt := l.Start(l.config(nil, nil))
	if res := l.Invoke(t, rt, "FIRST_QUESTION"); res.Output != "FIRST_ANSWER_5521" {
		t.Fatalf("first: %s %v %+v", res.Status, res.Output, res.Error)
	}
	if res := l.Invoke(t, rt, "SECOND_QUESTION"); res.Output != "SECOND_ANSWER" {
		t.Fatalf("second: %s %v %+v", res.Status, res.Output, res.Error)
	}
	reqs := l.Stub.Requests()
	last := reqs[len(reqs)-1]
	body := string(last.Body)
	if last.UserText != "SECOND_QUESTION" || !strings.Contains(body, "FIRST_QUESTION") || !strings.Contains(body, "FIRST_ANSWER_5521") {
		t.Errorf("the second request (user text %q) does not carry the first turn", last.UserText)
	}
	l.checkRequests()
}

// TestLiveToolCall: a scripted tool call makes pi run a shell command in
// the workspace, reported as tool_call and tool_result events.
func TestLiveToolCall(t *testing.T) {
	l := newLive(t, &modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Contains: "RUN_TOOL"}, Reply: modelstub.Reply{ToolCall: &modelstub.ToolCall{Command: "echo FABRIC_TOOL_OK > tool.txt && echo done"}}},
		{Match: modelstub.Match{Contains: "RUN_TOOL"}, Reply: modelstub.Reply{Text: "tool done"}},
	}})
	rt := l.Start(l.config(nil, map[string]any{"tools": map[string]any{"enabled": []any{"bash", "read"}}}))
	res := l.Invoke(t, rt, "RUN_TOOL please")
	if res.Status != contract.StatusSucceeded || res.Output != "tool done" {
		t.Fatalf("result %s %v %+v", res.Status, res.Output, res.Error)
	}
	data, err := os.ReadFile(filepath.Join(l.Workspace, "tool.txt"))
	if err != nil || strings.TrimSpace(string(data)) != "FABRIC_TOOL_OK" {
		t.Fatalf("tool.txt = %q, %v", data, err)
	}
	calls, results := harnesstest.Events(res, "tool_call"), harnesstest.Events(res, "tool_result")
	if len(calls) != 1 || calls[0].Metadata["tool_name"] != "bash" || !strings.Contains(calls[0].Metadata["arguments"].(string), "FABRIC_TOOL_OK") {
		t.Errorf("tool_call events %+v", calls)
	}
	if len(results) != 1 || results[0].Metadata["is_error"] != false || !strings.Contains(results[0].Metadata["output"].(string), "done") {
		t.Errorf("tool_result events %+v", results)
	}
	// tools.enabled reached pi: the request offered exactly those tools.
	if tools := l.Stub.Requests()[0].Tools; len(tools) != 2 {
		t.Errorf("offered tools %v, want bash and read", tools)
	}
	l.checkRequests()
}

// TestLiveCancel: a turn streaming slowly is cancelled; the result is
// cancelled within 2 s and the runtime takes the next turn.
func TestLiveCancel(t *testing.T) {
	l := newLive(t, harnesstest.SlowStreamScript())
	rt := l.Start(l.config(nil, nil))
	harnesstest.CancelSlowStream(t, l.Rig, rt)
	l.checkRequests()
}

// TestLiveModelError: an HTTP error from the endpoint is a failed result
// with pi_model_error; the runtime stays usable.
func TestLiveModelError(t *testing.T) {
	l := newLive(t, &modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Contains: "FAIL_PLEASE"}, Reply: modelstub.Reply{Error: &modelstub.ErrorReply{Status: 400, Message: "scripted bad request"}}},
	}, Default: &modelstub.Reply{Text: "fine"}})
	rt := l.Start(l.config(nil, nil))
	res := l.Invoke(t, rt, "FAIL_PLEASE")
	if res.Status != contract.StatusFailed || res.Error == nil || res.Error.Code != "pi_model_error" {
		t.Fatalf("result %s %v %+v", res.Status, res.Output, res.Error)
	}
	if res := l.Invoke(t, rt, "again"); res.Status != contract.StatusSucceeded || res.Output != "fine" {
		t.Fatalf("after the error: %s %v %+v", res.Status, res.Output, res.Error)
	}
}

// TestLiveStopCleansUp: stop leaves no process of pi's group, no detached
// process carrying the runtime's environment, and no private directory.
func TestLiveStopCleansUp(t *testing.T) {
	l := newLive(t, &modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Contains: "SPAWN"}, Reply: modelstub.Reply{ToolCall: &modelstub.ToolCall{Command: "setsid sh -c 'echo $$ > \"$HOME/detached.pid\"; exec sleep 300' >/dev/null 2>&1 </dev/null & until [ -s \"$HOME/detached.pid\" ]; do sleep 0.05; done; sleep 300 >/dev/null 2>&1 & echo started"}}},
		{Match: modelstub.Match{Contains: "SPAWN"}, Reply: modelstub.Reply{Text: "spawned"}},
	}, Default: &modelstub.Reply{Text: "ok"}})
	rt := l.Start(l.config(nil, nil))
	if res := l.Invoke(t, rt, "SPAWN sleepers"); res.Status != contract.StatusSucceeded {
		t.Fatalf("invoke: %s %+v", res.Status, res.Error)
	}
	pid := piPid(t, rt.HostPid())
	members := testproc.Group(pid)
	roots, _ := filepath.Glob(filepath.Join(l.StateDir, "*", "pi"))
	if len(roots) != 1 {
		t.Fatalf("private dirs %v", roots)
	}
	root := roots[0]
	if _, err := os.Stat(filepath.Join(root, "agent", "models.json")); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "agent", "models.json")); strings.Contains(string(data), testKey) {
		t.Fatal("models.json holds the key value")
	}
	harnesstest.StopLeavesNothing(t, rt, pid, members, root, 3)
	l.checkRequests()
}

// TestLiveAnthropicAndResponsesAPIs: provider anthropic speaks the
// Messages API with the key in x-api-key; settings.api openai-responses
// speaks the Responses API.
func TestLiveAnthropicAndResponsesAPIs(t *testing.T) {
	l := newLive(t, &modelstub.Script{Default: &modelstub.Reply{Text: "via another API"}})
	cfg := l.config(nil, nil)
	cfg["models"] = map[string]any{"default": map[string]any{
		"provider": "anthropic", "model": "claude-stub", "api_key_env": keyEnv, "base_url": l.Stub.AnthropicBaseURL(),
	}}
	rt := l.Start(cfg)
	if res := l.Invoke(t, rt, "hello"); res.Status != contract.StatusSucceeded || res.Output != "via another API" {
		t.Fatalf("anthropic: %s %v %+v", res.Status, res.Output, res.Error)
	}
	rt2 := l.Start(l.config(map[string]any{"api": "openai-responses"}, nil))
	if res := l.Invoke(t, rt2, "hello"); res.Status != contract.StatusSucceeded || res.Output != "via another API" {
		t.Fatalf("responses: %s %v %+v", res.Status, res.Output, res.Error)
	}
	reqs := l.Stub.Requests()
	if len(reqs) != 2 || reqs[0].Endpoint != "messages" || reqs[0].AuthHeader != "x-api-key" || !reqs[0].KeyOK ||
		reqs[1].Endpoint != "responses" || reqs[1].AuthHeader != "authorization" || !reqs[1].KeyOK {
		for _, r := range reqs {
			t.Logf("request %d %s %s endpoint %s auth %s key_ok %v", r.Seq, r.Method, r.Path, r.Endpoint, r.AuthHeader, r.KeyOK)
		}
		t.Error("unexpected requests")
	}
	l.CheckOffline()
}
