package claude_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/claude"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/modelstub"
)

func kinds(evs []contract.FabricEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

func find(evs []contract.FabricEvent, kind string) []contract.FabricEvent {
	var out []contract.FabricEvent
	for _, e := range evs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// (a) and (b): one turn succeeds through the real core, the endpoint saw
// the key in x-api-key on /v1/messages and nothing left loopback; a second
// invoke carries the first turn in its history.
func TestLiveTurnsAndHistory(t *testing.T) {
	l := newLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	t0 := time.Now()
	rt := l.Start(l.config(nil, nil))
	started := time.Since(t0)
	pid, pgid, _ := claudeProcess(t, l.StateDir)
	rss := sampleRSS(rt.HostPid(), pgid)

	res, err := rt.Invoke(ctx, "FIRSTTURN: what is the code word?")
	if err != nil {
		t.Fatal(err)
	}
	first := time.Since(t0)
	if res.Status != contract.StatusSucceeded {
		t.Fatalf("status %s, error %+v", res.Status, res.Error)
	}
	if out, _ := res.Output.(string); !strings.Contains(out, "ALPHA-4711") {
		t.Errorf("output %q, want the scripted answer", res.Output)
	}
	deltas := find(res.Events, claude.EventOutputDelta)
	if len(deltas) == 0 {
		t.Errorf("no %s events: %v", claude.EventOutputDelta, kinds(res.Events))
	}
	if len(find(res.Events, claude.EventStatus)) == 0 {
		t.Errorf("no %s events: %v", claude.EventStatus, kinds(res.Events))
	}
	if u := res.Usage; u == nil || u.InputTokens == nil || *u.InputTokens == 0 || u.OutputTokens == nil || u.TotalTokens == nil || u.CostUSD == nil {
		t.Errorf("usage %+v, want tokens and cost", res.Usage)
	}

	reqs := l.Stub.Requests()
	var messages int
	for _, r := range reqs {
		if r.Method == "HEAD" {
			continue
		}
		if r.Path != "/v1/messages" && r.Path != "/v1/messages/count_tokens" {
			t.Errorf("request to %s %s, want /v1/messages", r.Method, r.Path)
		}
		if r.AuthHeader != "x-api-key" || !r.KeyChecked || !r.KeyOK {
			t.Errorf("request %d: auth header %q, key checked %v, key ok %v; want the key in x-api-key", r.Seq, r.AuthHeader, r.KeyChecked, r.KeyOK)
		}
		if r.Path == "/v1/messages" {
			messages++
		}
	}
	if messages == 0 {
		t.Fatalf("the model endpoint saw no /v1/messages request: %+v", reqs)
	}
	l.CheckOffline()

	// (b) The second turn's request holds the first answer.
	l.Stub.ClearRequests()
	t1 := time.Now()
	res2, err := rt.Invoke(ctx, "And what did you just say?")
	if err != nil {
		t.Fatal(err)
	}
	second := time.Since(t1)
	if res2.Status != contract.StatusSucceeded {
		t.Fatalf("second status %s, error %+v", res2.Status, res2.Error)
	}
	found := false
	for _, r := range l.Stub.Requests() {
		if r.Path == "/v1/messages" && strings.Contains(string(r.Body), "ALPHA-4711") && strings.Contains(string(r.Body), "And what did you just say?") {
			found = true
		}
	}
	if !found {
		t.Error("the second turn's request does not carry the first answer in its history")
	}
	if p2, _, _ := claudeProcess(t, l.StateDir); p2 != pid {
		t.Errorf("the second turn ran in claude pid %d, the first in %d: want one long-lived process", p2, pid)
	}
	peak := rss.Peak()
	t.Logf("timings: start %s, cold start to first answer %s, second turn %s; peak RSS host+claude group %.0f MiB",
		started.Round(time.Millisecond), first.Round(time.Millisecond), second.Round(time.Millisecond), peak)
	l.CheckOffline()
}

// (c) A scripted Bash call really runs in the workspace.
func TestLiveToolCallRunsInWorkspace(t *testing.T) {
	l := newLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	rt := l.Start(l.config(map[string]any{"permission_mode": "bypassPermissions"}, nil))
	res, err := rt.Invoke(ctx, "STUBTOOL: please write the file")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != contract.StatusSucceeded {
		t.Fatalf("status %s, error %+v; events %v", res.Status, res.Error, kinds(res.Events))
	}
	data, err := os.ReadFile(filepath.Join(l.Workspace, "made-by-claude.txt"))
	if err != nil || strings.TrimSpace(string(data)) != "fabric-was-here" {
		t.Errorf("workspace file: %q, %v", data, err)
	}
	calls := find(res.Events, claude.EventToolCall)
	if len(calls) == 0 || calls[0].Metadata["name"] != "Bash" {
		t.Fatalf("tool_call events %+v (kinds %v), want a Bash call", calls, kinds(res.Events))
	}
	if in, _ := calls[0].Metadata["input"].(map[string]any); !strings.Contains(inputCommand(in), "made-by-claude.txt") {
		t.Errorf("tool_call input %v", calls[0].Metadata["input"])
	}
	results := find(res.Events, claude.EventToolResult)
	if len(results) == 0 || !strings.Contains(results[0].Message, "STUB_TOOL_OK") || results[0].Metadata["is_error"] != false {
		t.Errorf("tool_result events %+v", results)
	}
	if out, _ := res.Output.(string); out != "The file is written." {
		t.Errorf("output %q", res.Output)
	}
	l.CheckOffline()
}

func inputCommand(in map[string]any) string {
	s, _ := in["command"].(string)
	return s
}

// (d) A slow stream is cancelled: the result is cancelled within 2 s of
// the cancellation, and the runtime takes the next turn.
func TestLiveCancelSlowStream(t *testing.T) {
	l := newLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	rt := l.Start(l.config(nil, nil))

	res, took := harnesstest.CancelOnEvent(t, rt, "STUBSLOW: take your time", claude.EventOutputDelta)
	if res.Status != contract.StatusCancelled {
		t.Fatalf("status %s, error %+v, want cancelled", res.Status, res.Error)
	}
	if took > 2*time.Second {
		t.Errorf("cancelled after %s, want within 2s", took)
	}
	t.Logf("cancel to result: %s", took.Round(time.Millisecond))
	if st := rt.State(); st != "active" {
		t.Fatalf("state after cancel %s, want active", st)
	}
	next, err := rt.Invoke(ctx, "FIRSTTURN again")
	if err != nil || next.Status != contract.StatusSucceeded || !strings.Contains(next.Output.(string), "ALPHA-4711") {
		t.Errorf("the turn after a cancel: %+v, %v", next, err)
	}
}

// (e) A 429 from the endpoint fails the turn with a retryable error, fast
// (max_retries 0).
func TestLiveRateLimitIsRetryable(t *testing.T) {
	l := newLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	rt := l.Start(l.config(map[string]any{"max_retries": 0}, nil))
	// A non-retryable model error first. Claude Code keeps a failed turn's
	// prompt and merges it with the next one into a single user message,
	// so the next turn's request holds both markers; the stub's rules put
	// the 429 first.
	res, err := rt.Invoke(ctx, "STUBFAIL please")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != contract.StatusFailed || res.Error == nil || res.Error.Code != claude.CodeModelError || res.Error.Retryable {
		t.Errorf("400: status %s, error %+v; want failed %s, not retryable", res.Status, res.Error, claude.CodeModelError)
	}
	t0 := time.Now()
	res, err = rt.Invoke(ctx, "STUB429 please")
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != contract.StatusFailed || res.Error == nil {
		t.Fatalf("status %s, error %+v, want failed", res.Status, res.Error)
	}
	if res.Error.Code != claude.CodeModelRateLimited || !res.Error.Retryable {
		t.Errorf("error %+v, want %s and retryable", res.Error, claude.CodeModelRateLimited)
	}
	if took > 10*time.Second {
		t.Errorf("the 429 took %s to surface", took)
	}
	t.Logf("429 surfaced as %s after %s", res.Error.Code, took.Round(time.Millisecond))
	if st := rt.State(); st != "active" {
		t.Errorf("state after a failed turn %s, want active", st)
	}
}

// (f) Stop leaves no process of the harness's group and removes the
// private directories.
func TestLiveStopCleansUp(t *testing.T) {
	l := newLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	rt := l.Start(l.config(map[string]any{"permission_mode": "bypassPermissions"}, nil))
	if res, err := rt.Invoke(ctx, "What is 2+2?"); err != nil || res.Status != contract.StatusSucceeded {
		t.Fatalf("invoke: %+v, %v", res, err)
	}
	pid, pgid, tmpdir := claudeProcess(t, l.StateDir)
	if tmpdir == "" || !strings.HasPrefix(tmpdir, l.StateDir) {
		t.Fatalf("claude's TMPDIR %q is not private", tmpdir)
	}
	if _, err := os.Stat(tmpdir); err != nil {
		t.Fatalf("TMPDIR: %v", err)
	}
	hostPid := rt.HostPid()
	t0 := time.Now()
	stop, err := rt.Stop(ctx)
	if err != nil || stop.HostCrashed {
		t.Fatalf("stop: %+v, %v", stop, err)
	}
	t.Logf("stop took %s", time.Since(t0).Round(time.Millisecond))
	if left := groupMembers(pgid); len(left) > 0 {
		t.Errorf("processes %v of claude's group %d (leader %d) outlived stop", left, pgid, pid)
	}
	if left := groupMembers(hostPid); len(left) > 0 {
		t.Errorf("processes %v of the host's group outlived stop", left)
	}
	if _, err := os.Stat(tmpdir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("TMPDIR %s remains after stop (%v)", tmpdir, err)
	}
	entries, _ := os.ReadDir(l.StateDir)
	if len(entries) > 0 {
		t.Errorf("the state dir still holds %v", entries)
	}
}

// Start fails cleanly when the key variable is missing, naming the
// variable but never a value.
func TestLiveMissingKeyFailsStart(t *testing.T) {
	l := newLive(t)
	cfg := l.config(nil, nil)
	cfg["models"].(map[string]any)["default"].(map[string]any)["api_key_env"] = "FABRIC_CLAUDE_NO_SUCH_KEY"
	_, err := l.TryStart(cfg)
	var re *fabric.RuntimeError
	if !errors.As(err, &re) || !strings.Contains(re.Error(), claude.CodeAPIKeyMissing) {
		t.Fatalf("start error %v, want %s", err, claude.CodeAPIKeyMissing)
	}
	if entries, _ := os.ReadDir(l.StateDir); len(entries) > 0 {
		t.Errorf("a failed start left %v", entries)
	}
}

// The config's instructions, tool policy, skills and MCP servers reach
// claude: the endpoint sees the system prompt and only the enabled tools,
// the skill is offered, and claude reports the configured MCP server.
func TestLiveConfigTranslation(t *testing.T) {
	for _, bare := range []bool{false, true} {
		t.Run(fmt.Sprintf("bare=%v", bare), func(t *testing.T) { testConfigTranslation(t, bare) })
	}
}

func testConfigTranslation(t *testing.T, bare bool) {
	l := newLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	skills := t.TempDir()
	os.MkdirAll(filepath.Join(skills, "fabric-hello"), 0o755)
	os.WriteFile(filepath.Join(skills, "fabric-hello", "SKILL.md"),
		[]byte("---\nname: fabric-hello\ndescription: Greets in the Fabric way (FABRIC-SKILL-MARKER).\n---\nSay hello.\n"), 0o644)
	rt := l.Start(l.config(map[string]any{"bare": bare}, map[string]any{
		"instructions": map[string]any{"system": map[string]any{"content": "You are the FABRIC-PROMPT-MARKER agent.", "mode": "replace"}},
		"tools":        map[string]any{"enabled": []any{"Bash", "Read", "Skill"}, "blocked": []any{"Write"}},
		"skills":       map[string]any{"paths": []any{skills}},
		"mcp": map[string]any{"servers": map[string]any{"probe": map[string]any{
			"transport": "stdio", "url": "/nonexistent/fabric-mcp-probe", "exposure": "harness_native",
		}}},
	}))
	res, err := rt.Invoke(ctx, "What is 2+2?")
	if err != nil || res.Status != contract.StatusSucceeded {
		t.Fatalf("invoke: %+v, %v", res, err)
	}
	var init *contract.FabricEvent
	for i, e := range res.Events {
		if e.Kind == claude.EventStatus && e.Metadata["subtype"] == "init" {
			init = &res.Events[i]
		}
	}
	if init == nil {
		t.Fatalf("no init status event: %v", kinds(res.Events))
	}
	if servers, _ := init.Metadata["mcp_servers"].(map[string]any); servers["probe"] == nil {
		t.Errorf("claude does not report the configured MCP server: %v", init.Metadata)
	}
	var req *modelstub.Request
	for _, r := range l.Stub.Requests() {
		if r.Path == "/v1/messages" && !r.Side {
			req = &r
		}
	}
	if req == nil {
		t.Fatal("no main request")
	}
	body := string(req.Body)
	if !strings.Contains(body, "FABRIC-PROMPT-MARKER") {
		t.Error("the system prompt did not reach the endpoint")
	}
	skillName, wantTools := "fabric-hello", []string{"Bash", "Read", "Skill"}
	if bare {
		// --bare offers only Bash, Edit and Read whatever --tools says; the
		// skill comes as a session plugin, usable as a slash command.
		skillName, wantTools = "fabric:fabric-hello", []string{"Bash", "Read"}
	} else if !strings.Contains(body, "fabric-hello") {
		t.Error("the skill is not offered to the model")
	}
	if names, _ := init.Metadata["skills"].([]any); !slices.Contains(names, any(skillName)) {
		t.Errorf("claude did not load skill %s: %v", skillName, init.Metadata["skills"])
	}
	// Claude Code adds an internal placeholder tool when MCP tools are
	// deferred; every other tool offered must be an enabled one.
	var offered []string
	for _, name := range req.Tools {
		if !strings.HasPrefix(name, "Deferred") {
			offered = append(offered, name)
		}
	}
	slices.Sort(offered)
	if !slices.Equal(offered, wantTools) {
		t.Errorf("tools offered %v, want %v", req.Tools, wantTools)
	}
	l.CheckOffline()
}

// A key the endpoint refuses fails the turn with model_auth_failed, and
// the key's value shows nowhere in the result.
func TestLiveWrongKeyIsAuthFailure(t *testing.T) {
	wrong := "sk-fabric-wrong-key-0123456789"
	l := newLive(t, liveKeyEnv+"="+wrong)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	rt := l.Start(l.config(map[string]any{"max_retries": 0}, nil))
	res, err := rt.Invoke(ctx, "What is 2+2?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != contract.StatusFailed || res.Error == nil || res.Error.Code != claude.CodeModelAuth || res.Error.Retryable {
		t.Fatalf("status %s, error %+v; want failed %s", res.Status, res.Error, claude.CodeModelAuth)
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), wrong) {
		t.Error("the result shows the key")
	}
}
