//go:build linux

package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/acp"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

func caseFor(t testing.TB, bin string) profileCase {
	t.Helper()
	for _, pc := range cases {
		if pc.bin == bin {
			return pc
		}
	}
	t.Fatalf("no live case for %s", bin)
	return profileCase{}
}

// startProfile starts a runtime of a user's descriptor (written into
// discovery.local_paths) whose runner.env holds p as a JSON profile: a
// bundled profile changed by the test, with no Go code.
func (l *live) startProfile(p acp.Profile) *fabric.Runtime {
	l.t.Helper()
	rt, err := l.startProfileErr(p)
	if err != nil {
		l.t.Fatalf("start: %v", err)
	}
	return rt
}

func (l *live) startProfileErr(p acp.Profile) (*fabric.Runtime, error) {
	l.t.Helper()
	pj, err := json.Marshal(p)
	if err != nil {
		l.t.Fatal(err)
	}
	desc := map[string]any{
		"contract_version": "fabric.adapter/v1alpha2", "adapter_id": "test.changed-" + p.Name, "adapter_kind": "process",
		"runner":       map[string]any{"builtin": acp.ID, "protocol": "fabric.host/v2", "env": map[string]string{acp.EnvProfile: string(pj)}},
		"config":       map[string]any{"input": "agent_config", "accepts": []string{"models", "models.base_url"}},
		"capabilities": map[string]any{"streaming": true, "cancellation": true},
		"limits":       map[string]any{"start_seconds": 90},
	}
	db, _ := json.Marshal(desc)
	if err := os.WriteFile(filepath.Join(l.DescDir, p.Name+".fabric-adapter.json"), db, 0o644); err != nil {
		l.t.Fatal(err)
	}
	return l.TryStart(l.config("test.changed-"+p.Name, nil))
}

// gate fronts the stub and reports on arrived (once) when a model request
// whose body holds marker comes in: the handshake that says a turn is in
// flight, waiting on the model.
type gate struct {
	url     string
	arrived chan struct{}
}

// newGate puts a gate in front of l's stub; runtimes started afterwards
// reach the stub through it.
func newGate(l *live, marker string) *gate {
	g := &gate{arrived: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(marker)) {
			select {
			case g.arrived <- struct{}{}:
			default:
			}
		}
		l.Stub.ServeHTTP(w, r)
	}))
	l.t.Cleanup(srv.Close)
	g.url = srv.URL
	l.pc.baseURL = func(*modelstub.Server) string { return g.url + "/v1" }
	return g
}

func (g *gate) wait(t testing.TB) {
	t.Helper()
	select {
	case <-g.arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("the turn's model request did not arrive within 60 s")
	}
}

// TestLiveCancelMidRequest: for Droid and Kilo, a turn cancelled while its
// model request is in flight ends cancelled within 2 s, and the next turn
// on the same runtime answers with the earlier turns in its history.
func TestLiveCancelMidRequest(t *testing.T) {
	livetest.Short(t, "the real Factory Droid and Kilo Code from harnesses/")
	for _, bin := range []string{"droid", "kilo"} {
		t.Run(bin, func(t *testing.T) {
			script := &modelstub.Script{Rules: []modelstub.Rule{
				{Match: modelstub.Match{Contains: "AFTER_CANCEL"}, Reply: modelstub.Reply{Text: "AFTER_CANCEL_OK"}},
				{Match: modelstub.Match{Contains: "STALL_TURN"}, Reply: modelstub.Reply{Stall: true, StallMS: 30000}},
			}, Default: &modelstub.Reply{Text: "ok"}}
			l := newLive(t, caseFor(t, bin), script)
			g := newGate(l, "STALL_TURN")
			rt := l.start(nil)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan *contract.RunResult, 1)
			go func() {
				r, err := rt.Invoke(ctx, "STALL_TURN please")
				if err != nil {
					t.Error(err)
				}
				done <- r
			}()
			g.wait(t)
			cancelTurn(t, cancel, done)
			res := l.Invoke(t, rt, "AFTER_CANCEL now")
			if res.Status != contract.StatusSucceeded || !strings.Contains(res.Output.(string), "AFTER_CANCEL_OK") {
				t.Fatalf("turn after cancel: %s %v %+v", res.Status, res.Output, res.Error)
			}
			if _, err := rt.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if left := agentPids(l.StateDir); len(left) > 0 {
				t.Errorf("processes left after stop: %v", left)
			}
			l.checkRequests()
		})
	}
}

// procEnv returns the value of name in pid's environment.
func procEnv(pid int, name string) (string, bool) {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", false
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// exeBase is the base name of pid's executable.
func exeBase(pid int) string {
	p, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return ""
	}
	return filepath.Base(p)
}

// TestLiveDroidSignalExitZero: Droid exits with code 0 when it gets
// SIGTERM mid-turn, with no final event. The turn must fail as
// acp_agent_exited, never read as an answer.
func TestLiveDroidSignalExitZero(t *testing.T) {
	livetest.Short(t, "the real Factory Droid from harnesses/droid")
	script := &modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Contains: "STALL_TURN"}, Reply: modelstub.Reply{Stall: true, StallMS: 30000}},
	}, Default: &modelstub.Reply{Text: "ok"}}
	l := newLive(t, caseFor(t, "droid"), script)
	g := newGate(l, "STALL_TURN")
	rt := l.start(nil)
	type out struct {
		res *contract.RunResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		r, err := rt.Invoke(ctx, "STALL_TURN please")
		done <- out{r, err}
	}()
	g.wait(t)
	var killed []int
	for _, pid := range agentPids(l.StateDir) {
		if exeBase(pid) == "droid" {
			if err := syscall.Kill(pid, syscall.SIGTERM); err == nil {
				killed = append(killed, pid)
			}
		}
	}
	if len(killed) == 0 {
		t.Fatal("no droid process to signal")
	}
	var o out
	select {
	case o = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn did not end after the agent was signalled")
	}
	code, msg := "", ""
	switch {
	case o.err != nil:
		msg = o.err.Error()
		if strings.Contains(msg, acp.CodeExited) {
			code = acp.CodeExited
		}
	case o.res.Error != nil:
		code, msg = o.res.Error.Code, o.res.Error.Message
	}
	t.Logf("SIGTERM to %v: %s", killed, msg)
	if o.err == nil && o.res.Status == contract.StatusSucceeded {
		t.Fatalf("a turn whose agent was killed succeeded: %+v", o.res)
	}
	if code != acp.CodeExited {
		t.Errorf("code %q (%s), want %s", code, msg, acp.CodeExited)
	}
	if !strings.Contains(msg, "exit status 0") {
		t.Errorf("Droid's exit is not reported as status 0 (%s): the quirk this test guards may have changed", msg)
	}
	if _, err := rt.Stop(context.Background()); err != nil {
		t.Logf("stop: %v", err)
	}
	if left := agentPids(l.StateDir); len(left) > 0 {
		t.Errorf("processes left after stop: %v", left)
	}
}

// TestLiveDroidAirgap: the sentinel proxy sees Droid's calls to Factory's
// hosts when the profile lacks FACTORY_AIRGAP_ENABLED (so the check that
// TestLiveProfiles makes with the bundled profile, nothing through the
// proxy, can fail), and nothing with it.
func TestLiveDroidAirgap(t *testing.T) {
	livetest.Short(t, "the real Factory Droid from harnesses/droid")
	for _, airgap := range []bool{true, false} {
		t.Run("airgap="+strconv.FormatBool(airgap), func(t *testing.T) {
			l := newLive(t, caseFor(t, "droid"), &modelstub.Script{Default: &modelstub.Reply{Text: "AIRGAP_ANSWER"}})
			p, _ := acp.Bundled(acp.ProfileDroid)
			if !airgap {
				delete(p.Env, "FACTORY_AIRGAP_ENABLED")
			}
			p.Name = "droid-airgap-" + strconv.FormatBool(airgap)
			rt, err := l.startProfileErr(p)
			if !airgap {
				// In ACP mode Droid without the switch wants a Factory
				// login at session/new: BYOK works only airgapped.
				t.Logf("start without FACTORY_AIRGAP_ENABLED: %v; sentinel proxy: %d connections %v", err, l.Proxy.Hits(), l.Proxy.Requests())
				if err == nil {
					if _, err := rt.Stop(context.Background()); err != nil {
						t.Fatal(err)
					}
				} else if !strings.Contains(err.Error(), "Authentication required") {
					t.Errorf("start without the switch: %v, want Droid's login demand", err)
				}
				if l.Proxy.Hits() == 0 {
					t.Error("without FACTORY_AIRGAP_ENABLED the sentinel proxy saw nothing: it would not catch Droid calling home")
				}
				return
			}
			if err != nil {
				t.Fatalf("start: %v", err)
			}
			res := l.Invoke(t, rt, "hello")
			if res.Status != contract.StatusSucceeded || !strings.Contains(res.Output.(string), "AIRGAP_ANSWER") {
				t.Fatalf("turn: %s %v %+v", res.Status, res.Output, res.Error)
			}
			if _, err := rt.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			l.checkRequests()
		})
	}
}

// TestLiveKiloConfigIsolation: Kilo loads any kilo.json / opencode.json
// in its cwd's parents and writes into the configuration file it is
// given. A configuration in the workspace's parent pointing Kilo's
// provider at another endpoint is ignored under the bundled profile and
// taken without KILO_DISABLE_PROJECT_CONFIG (the control); Kilo's own file
// is a per-runtime copy under the private HOME, rewritten by Kilo and gone
// after stop.
func TestLiveKiloConfigIsolation(t *testing.T) {
	livetest.Short(t, "the real Kilo Code from harnesses/kilo")
	for _, isolated := range []bool{true, false} {
		t.Run("project_config_disabled="+strconv.FormatBool(isolated), func(t *testing.T) {
			l := newLive(t, caseFor(t, "kilo"), &modelstub.Script{Default: &modelstub.Reply{Text: "KILO_ANSWER"}})
			parent := t.TempDir()
			l.Workspace = filepath.Join(parent, "ws")
			if err := os.Mkdir(l.Workspace, 0o755); err != nil {
				t.Fatal(err)
			}
			// The parent's configuration sends the model requests through
			// the sentinel proxy (an endpoint that is not FabricConfig's).
			foreign := `{"provider":{"fabric":{"options":{"baseURL":"` + l.Proxy.URL + `/v1"}}}}`
			for _, f := range []string{"kilo.json", "opencode.json", ".kilo/kilo.json", ".opencode/opencode.json"} {
				p := filepath.Join(parent, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(foreign), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, _ := acp.Bundled(acp.ProfileKilo)
			if !isolated {
				delete(p.Env, "KILO_DISABLE_PROJECT_CONFIG")
			}
			p.Name = "kilo-isolated-" + strconv.FormatBool(isolated)
			rt := l.startProfile(p)

			cfgPath := ""
			for _, pid := range agentPids(l.StateDir) {
				if v, ok := procEnv(pid, "KILO_CONFIG"); ok {
					cfgPath = v
				}
			}
			if cfgPath == "" {
				t.Fatal("no Kilo process with KILO_CONFIG")
			}
			if !strings.HasPrefix(cfgPath, l.StateDir+string(filepath.Separator)) || strings.HasPrefix(cfgPath, parent) {
				t.Errorf("KILO_CONFIG %s: want a file under the runtime's state (%s), outside the workspace's tree", cfgPath, l.StateDir)
			}

			// Without the switch the turn goes to the sentinel and does not
			// answer; its request is there well within 20 s.
			limit := 60 * time.Second
			if !isolated {
				limit = 20 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			res, err := rt.Invoke(ctx, "hello")
			cancel()
			answered := err == nil && res.Status == contract.StatusSucceeded && strings.Contains(res.Output.(string), "KILO_ANSWER")
			if isolated {
				if !answered {
					t.Fatalf("turn: %v %+v", err, res)
				}
				b, err := os.ReadFile(cfgPath)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("Kilo's configuration after start: %s", b)
				if !bytes.Contains(b, []byte(`"$schema"`)) {
					t.Errorf("Kilo did not write into its configuration file (the quirk this test guards may have changed)")
				}
			}
			if _, err := rt.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(cfgPath); !os.IsNotExist(err) {
				t.Errorf("Kilo's configuration %s is still there after stop (%v)", cfgPath, err)
			}
			t.Logf("answered %v; sentinel proxy: %d connections %v", answered, l.Proxy.Hits(), l.Proxy.Requests())
			if isolated {
				l.checkRequests()
			} else if !slices.ContainsFunc(l.Proxy.Requests(), func(r string) bool { return strings.HasPrefix(r, "POST /v1/chat/completions") }) {
				t.Errorf("without KILO_DISABLE_PROJECT_CONFIG Kilo did not take the parent's configuration (sentinel: %v): the control proves nothing", l.Proxy.Requests())
			}
		})
	}
}
