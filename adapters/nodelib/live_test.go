//go:build linux

package nodelib_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

// liveScript answers the live test's turns: two with history, a shell call
// that writes into the workspace (the generic rule: the stub picks the
// harness's shell tool), a slow stream for cancel, and sleepers for stop.
func liveScript() *modelstub.Script {
	return &modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Contains: "FIRST_QUESTION"}, Reply: modelstub.Reply{Text: "FIRST_ANSWER_5521", Chunks: 3}},
		{Match: modelstub.Match{Contains: "SECOND_QUESTION"}, Reply: modelstub.Reply{Text: "SECOND_ANSWER"}},
		{Match: modelstub.Match{Contains: "RUN_TOOL"}, Reply: modelstub.Reply{ToolCall: &modelstub.ToolCall{Command: "echo FABRIC_TOOL_OK > tool.txt && echo done"}}},
		{Match: modelstub.Match{Contains: "RUN_TOOL"}, Reply: modelstub.Reply{Text: "tool done"}},
		{Match: modelstub.Match{Contains: "SLOW_STREAM"}, Reply: modelstub.Reply{Text: strings.Repeat("slow ", 40), Chunks: 40, IntervalMS: 500}},
		{Match: modelstub.Match{Contains: "SLOW_TOOL"}, Reply: modelstub.Reply{ToolCall: &modelstub.ToolCall{Command: "echo started > slow.txt; sleep 300; echo finished >> slow.txt"}}},
		{Match: modelstub.Match{Contains: "SLOW_TOOL"}, Reply: modelstub.Reply{Text: "slow tool done"}},
		{Match: modelstub.Match{Contains: "SPAWN"}, Reply: modelstub.Reply{ToolCall: &modelstub.ToolCall{Command: "setsid sh -c 'echo $$ > \"$HOME/detached.pid\"; exec sleep 300' >/dev/null 2>&1 </dev/null & until [ -s \"$HOME/detached.pid\" ]; do sleep 0.05; done; sleep 300 >/dev/null 2>&1 & echo started"}}},
		{Match: modelstub.Match{Contains: "SPAWN"}, Reply: modelstub.Reply{Text: "spawned"}},
	}, Default: &modelstub.Reply{Text: "quick"}}
}

// TestLive drives each library harness through Fabric against the stub:
// two turns with history, a shell call writing a file in the workspace,
// cancel of a streaming turn and of a running shell command within 2 s
// with the next turn working, and a stop that leaves nothing behind; every
// model request goes to the configured endpoint with the configured key.
func TestLive(t *testing.T) {
	livetest.Short(t, "the Deep Agents and Strands hosts from harnesses/")
	for _, h := range harnesses {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			l := newLive(t, h, liveScript())
			rt := l.Start(l.config(nil, map[string]any{"instructions": map[string]any{"system": map[string]any{
				"content": "FABRIC_SYSTEM_MARKER", "mode": map[bool]string{true: "append", false: "replace"}[h.name == "deepagents"]}}}))

			// Two turns: the second request carries the first turn.
			res := l.Invoke(t, rt, "FIRST_QUESTION")
			if res.Status != contract.StatusSucceeded || res.Output != "FIRST_ANSWER_5521" {
				t.Fatalf("first: %s %v %+v", res.Status, res.Output, res.Error)
			}
			if s := harnesstest.Streamed(res, "output_delta"); s != "FIRST_ANSWER_5521" {
				t.Errorf("output deltas %q", s)
			}
			if res.Usage == nil || res.Usage.InputTokens == nil || *res.Usage.InputTokens == 0 {
				t.Errorf("usage %+v", res.Usage)
			}
			if res := l.Invoke(t, rt, "SECOND_QUESTION"); res.Output != "SECOND_ANSWER" {
				t.Fatalf("second: %s %v %+v", res.Status, res.Output, res.Error)
			}
			reqs := l.Stub.Requests()
			last := reqs[len(reqs)-1]
			if body := string(last.Body); last.UserText != "SECOND_QUESTION" || !strings.Contains(body, "FIRST_QUESTION") ||
				!strings.Contains(body, "FIRST_ANSWER_5521") || !strings.Contains(body, "FABRIC_SYSTEM_MARKER") {
				t.Errorf("the second request (user text %q) does not carry the first turn and the system instruction", last.UserText)
			}

			// A scripted shell call through the harness's own shell tool.
			res = l.Invoke(t, rt, "RUN_TOOL please")
			if res.Status != contract.StatusSucceeded || res.Output != "tool done" {
				t.Fatalf("tool turn: %s %v %+v", res.Status, res.Output, res.Error)
			}
			if data, err := os.ReadFile(filepath.Join(l.Workspace, "tool.txt")); err != nil || strings.TrimSpace(string(data)) != "FABRIC_TOOL_OK" {
				t.Fatalf("tool.txt = %q, %v", data, err)
			}
			calls, results := harnesstest.Events(res, "tool_call"), harnesstest.Events(res, "tool_result")
			if len(calls) != 1 || calls[0].Metadata["tool_name"] != h.shellTool || !strings.Contains(calls[0].Metadata["arguments"].(string), "FABRIC_TOOL_OK") {
				t.Errorf("tool_call events %+v", calls)
			}
			if len(results) != 1 || results[0].Metadata["is_error"] != false || !strings.Contains(results[0].Metadata["output"].(string), "done") {
				t.Errorf("tool_result events %+v", results)
			}

			// Cancel a streaming model request, then a running shell command.
			cancelTurn(t, rt, "SLOW_STREAM please", "output_delta")
			cancelTurn(t, rt, "SLOW_TOOL please", "tool_call")
			if data, _ := os.ReadFile(filepath.Join(l.Workspace, "slow.txt")); strings.Contains(string(data), "finished") {
				t.Error("the cancelled shell command ran to its end")
			}
			for _, r := range l.Stub.Requests() {
				if strings.Contains(r.UserText, "SLOW_STREAM") && r.Outcome != "client_gone" {
					t.Errorf("the cancelled model request ended %q, want client_gone", r.Outcome)
				}
			}
			if res := l.Invoke(t, rt, "and now quickly"); res.Status != contract.StatusSucceeded || res.Output != "quick" {
				t.Fatalf("turn after cancel: %s %v %+v", res.Status, res.Output, res.Error)
			}

			// Stop: nothing of the runtime is left, even processes that
			// left the host's group.
			if res := l.Invoke(t, rt, "SPAWN sleepers"); res.Status != contract.StatusSucceeded {
				t.Fatalf("spawn: %s %+v", res.Status, res.Error)
			}
			host := rt.HostPid()
			members := testproc.Group(host)
			homes, _ := filepath.Glob(filepath.Join(l.StateDir, "*", "nodehost"))
			if len(homes) != 1 {
				t.Fatalf("private dirs %v", homes)
			}
			mentioning := testproc.Mentioning(homes[0])
			if len(mentioning) < 2 {
				t.Errorf("before stop, processes with the runtime's private directory: %v; want two sleepers", mentioning)
			}
			if _, err := rt.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if left := testproc.Group(host); len(left) > 0 {
				t.Errorf("processes %v of the host's group %d survived stop", left, host)
			}
			for _, p := range append(append(members, mentioning...), host) {
				if _, _, comm, ok := testproc.Stat(p); ok {
					t.Errorf("process %d (%s) survived stop", p, comm)
				}
			}
			if _, err := os.Stat(homes[0]); !os.IsNotExist(err) {
				t.Errorf("private directory %s remains: %v", homes[0], err)
			}
			l.checkRequests()
		})
	}
}

// cancelTurn cancels a turn once its first event of kind shows that it is
// under way and checks that it ends cancelled within 2 s.
func cancelTurn(t *testing.T, rt *fabric.Runtime, input, kind string) {
	t.Helper()
	res, took := harnesstest.CancelOnEvent(t, rt, input, kind)
	t.Logf("%s: cancel to result %s", input, took.Round(time.Millisecond))
	if res.Status != contract.StatusCancelled || took > 2*time.Second {
		t.Fatalf("%s: status %s after %s (error %+v), want cancelled within 2 s", input, res.Status, took, res.Error)
	}
}
