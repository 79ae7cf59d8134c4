//go:build linux

package codex_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestLiveOneTurn: one turn succeeds; the endpoint saw /v1/responses with
// the key from api_key_env as a Bearer token; nothing else was contacted.
func TestLiveOneTurn(t *testing.T) {
	l := newLive(t, &modelstub.Script{Default: &modelstub.Reply{Text: "4"}})
	rt := l.Start(l.config(nil, nil))
	res := l.Invoke(t, rt, "What is 2+2?")
	if res.Status != contract.StatusSucceeded || res.Output != "4" {
		t.Fatalf("result %s %v (error %+v)", res.Status, res.Output, res.Error)
	}
	if d := harnesstest.Events(res, "output_delta"); len(d) == 0 || d[0].Message != "4" {
		t.Errorf("output_delta events %+v", d)
	}
	if res.Usage == nil || res.Usage.InputTokens == nil || *res.Usage.InputTokens == 0 || res.Usage.TotalTokens == nil {
		t.Errorf("usage %+v", res.Usage)
	}

	// The codex process holds no TCP connection to anything but loopback.
	pid := codexPid(t, rt.HostPid())
	addrs, err := remoteAddrs(pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if a.Addr().IsValid() && !a.Addr().IsUnspecified() && !a.Addr().IsLoopback() {
			t.Errorf("codex holds a connection to %s", a)
		}
	}

	reqs := l.Stub.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model endpoint saw no request")
	}
	for _, r := range reqs {
		if r.Method != "POST" || r.Path != "/v1/responses" || r.AuthHeader != "authorization" || !r.KeyOK || r.Model != testModel {
			t.Errorf("request %d: %s %s auth %q key_ok %v model %q", r.Seq, r.Method, r.Path, r.AuthHeader, r.KeyOK, r.Model)
		}
		if !strings.HasPrefix(r.UserAgent, "fabric/") {
			t.Errorf("request %d: user agent %q", r.Seq, r.UserAgent)
		}
	}
	if _, err := rt.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.CheckOffline()
}

// TestLiveProxySentinel checks the offline check itself: codex sends a
// request for a non-loopback host through the sentinel proxy the tests
// install, so a request to any other host would be counted.
func TestLiveProxySentinel(t *testing.T) {
	l := newLive(t, &modelstub.Script{})
	cfg := l.config(noRetries(), nil)
	cfg["models"].(map[string]any)["default"].(map[string]any)["base_url"] = "http://203.0.113.1:9/v1" // TEST-NET-3
	rt := l.Start(cfg)
	res := l.Invoke(t, rt, "hello")
	if res.Status != contract.StatusFailed || res.Error == nil || res.Error.Code != "model_error" {
		t.Errorf("result %s %+v, want failed model_error", res.Status, res.Error)
	}
	if l.Proxy.Hits() == 0 {
		t.Fatal("codex did not go through the sentinel proxy: the offline checks would see nothing")
	}
}

// TestLiveSecondTurnCarriesHistory: the second invoke on a runtime sends
// the first turn's question and answer to the model.
func TestLiveSecondTurnCarriesHistory(t *testing.T) {
	l := newLive(t, &modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Contains: "FIRST_QUESTION"}, Reply: modelstub.Reply{Text: "FIRST_ANSWER_7731"}},
		{Match: modelstub.Match{Contains: "SECOND_QUESTION"}, Reply: modelstub.Reply{Text: "SECOND_ANSWER"}},
	}})
	rt := l.Start(l.config(nil, nil))
	if res := l.Invoke(t, rt, "FIRST_QUESTION"); res.Output != "FIRST_ANSWER_7731" {
		t.Fatalf("first: %s %v %+v", res.Status, res.Output, res.Error)
	}
	t0 := time.Now()
	res := l.Invoke(t, rt, "SECOND_QUESTION")
	t.Logf("second turn through Fabric: %s", time.Since(t0).Round(time.Millisecond))
	if res.Output != "SECOND_ANSWER" {
		t.Fatalf("second: %s %v %+v", res.Status, res.Output, res.Error)
	}
	reqs := l.Stub.Requests()
	last := reqs[len(reqs)-1]
	body := string(last.Body)
	if last.UserText != "SECOND_QUESTION" || !strings.Contains(body, "FIRST_QUESTION") || !strings.Contains(body, "FIRST_ANSWER_7731") {
		t.Errorf("the second request (user text %q) does not carry the first turn; body has question %v, answer %v",
			last.UserText, strings.Contains(body, "FIRST_QUESTION"), strings.Contains(body, "FIRST_ANSWER_7731"))
	}
	l.CheckOffline()
}

// TestLiveToolCall: a scripted tool call makes codex run a shell command in
// the workspace, reported as tool_call and tool_result events.
func TestLiveToolCall(t *testing.T) {
	l := newLive(t, &modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Contains: "RUN_TOOL"}, Reply: modelstub.Reply{ToolCall: &modelstub.ToolCall{Command: "echo FABRIC_TOOL_OK > tool.txt"}}},
		{Match: modelstub.Match{Contains: "RUN_TOOL"}, Reply: modelstub.Reply{Text: "tool done"}},
	}})
	// Codex's workspace-write sandbox needs bubblewrap; without a system
	// one, run the command unsandboxed.
	sandbox := "workspace-write"
	if _, err := exec.LookPath("bwrap"); err != nil {
		sandbox = "danger-full-access"
	}
	rt := l.Start(l.config(map[string]any{"sandbox": sandbox}, nil))
	res := l.Invoke(t, rt, "RUN_TOOL please")
	if res.Status != contract.StatusSucceeded || res.Output != "tool done" {
		t.Fatalf("result %s %v %+v", res.Status, res.Output, res.Error)
	}
	data, err := os.ReadFile(filepath.Join(l.Workspace, "tool.txt"))
	if err != nil || strings.TrimSpace(string(data)) != "FABRIC_TOOL_OK" {
		t.Fatalf("tool.txt = %q, %v", data, err)
	}
	calls, results := harnesstest.Events(res, "tool_call"), harnesstest.Events(res, "tool_result")
	if len(calls) != 1 || !strings.Contains(calls[0].Message, "echo FABRIC_TOOL_OK") {
		t.Errorf("tool_call events %+v", calls)
	}
	if len(results) != 1 || results[0].Metadata["exit_code"] != float64(0) && results[0].Metadata["exit_code"] != 0 {
		t.Errorf("tool_result events %+v", results)
	}
	l.CheckOffline()
}

// TestLiveCancelSlowStream: a turn streaming slowly is cancelled; the
// result is cancelled within 2 s of the cancel and the runtime takes the
// next turn.
func TestLiveCancelSlowStream(t *testing.T) {
	l := newLive(t, harnesstest.SlowStreamScript())
	rt := l.Start(l.config(nil, nil))
	harnesstest.CancelSlowStream(t, l.Rig, rt)
	l.CheckOffline()
}

// TestLiveRateLimited: a 429 from the endpoint is a failed result with the
// retryable model_rate_limited code; the runtime stays usable.
func TestLiveRateLimited(t *testing.T) {
	l := newLive(t, &modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Contains: "RATE_LIMIT"}, Reply: modelstub.Reply{Error: &modelstub.ErrorReply{Status: 429}}},
	}, Default: &modelstub.Reply{Text: "fine"}})
	rt := l.Start(l.config(noRetries(), nil))
	t0 := time.Now()
	res := l.Invoke(t, rt, "RATE_LIMIT me")
	t.Logf("429 to failed result: %s", time.Since(t0).Round(time.Millisecond))
	if res.Status != contract.StatusFailed || res.Error == nil || res.Error.Code != "model_rate_limited" || !res.Error.Retryable {
		t.Fatalf("result %s, error %+v; want failed model_rate_limited retryable", res.Status, res.Error)
	}
	if res.Error.Metadata["http_status"] != float64(429) && res.Error.Metadata["http_status"] != 429 {
		t.Errorf("error metadata %+v", res.Error.Metadata)
	}
	if res := l.Invoke(t, rt, "again"); res.Status != contract.StatusSucceeded {
		t.Fatalf("turn after 429: %s %+v", res.Status, res.Error)
	}
	l.CheckOffline()
}

// TestLiveStopCleansUp: stop leaves no process of codex's group and removes
// the private HOME, CODEX_HOME and TMPDIR.
func TestLiveStopCleansUp(t *testing.T) {
	l := newLive(t, &modelstub.Script{Rules: []modelstub.Rule{
		// A command that leaves codex's process group and session, and
		// would outlive the runtime if stop only signalled the group. It
		// answers once the sleeper has its own session (its pid file is
		// written after setsid), so that nothing ending the command's group
		// as it returns, and no slow machine, can keep it from being there.
		{Match: modelstub.Match{Contains: "SPAWN"}, Reply: modelstub.Reply{ToolCall: &modelstub.ToolCall{Command: "setsid sh -c 'echo $$ > \"$HOME/detached.pid\"; exec sleep 300' >/dev/null 2>&1 </dev/null & until [ -s \"$HOME/detached.pid\" ]; do sleep 0.05; done; echo started"}}},
		{Match: modelstub.Match{Contains: "SPAWN"}, Reply: modelstub.Reply{Text: "spawned"}},
	}, Default: &modelstub.Reply{Text: "ok"}})
	rt := l.Start(l.config(map[string]any{"sandbox": "danger-full-access"}, nil))
	if res := l.Invoke(t, rt, "SPAWN a sleeper"); res.Status != contract.StatusSucceeded {
		t.Fatalf("invoke: %s %+v", res.Status, res.Error)
	}
	pid := codexPid(t, rt.HostPid())
	members := testproc.Group(pid)
	homes, _ := filepath.Glob(filepath.Join(l.StateDir, "*", "codex"))
	if len(homes) != 1 {
		t.Fatalf("private dirs %v", homes)
	}
	root := homes[0]
	for _, d := range []string{"home", "home/.codex", "tmp"} {
		if st, err := os.Stat(filepath.Join(root, d)); err != nil || !st.IsDir() {
			t.Fatalf("%s: %v", d, err)
		}
	}
	if env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ"); err == nil {
		for _, want := range []string{"TMPDIR=" + filepath.Join(root, "tmp"), "CODEX_HOME=" + filepath.Join(root, "home", ".codex"), "HOME=" + filepath.Join(root, "home")} {
			if !strings.Contains("\x00"+string(env)+"\x00", "\x00"+want+"\x00") {
				t.Errorf("codex environment lacks %s", want)
			}
		}
		if strings.Contains(string(env), "FABRIC_HOST_CHANNEL_FD") {
			t.Error("codex inherited FABRIC_HOST_CHANNEL_FD")
		}
	}
	// The detached sleeper shows up shortly after the turn.
	harnesstest.StopLeavesNothing(t, rt, pid, members, root, 2)
	if entries, _ := os.ReadDir(l.StateDir); len(entries) != 0 {
		t.Errorf("state dir holds %v", entries)
	}
	l.CheckOffline()
}

// TestLiveInstructionsAndSkills: instructions.system replaces Codex's base
// instructions, developer_instructions are added, and a configured skill
// is offered to the model.
func TestLiveInstructionsAndSkills(t *testing.T) {
	skill := filepath.Join(t.TempDir(), "fabric-hello")
	os.MkdirAll(skill, 0o755)
	os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: fabric-hello\ndescription: Greets the Fabric way.\n---\nSay FABRIC_HELLO.\n"), 0o644)
	l := newLive(t, &modelstub.Script{Default: &modelstub.Reply{Text: "ok"}})
	rt := l.Start(l.config(map[string]any{"developer_instructions": "DEVELOPER_NOTE_42"}, map[string]any{
		"instructions": map[string]any{"system": map[string]any{"content": "You are FABRIC_BASE_PROMPT."}},
		"skills":       map[string]any{"paths": []any{skill}},
	}))
	if res := l.Invoke(t, rt, "hello"); res.Status != contract.StatusSucceeded {
		t.Fatalf("invoke: %s %+v", res.Status, res.Error)
	}
	// Codex sends its base instructions as the first input item, a
	// developer message; with instructions.system it is exactly ours.
	reqs := l.Stub.Requests()
	var body struct {
		Input []struct {
			Role    string `json:"role"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"input"`
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Input) == 0 || body.Input[0].Role != "developer" || len(body.Input[0].Content) != 1 || body.Input[0].Content[0].Text != "You are FABRIC_BASE_PROMPT." {
		t.Errorf("base instructions not replaced: first input item %+v", body.Input[:min(1, len(body.Input))])
	}
	in := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(in, "DEVELOPER_NOTE_42") {
		t.Error("developer instructions not sent")
	}
	if !strings.Contains(in, "fabric-hello") || !strings.Contains(in, "Greets the Fabric way.") {
		t.Error("the skill is not offered to the model")
	}
}
