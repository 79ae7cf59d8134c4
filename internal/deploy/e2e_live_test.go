//go:build linux

package deploy_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/internal/modelproxy"
	"github.com/fabric-runtime/fabric/internal/procfs"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// upstreamKeyEnv carries the real provider key in apply's environment.
const upstreamKeyEnv = "FABRIC_E2E_PROVIDER_KEY"

// freePort returns a loopback port nobody listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// needHarness skips (or, where harnesses are required, fails) a live test
// when a pinned binary is missing from PATH and FABRIC_HARNESS_PATH.
func needHarness(t testing.TB, w *world, names ...string) {
	t.Helper()
	livetest.Short(t, "the pinned harnesses (codex, mcp-server-everything)")
	var path string
	for _, kv := range w.env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = p
		}
	}
	for _, n := range names {
		found := false
		for _, d := range filepath.SplitList(path) {
			if st, err := os.Stat(filepath.Join(d, n)); err == nil && st.Mode()&0o111 != 0 {
				found = true
				break
			}
		}
		if !found {
			livetest.Missing(t, n, "run harnesses/install.sh and put its --print-path on FABRIC_HARNESS_PATH", nil)
		}
	}
}

// TestDeployLive is acceptance 1, 2, 5 and 6 with real parts: a deployment
// of a real Codex agent and a scripted agent, a shared HTTP MCP server
// (the reference server from npm) attached to Codex only, and a brokered
// model route (the scripted endpoint as the provider) attached to both.
func TestDeployLive(t *testing.T) {
	key := "sk-e2e-provider-" + fmt.Sprint(time.Now().UnixNano())
	modelproxy.RecordForAudit(key)
	w := newWorld(t, upstreamKeyEnv+"="+key)
	needHarness(t, w, "codex", "mcp-server-everything")
	proxy := adaptertest.NewProxy(t)
	w.env = append(w.env, proxy.Env()...)

	script, err := modelstub.ParseScript([]byte(`
rules:
  - match: {contains: MCPECHO}
    reply: {tool_call: {tool: mcp__tools__echo, args: {message: ECHO-FROM-MCP-SERVER}}}
default: {text: "4"}
`))
	if err != nil {
		t.Fatal(err)
	}
	stub := modelstub.New(script, modelstub.WithExpectKey(key))
	t.Cleanup(stub.Close)
	port := freePort(t)

	w.write("codex.yaml", codexConfig)
	doc := fmt.Sprintf(`schema_version: fabric.deployment/v1alpha1
metadata: {name: live, uid: 0b6e8a52-3c1d-4e7f-9a2b-5c6d7e8f9a01}
spec:
  supervisor: {kind: process}
  integrations:
%s  sandboxes:
    - name: main
      workspace: ./work
      agents:
        - name: researcher
          config: ./codex.yaml
          integrationRefs: [tools, model]
        - name: critic
          config: ./codex.yaml
          integrationRefs: [model]
%s`, liveIntegrations(port, stub.OpenAIBaseURL()), scriptedWriter("model"))
	file := w.write("deploy.yaml", doc)

	// Plan observes only.
	var plan struct {
		Complete bool
		Changes  []struct{ Resource, Action string }
	}
	w.deploy(0, &plan, "plan", file)
	if !plan.Complete || len(plan.Changes) != 5 {
		t.Fatalf("plan = %+v, want complete with 5 creates", plan)
	}
	if _, err := os.Stat(filepath.Join(w.dir, ".fabric", "live", "supervisor.sock")); err == nil {
		t.Fatal("plan started a supervisor")
	}

	// 1. apply exits 0 within its deadline; nothing it started is its child.
	began := time.Now()
	var ar applyResult
	w.deploy(0, &ar, "apply", file, "--timeout", "3m")
	t.Logf("apply from empty took %v", time.Since(began))
	if ar.Outcome != "succeeded" || ar.Supervisor.Pid == 0 || ar.Supervisor.RestartedOnReboot {
		t.Fatalf("apply = %+v", ar)
	}
	supPid := ar.Supervisor.Pid
	ppid, _, _, ok := testproc.Stat(supPid)
	if !ok || ppid == os.Getpid() {
		t.Fatalf("supervisor pid %d: parent %d (this test is %d): want it detached", supPid, ppid, os.Getpid())
	}
	socket := ar.Connection.Socket
	var st status
	w.deploy(0, &st, "status", file)
	var mcpPid int
	for _, s := range st.Status.Services {
		if s.ID == "integration/tools" {
			mcpPid = s.Pid
		}
	}
	if mcpPid == 0 {
		t.Fatalf("no MCP server pid in status: %+v", st.Status.Services)
	}
	_, rid1, _, _ := st.agent("researcher")
	_, wid1, _, _ := st.agent("writer")

	// 2. A separate client runs two turns on each agent by name alone.
	var res struct {
		Status string `json:"status"`
		Output any    `json:"output"`
	}
	stub.ClearRequests()
	if code := w.ctl(socket, &res, "invoke", "--agent", "researcher", "--input", "What is 2+2? MCPECHO"); code != 0 || res.Status != "succeeded" {
		t.Fatalf("researcher turn 1: exit %d, %+v", code, res)
	}
	if code := w.ctl(socket, &res, "invoke", "--agent", "researcher", "--input", "and the second turn"); code != 0 || res.Status != "succeeded" {
		t.Fatalf("researcher turn 2: exit %d, %+v", code, res)
	}
	reqs := stub.Requests()
	var main []modelstub.Request
	for _, r := range reqs {
		if r.Endpoint == "responses" && !r.Side {
			main = append(main, r)
		}
	}
	if len(main) < 3 {
		t.Fatalf("the endpoint saw %d main requests, want the tool call round trip and a second turn: %+v", len(main), reqs)
	}
	for _, r := range main {
		if !r.KeyOK {
			t.Fatalf("request %d reached the provider without the real key", r.Seq)
		}
	}
	if !slices.ContainsFunc(main[0].Tools, func(n string) bool { return strings.Contains(n, "echo") }) {
		t.Fatalf("the MCP server's tools were not offered to the attached agent; tools: %v", main[0].Tools)
	}
	// The tool's answer came back into the turn, and the second turn
	// carries the first.
	if !strings.Contains(string(main[1].Body), "ECHO-FROM-MCP-SERVER") || !main[1].ToolResult {
		t.Fatalf("the MCP server's answer is not in the turn: %s", main[1].Body)
	}
	last := main[len(main)-1]
	if !strings.Contains(string(last.Body), "What is 2+2?") || !strings.Contains(last.UserText, "second turn") {
		t.Fatalf("the second turn does not carry the first: %s", last.Body)
	}
	if code := w.ctl(socket, &res, "invoke", "--agent", "writer", "--input", "hello"); code != 0 || res.Output != "turn 1: hello" {
		t.Fatalf("writer turn 1: %+v", res)
	}
	if code := w.ctl(socket, &res, "invoke", "--agent", "writer", "--input", "again"); code != 0 || res.Output != "turn 2: again" {
		t.Fatalf("writer turn 2 does not carry the first: %+v", res)
	}
	// The brokered route counted the researcher's requests.
	w.deploy(0, &st, "status", file)
	for _, a := range st.Status.Agents {
		if a.Name == "researcher" {
			u := a.Usage["integration.model"]
			if u.Requests < int64(len(main)) || u.OutputTokens == 0 {
				t.Fatalf("researcher usage = %+v, want >= %d requests with tokens", u, len(main))
			}
		}
	}

	// An agent without the MCP reference is never offered its tools.
	stub.ClearRequests()
	if code := w.ctl(socket, &res, "invoke", "--agent", "critic", "--input", "What is 2+2?"); code != 0 || res.Status != "succeeded" {
		t.Fatalf("critic turn: exit %d, %+v", code, res)
	}
	seen := 0
	for _, r := range stub.Requests() {
		if r.Endpoint != "responses" {
			continue
		}
		seen++
		if slices.ContainsFunc(r.Tools, func(n string) bool { return strings.HasPrefix(n, "mcp__tools") }) {
			t.Fatalf("an agent without the reference was offered the MCP server's tools: %v", r.Tools)
		}
	}
	if seen == 0 {
		t.Fatal("the critic's turn made no model request")
	}
	assertNoSecrets(t, w, key, supPid)

	// 5. Unchanged apply: a no-op that keeps runtime ids and the MCP pid.
	began = time.Now()
	w.deploy(0, &ar, "apply", file)
	t.Logf("unchanged apply took %v", time.Since(began))
	for _, c := range ar.Changes {
		if c.Action != "noop" {
			t.Fatalf("unchanged apply changed %s: %s (%s)", c.Resource, c.Action, c.Reason)
		}
	}
	w.deploy(0, &st, "status", file)
	if _, rid, _, _ := st.agent("researcher"); rid != rid1 {
		t.Fatalf("researcher runtime id changed on an unchanged apply: %s -> %s", rid1, rid)
	}
	if _, wid, _, _ := st.agent("writer"); wid != wid1 {
		t.Fatalf("writer runtime id changed on an unchanged apply")
	}
	for _, s := range st.Status.Services {
		if s.ID == "integration/tools" && s.Pid != mcpPid {
			t.Fatalf("MCP server pid changed: %d -> %d", mcpPid, s.Pid)
		}
	}
	// Change the Codex agents' model: only they restart, and the replaced
	// runtime's placeholder stops working at once.
	_, _, oldHost, _ := st.agent("researcher")
	oldPlaceholder := envOf(t, oldHost, "FABRIC_BROKERED_MODEL_KEY")
	proxyURL := st.Status.Supervisor.ModelProxy
	w.write("codex.yaml", strings.Replace(mustRead(t, filepath.Join(w.dir, "codex.yaml")), "gpt-5.1-codex", "gpt-5.2-codex", 1))
	w.deploy(0, &ar, "apply", file)
	if ar.action("agent/researcher") != "replace" || ar.action("agent/critic") != "replace" || ar.action("agent/writer") != "noop" || ar.action("integration/tools") != "noop" {
		t.Fatalf("changing researcher's model: %+v", ar.Changes)
	}

	req, _ := http.NewRequest("POST", proxyURL+"/r/integration.model/v1/responses", strings.NewReader(`{"model":"m","input":"hi"}`))
	req.Header.Set("Authorization", "Bearer "+oldPlaceholder)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the replaced runtime's placeholder got %d, want 401", resp.StatusCode)
	}

	// 6. Export, then apply the export: a no-op.
	exp := w.deploy(0, nil, "export", file)
	if strings.Contains(string(exp), key) {
		t.Fatal("export holds the credential")
	}
	expFile := w.write("export.yaml", string(exp))
	w.deploy(0, &ar, "apply", expFile, "--state-dir", filepath.Join(w.dir, ".fabric", "live"))
	for _, c := range ar.Changes {
		if c.Action != "noop" {
			t.Fatalf("applying the export changed %s: %s", c.Resource, c.Action)
		}
	}

	// Destroy: no process, socket or placeholder of the deployment left.
	var dr struct {
		Outcome  string
		Removed  []string
		Retained []string
	}
	w.deploy(0, &dr, "destroy", file)
	if dr.Outcome != "destroyed" || !slices.ContainsFunc(dr.Retained, func(s string) bool { return strings.Contains(s, "work") }) {
		t.Fatalf("destroy = %+v", dr)
	}
	waitGone(t, supPid)
	waitGone(t, mcpPid)
	stateDir := filepath.Join(w.dir, ".fabric", "live")
	if left := testproc.Mentioning(stateDir); len(left) > 0 {
		t.Fatalf("processes of the deployment left after destroy: %v", left)
	}
	if _, err := os.Stat(filepath.Join(stateDir, "supervisor.sock")); err == nil {
		t.Fatal("the supervisor socket is left after destroy")
	}
	if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
		c.Close()
		t.Fatal("the MCP server's port still answers after destroy")
	}
	w.deploy(0, &dr, "destroy", file)
	if dr.Outcome != "already_destroyed" {
		t.Fatalf("second destroy = %+v", dr)
	}
}

// envOf reads one variable of a process's environment.
func envOf(t testing.TB, pid int, name string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	t.Fatalf("process %d has no %s", pid, name)
	return ""
}

// waitGone waits until pid has exited (gone, or a zombie nobody reaped
// yet); it fails the test after 15 s.
func waitGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if st, err := procfs.Default.Stat(pid); err != nil || !st.Live() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d did not exit", pid)
}

func mustRead(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// assertNoSecrets proves that the provider key reached no process of the
// deployment but the supervisor's own memory: not the environ or argv of
// the supervisor or anything it started, not a file of the state dir.
func assertNoSecrets(t testing.TB, w *world, key string, supPid int) {
	t.Helper()
	tree := descendants(supPid)
	tree = append(tree, supPid)
	for _, pid := range tree {
		for _, f := range []string{"environ", "cmdline"} {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, f))
			if err == nil && strings.Contains(string(b), key) {
				t.Fatalf("the provider key is in /proc/%d/%s", pid, f)
			}
		}
	}
	_ = filepath.Walk(w.dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || info.Mode()&os.ModeType != 0 || info.Size() > 64<<20 {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), key) {
			t.Fatalf("the provider key is in %s", p)
		}
		return nil
	})
	if len(tree) < 3 {
		t.Fatalf("the supervisor's process tree has %d processes; the scan saw too little", len(tree))
	}
}

// descendants lists every process below pid.
func descendants(root int) []int {
	children := map[int][]int{}
	for _, pid := range testproc.Pids() {
		if ppid, _, _, ok := testproc.Stat(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

var _ = exec.Command
var _ = json.Marshal
