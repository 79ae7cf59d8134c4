//go:build linux

package opencode_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/opencode"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/browsertest"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/internal/testsupport/testaudit"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

// toolFile is the file the scripted tool call creates in the workspace.
const toolFile = "fabric_tool_proof.txt"

// TestLive drives one real `opencode serve`, with both interfaces on,
// through a runtime's life against the scripted model endpoint (one server
// for everything):
//
//   - interfaces: the server is the web UI on the consumer's exact loopback
//     port; the per-start password is 0600 at the P3 paths; the handle
//     lists web and terminal and never the password; the configuration
//     holds neither the password nor the key;
//   - session: two invokes share the runtime's session (the second model
//     request carries the first exchange and the system instruction);
//   - tool: a scripted shell tool call really runs and creates a file in
//     the workspace;
//   - health: live/active/ready of the runtime and of the web interface;
//   - browser: headless Chromium opens the web UI with the per-start
//     credential and shows the runtime's conversation; the screenshot is
//     kept;
//   - terminal: the launcher, run in tmux, attaches to the server and
//     shows the runtime's session;
//   - cancel: a slowly streamed turn is cancelled within 2 s and the next
//     turn succeeds;
//   - model requests: every request used FabricConfig's URL and key (C1),
//     and nothing tried to reach another host;
//   - stop: no process of the server, nothing carrying the runtime's
//     private directories, no private directory and no token file is left.
func TestLive(t *testing.T) {
	livetest.Short(t, "the real opencode server from harnesses/opencode, Chromium and tmux")
	l := newLive(t, &modelstub.Script{Rules: []modelstub.Rule{
		{Name: "first", Match: modelstub.Match{Contains: "FIRST_QUESTION"}, Reply: modelstub.Reply{Text: "FIRST_ANSWER_7731"}},
		{Name: "second", Match: modelstub.Match{Contains: "SECOND_QUESTION"}, Reply: modelstub.Reply{Text: "SECOND_ANSWER_5510"}},
		{Name: "tool", Match: modelstub.Match{Contains: "TOOL_QUESTION"}, Reply: modelstub.Reply{ToolCall: &modelstub.ToolCall{Command: "echo made-by-opencode > " + toolFile}}},
		{Name: "tool-done", Match: modelstub.Match{Contains: "TOOL_QUESTION"}, Reply: modelstub.Reply{Text: "TOOL_DONE_2718"}},
		{Name: "slow", Match: modelstub.Match{Contains: "SLOW_QUESTION"}, Reply: modelstub.Reply{Text: strings.Repeat("slow ", 40), Chunks: 40, IntervalMS: 500}},
	}, Default: &modelstub.Reply{Text: "quick"}})
	webPort := freePort(t)
	t0 := time.Now()
	rt := l.Start(l.config(map[string]any{"interfaces": map[string]any{
		opencode.Web:      map[string]any{"port": webPort},
		opencode.Terminal: map[string]any{},
	}}))
	startup := time.Since(t0)
	t.Logf("runtime with web and terminal started in %s on port %d", startup.Round(time.Millisecond), webPort)
	srv := serverPid(t, rt.HostPid())
	root := filepath.Join(l.StateDir, "runtimes", rt.ID(), "home", "opencode")
	if _, err := os.Stat(root); err != nil {
		// The runtime's FABRIC_HOME layout: find the private root by the
		// server's environment instead.
		root = privateRoot(t, srv)
	}
	ifdir := filepath.Join(l.Artifacts, ".fabric", "opencode", "runtimes", rt.ID(), "interfaces")
	var password string

	t.Run("interfaces", func(t *testing.T) {
		for _, name := range []string{opencode.Web, opencode.Terminal} {
			p := filepath.Join(ifdir, name+".token")
			st, err := os.Stat(p)
			if err != nil {
				t.Fatalf("token file: %v", err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("%s mode %v, want 0600", p, st.Mode().Perm())
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if password == "" {
				password = string(data)
			} else if string(data) != password {
				t.Errorf("the terminal's token is not the server's password")
			}
		}
		if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(password) {
			t.Fatalf("token file holds %d bytes that do not look like a password", len(password))
		}
		adaptertest.CheckListener(t, webPort, testproc.Group(srv))
		// Without the password the server refuses.
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/session", webPort))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET /session without the password: %d, want 401", resp.StatusCode)
		}
		cfg, err := os.ReadFile(filepath.Join(root, "opencode.json"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(cfg), password) || strings.Contains(string(cfg), l.Key) {
			t.Error("the generated configuration holds the password or the model key")
		}
		if !strings.Contains(string(cfg), "{env:FABRIC_OPENCODE_MODEL_KEY}") || !strings.Contains(string(cfg), l.Stub.OpenAIBaseURL()) {
			t.Errorf("configuration does not reference the key variable and the endpoint:\n%s", cfg)
		}
		// The server's command line holds neither secret (its environment
		// does, by design).
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", srv))
		if strings.Contains(string(cmdline), password) || strings.Contains(string(cmdline), l.Key) {
			t.Error("the server's argv holds a secret")
		}
		h := rt.Handle()
		hb, _ := json.Marshal(h)
		if strings.Contains(string(hb), password) || strings.Contains(string(hb), l.Key) {
			t.Error("the runtime handle contains a secret")
		}
		var names []string
		for _, in := range h.Interfaces {
			names = append(names, in.Name)
			switch in.Name {
			case opencode.Web:
				if in.Port != webPort || in.Credential != contract.CredentialBasic || in.CredentialFile != filepath.Join(ifdir, "web.token") || !in.Browser {
					t.Errorf("web interface %+v", in)
				}
			case opencode.Terminal:
				if len(in.Argv) == 0 || in.Argv[0] != filepath.Join(ifdir, "terminal") {
					t.Errorf("terminal interface %+v", in)
				}
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{opencode.Terminal, opencode.Web}) {
			t.Errorf("handle interfaces %s", hb)
		}
	})
	if password == "" {
		t.FailNow()
	}

	var turnTimes []time.Duration
	t.Run("session", func(t *testing.T) {
		t1 := time.Now()
		res := l.Invoke(t, rt, "FIRST_QUESTION")
		turnTimes = append(turnTimes, time.Since(t1))
		t.Logf("startup to first answer: %s (first turn %s)", (startup + time.Since(t1)).Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))
		if res.Status != contract.StatusSucceeded || res.Output != "FIRST_ANSWER_7731" {
			t.Fatalf("first: %s %v %+v", res.Status, res.Output, res.Error)
		}
		if d := harnesstest.Events(res, "output_delta"); len(d) == 0 {
			t.Errorf("no output_delta events: %+v", res.Events)
		}
		if res.Usage == nil || res.Usage.TotalTokens == nil || *res.Usage.TotalTokens == 0 {
			t.Errorf("no usage: %+v", res.Usage)
		}
		t1 = time.Now()
		res = l.Invoke(t, rt, "SECOND_QUESTION")
		turnTimes = append(turnTimes, time.Since(t1))
		t.Logf("second turn: %s", time.Since(t1).Round(time.Millisecond))
		if res.Status != contract.StatusSucceeded || res.Output != "SECOND_ANSWER_5510" {
			t.Fatalf("second: %s %v %+v", res.Status, res.Output, res.Error)
		}
		var second []modelstub.Request
		for _, r := range harnesstest.MainRequests(l.Stub.Requests()) {
			if strings.Contains(string(r.Body), "SECOND_QUESTION") {
				second = append(second, r)
			}
		}
		if len(second) == 0 {
			t.Fatal("no model request carried the second question")
		}
		body := string(second[len(second)-1].Body)
		if !strings.Contains(body, "FIRST_QUESTION") || !strings.Contains(body, "FIRST_ANSWER_7731") {
			t.Errorf("the second model request does not carry the first exchange (question %v, answer %v)",
				strings.Contains(body, "FIRST_QUESTION"), strings.Contains(body, "FIRST_ANSWER_7731"))
		}
		if !strings.Contains(body, "FABRIC_SYSTEM_NOTE_3141") {
			t.Error("the model request does not carry instructions.system")
		}
	})

	t.Run("tool", func(t *testing.T) {
		t1 := time.Now()
		res := l.Invoke(t, rt, "TOOL_QUESTION: create the file")
		turnTimes = append(turnTimes, time.Since(t1))
		if res.Status != contract.StatusSucceeded || res.Output != "TOOL_DONE_2718" {
			t.Fatalf("tool turn: %s %v %+v", res.Status, res.Output, res.Error)
		}
		data, err := os.ReadFile(filepath.Join(l.Workspace, toolFile))
		if err != nil || strings.TrimSpace(string(data)) != "made-by-opencode" {
			t.Fatalf("the tool did not create %s in the workspace: %q %v", toolFile, data, err)
		}
		calls, results := harnesstest.Events(res, "tool_call"), harnesstest.Events(res, "tool_result")
		if len(calls) == 0 || len(results) == 0 {
			t.Errorf("tool events: %d calls, %d results", len(calls), len(results))
		}
	})

	t.Run("health", func(t *testing.T) { adaptertest.CheckRuntimeHealth(t, rt, 5, opencode.Web) })

	sessionID := runtimeSession(t, webPort, password, rt.ID())

	t.Run("browser", func(t *testing.T) {
		chromium := browsertest.Require(t)
		shot := openWebUI(t, chromium, webPort, password, l.Workspace, sessionID)
		browsertest.KeepArtifact(t, shot, "opencode-web.png")
	})

	t.Run("terminal", func(t *testing.T) {
		tmux, err := exec.LookPath("tmux")
		if err != nil {
			livetest.Missing(t, "tmux", "apt-get install tmux; .ci/run does", err)
		}
		attachInTmux(t, tmux, filepath.Join(ifdir, "terminal"), "FIRST_ANSWER_7731")
	})

	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		type out struct {
			res *contract.RunResult
			err error
		}
		done := make(chan out, 1)
		go func() {
			res, err := rt.Invoke(ctx, "SLOW_QUESTION")
			done <- out{res, err}
		}()
		// Cancel once the answer is streaming.
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			streaming := false
			for _, r := range l.Stub.Requests() {
				if strings.Contains(string(r.Body), "SLOW_QUESTION") {
					streaming = true
				}
			}
			if streaming {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(time.Second)
		t1 := time.Now()
		cancel()
		o := <-done
		took := time.Since(t1)
		t.Logf("cancel took %s", took.Round(time.Millisecond))
		if o.err == nil && o.res.Status != contract.StatusCancelled {
			t.Errorf("cancelled turn: %s %+v", o.res.Status, o.res.Error)
		}
		if o.err != nil {
			t.Logf("cancelled invoke returned %v", o.err)
		}
		if took > 2*time.Second {
			t.Errorf("cancel took %s, want <= 2s", took)
		}
		t1 = time.Now()
		res := l.Invoke(t, rt, "AFTER_CANCEL")
		turnTimes = append(turnTimes, time.Since(t1))
		if res.Status != contract.StatusSucceeded || res.Output != "quick" {
			t.Errorf("turn after cancel: %s %v %+v", res.Status, res.Output, res.Error)
		}
	})

	t.Run("model-requests", func(t *testing.T) {
		reqs := harnesstest.CheckChatRequests(t, l.Stub, testModel)
		for _, r := range reqs {
			rb, _ := json.Marshal(r)
			if strings.Contains(string(rb), l.Key) {
				t.Errorf("request %d record holds the key", r.Seq)
			}
		}
		l.CheckOffline()
		sorted := slices.Clone(turnTimes)
		slices.Sort(sorted)
		t.Logf("%d model requests; turn latencies %v (median %s); server RSS %d MiB",
			len(reqs), turnTimes, sorted[len(sorted)/2].Round(time.Millisecond), int(testproc.RSSKiB(srv))/1024)
	})

	t.Run("stop", func(t *testing.T) {
		testaudit.LogFiles(t, l.StateDir)
		t1 := time.Now()
		if _, err := rt.Stop(context.Background()); err != nil {
			t.Fatalf("stop: %v", err)
		}
		t.Logf("stop took %s", time.Since(t1).Round(time.Millisecond))
		if _, _, _, ok := testproc.Stat(srv); ok {
			t.Errorf("the server (pid %d) is still alive", srv)
		}
		if left := testproc.Group(srv); len(left) > 0 {
			t.Errorf("processes of the server's group are alive: %v", left)
		}
		if left := testproc.Mentioning(root); len(left) > 0 {
			t.Errorf("processes carrying the runtime's private directory %s are alive: %v", root, left)
		}
		if _, err := os.Stat(root); !os.IsNotExist(err) {
			t.Errorf("the private directory %s is still there (%v)", root, err)
		}
		for _, name := range []string{"web.token", "terminal.token", "terminal.running"} {
			if _, err := os.Stat(filepath.Join(ifdir, name)); !os.IsNotExist(err) {
				t.Errorf("%s is still there (%v)", name, err)
			}
		}
	})
}

// privateRoot finds the runtime's private root from the server's
// OPENCODE_CONFIG.
func privateRoot(t testing.TB, pid int) string {
	t.Helper()
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, "OPENCODE_CONFIG="); ok {
			return filepath.Dir(v)
		}
	}
	t.Fatal("the server has no OPENCODE_CONFIG")
	return ""
}

// runtimeSession finds the runtime's OpenCode session (titled
// "fabric <runtime id>") through the server's API.
func runtimeSession(t testing.TB, port int, password, runtimeID string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/session", port), nil)
	req.SetBasicAuth(webUser, password)
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.Title == "fabric "+runtimeID {
			return s.ID
		}
	}
	t.Fatalf("no session titled fabric %s in %+v", runtimeID, list)
	return ""
}

// webSessionPath is the web UI's route of a session:
// /<base64url(directory)>/session/<id>.
func webSessionPath(dir, id string) string {
	return "/" + base64.RawURLEncoding.EncodeToString([]byte(dir)) + "/session/" + id
}
