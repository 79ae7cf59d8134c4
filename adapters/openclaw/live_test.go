//go:build linux

package openclaw_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/openclaw"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/browsertest"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/internal/testsupport/testaudit"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
	"github.com/fabric-runtime/fabric/proc"
)

// TestLive drives one real OpenClaw Gateway, with the dashboard interface
// on, through a runtime's life against the scripted model endpoint (one
// Gateway for everything: each costs about 25 s of CPU to start):
//
//   - the dashboard: the Gateway serves the Control UI on the consumer's
//     exact loopback port, the per-start token is 0600 at the P3 path,
//     public_origins reach the Gateway's allowed origins, the handle shows
//     no token;
//   - session: two invokes share the runtime's agent session (the second
//     model request carries the first exchange);
//   - health: live/active/ready of the runtime and of the dashboard;
//   - browser: headless Chromium opens http://127.0.0.1:<port>/#token=...,
//     signs in, sends a chat message through the Control UI and sees the
//     scripted model's answer; the screenshot is kept;
//   - cancel: a slowly streamed turn is cancelled within 2 s and the next
//     turn succeeds;
//   - model requests: every request used FabricConfig's URL and key (C1,
//     Q9), and nothing tried to reach another host;
//   - stop: the token file is gone, and no process or private directory is
//     left.
func TestLive(t *testing.T) {
	livetest.Short(t, "the real OpenClaw Gateway from harnesses/node24, Node 24 and Chromium")
	chromium := browsertest.Require(t)
	l := newLive(t, &modelstub.Script{Rules: []modelstub.Rule{
		{Name: "first", Match: modelstub.Match{Nth: 1}, Reply: modelstub.Reply{Text: "FIRST_ANSWER_7731"}},
		{Name: "second", Match: modelstub.Match{Nth: 2}, Reply: modelstub.Reply{Text: "SECOND_ANSWER_5510"}},
		{Name: "browser", Match: modelstub.Match{Nth: 3}, Reply: modelstub.Reply{Text: dashboardAnswer}},
		{Name: "slow", Match: modelstub.Match{Nth: 4}, Reply: modelstub.Reply{Text: strings.Repeat("slow ", 20), Chunks: 20, IntervalMS: 500}},
	}, Default: &modelstub.Reply{Text: "quick"}})
	port := freeBase(t)
	origin := "https://dashboard.example.test"
	t0 := time.Now()
	rt := l.start(l.config(map[string]any{"interfaces": map[string]any{
		openclaw.Dashboard: map[string]any{"port": port, "public_origins": []any{origin}},
	}}))
	t.Logf("runtime with dashboard started in %s on port %d", time.Since(t0).Round(time.Millisecond), port)
	gw := gatewayPid(t, rt.HostPid())
	root := privateRoot(t, l.StateDir)
	tokenPath := filepath.Join(l.Artifacts, ".fabric", "openclaw", "runtimes", rt.ID(), "interfaces", "dashboard.token")
	var token string

	t.Run("dashboard", func(t *testing.T) {
		st, err := os.Stat(tokenPath)
		if err != nil {
			t.Fatalf("token file: %v", err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("token file mode %v, want 0600", st.Mode().Perm())
		}
		data, err := os.ReadFile(tokenPath)
		if err != nil {
			t.Fatal(err)
		}
		token = string(data)
		if !regexp.MustCompile(`^[0-9a-f]{32,}$`).MatchString(token) {
			t.Fatalf("token file holds %d bytes that do not look like a token", len(token))
		}
		// The Gateway itself listens on the consumer's port, on loopback only.
		mine := adaptertest.CheckListener(t, port, testproc.Group(gw))
		t.Logf("listening: %v", mine)
		// public_origins became allowed origins (S5); the configuration
		// holds neither the token nor the key (C1).
		gcfg, err := os.ReadFile(filepath.Join(root, "openclaw.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Gateway struct {
				ControlUI struct {
					Enabled        bool     `json:"enabled"`
					AllowedOrigins []string `json:"allowedOrigins"`
				} `json:"controlUi"`
			} `json:"gateway"`
		}
		if err := json.Unmarshal(gcfg, &doc); err != nil {
			t.Fatal(err)
		}
		if !doc.Gateway.ControlUI.Enabled || !contains(doc.Gateway.ControlUI.AllowedOrigins, origin) || !contains(doc.Gateway.ControlUI.AllowedOrigins, "http://127.0.0.1:"+strconv.Itoa(port)) {
			t.Errorf("controlUi %+v", doc.Gateway.ControlUI)
		}
		if strings.Contains(string(gcfg), token) || strings.Contains(string(gcfg), l.Key) {
			t.Error("the generated configuration holds the token or the model key")
		}
		// The handle says where the dashboard is, never the token (T1).
		h := rt.Handle()
		hb, _ := json.Marshal(h)
		if strings.Contains(string(hb), token) {
			t.Error("the runtime handle contains the token")
		}
		if len(h.Interfaces) != 1 || h.Interfaces[0].Name != openclaw.Dashboard || h.Interfaces[0].Port != port || h.Interfaces[0].CredentialFile != tokenPath {
			t.Errorf("handle interfaces %s", hb)
		}
	})
	if token == "" {
		t.FailNow()
	}

	t.Run("session", func(t *testing.T) {
		t0 := time.Now()
		res := l.Invoke(t, rt, "FIRST_QUESTION")
		t.Logf("first turn: %s", time.Since(t0).Round(time.Millisecond))
		if res.Status != contract.StatusSucceeded || res.Output != "FIRST_ANSWER_7731" {
			t.Fatalf("first: %s %v %+v", res.Status, res.Output, res.Error)
		}
		if d := harnesstest.Events(res, "output_delta"); len(d) == 0 {
			t.Errorf("no output_delta events: %+v", res.Events)
		}
		t0 = time.Now()
		res = l.Invoke(t, rt, "SECOND_QUESTION")
		t.Logf("second turn: %s", time.Since(t0).Round(time.Millisecond))
		if res.Status != contract.StatusSucceeded || res.Output != "SECOND_ANSWER_5510" {
			t.Fatalf("second: %s %v %+v", res.Status, res.Output, res.Error)
		}
		rb, _ := json.Marshal(res)
		if strings.Contains(string(rb), token) {
			t.Error("a result contains the token")
		}
		reqs := harnesstest.MainRequests(l.Stub.Requests())
		if len(reqs) != 2 {
			t.Fatalf("%d main model requests, want 2", len(reqs))
		}
		body := string(reqs[1].Body)
		if !strings.Contains(body, "SECOND_QUESTION") || !strings.Contains(body, "FIRST_QUESTION") || !strings.Contains(body, "FIRST_ANSWER_7731") {
			t.Errorf("the second model request does not carry the first exchange (question %v, answer %v)",
				strings.Contains(body, "FIRST_QUESTION"), strings.Contains(body, "FIRST_ANSWER_7731"))
		}
	})

	t.Run("health", func(t *testing.T) { adaptertest.CheckRuntimeHealth(t, rt, 3, openclaw.Dashboard) })

	t.Run("browser", func(t *testing.T) {
		shot := signInAndChat(t, chromium, port, token)
		browsertest.KeepArtifact(t, shot, "openclaw-dashboard.png")
		var answered bool
		for _, r := range harnesstest.MainRequests(l.Stub.Requests()) {
			if r.Status == 200 && strings.Contains(string(r.Body), "BROWSER_QUESTION_77") {
				answered = true
			}
		}
		if !answered {
			t.Error("no model request carried the browser's message")
		}
	})

	t.Run("cancel", func(t *testing.T) {
		// Cancel once the slow reply streams: its first output_delta.
		res, took := harnesstest.CancelOnEvent(t, rt, "SLOW_STREAM please", "output_delta")
		t.Logf("cancel to result: %s", took.Round(time.Millisecond))
		if res.Status != contract.StatusCancelled || took > 2*time.Second {
			t.Fatalf("status %s after %s (error %+v), want cancelled within 2s", res.Status, took, res.Error)
		}
		if st := rt.State(); st != "active" {
			t.Fatalf("state after cancel %s", st)
		}
		res = l.Invoke(t, rt, "and now quickly")
		if res.Status != contract.StatusSucceeded || res.Output != "quick" {
			t.Fatalf("turn after cancel: %s %v %+v", res.Status, res.Output, res.Error)
		}
	})

	t.Run("model requests", func(t *testing.T) {
		reqs := harnesstest.CheckChatRequests(t, l.Stub, testModel)
		for _, r := range reqs {
			t.Logf("request %d side=%v %s rule=%q", r.Seq, r.Side, r.SideReason, r.RuleName)
		}
		t.Logf("%d model requests, all POST %s/chat/completions with the key from %s", len(reqs), l.Stub.OpenAIBaseURL(), l.KeyEnv)
		l.CheckOffline()
	})

	t.Run("stop", func(t *testing.T) {
		members := testproc.Group(gw)
		mentioning := testproc.Mentioning(root)
		t.Logf("before stop: gateway group %d %v; processes with the runtime's state %v", gw, members, mentioning)
		testaudit.LogFiles(t, l.StateDir)
		t0 := time.Now()
		if _, err := rt.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Logf("stop took %s", time.Since(t0).Round(time.Millisecond))
		if _, err := os.Stat(tokenPath); !os.IsNotExist(err) {
			t.Errorf("token file after stop: %v", err)
		}
		if left := testproc.Group(gw); len(left) > 0 {
			t.Errorf("processes %v of the Gateway's group %d survived stop", left, gw)
		}
		if left := testproc.Mentioning(root); len(left) > 0 {
			t.Errorf("processes %v with the runtime's private directory survived stop", left)
		}
		if _, err := os.Stat(root); !os.IsNotExist(err) {
			t.Errorf("private directory %s remains: %v", root, err)
		}
		if entries, _ := os.ReadDir(l.StateDir); len(entries) != 0 {
			t.Errorf("state dir holds %v", entries)
		}
		if in, _ := proc.PortInUse("", uint16(port)); in {
			t.Errorf("port %d still in use after stop", port)
		}
	})
}

// privateRoot finds the runtime's private directory under the state dir.
func privateRoot(t testing.TB, stateDir string) string {
	t.Helper()
	roots, _ := filepath.Glob(filepath.Join(stateDir, "*", "openclaw"))
	if len(roots) != 1 {
		t.Fatalf("private dirs %v", roots)
	}
	return roots[0]
}
