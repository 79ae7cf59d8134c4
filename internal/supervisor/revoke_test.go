package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/deploy/desired"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestMain lets this test binary host the bundled adapter whose runtimes
// the drain tests start.
func TestMain(m *testing.M) {
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// gatedModel is the scripted model endpoint behind a gate: each chat
// request announces itself on arrived and waits for release before the
// endpoint answers it.
type gatedModel struct {
	srv     *httptest.Server
	arrived chan struct{}
	release chan struct{}
	once    sync.Once
}

// open lets every held request (and every later one) through.
func (g *gatedModel) open() { g.once.Do(func() { close(g.release) }) }

func newGatedModel(t *testing.T) *gatedModel {
	t.Helper()
	sc, err := modelstub.ParseScript([]byte("default: {text: drained-turn-done}\n"))
	if err != nil {
		t.Fatal(err)
	}
	stub := modelstub.New(sc)
	g := &gatedModel{arrived: make(chan struct{}, 8), release: make(chan struct{})}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions") {
			g.arrived <- struct{}{}
			select {
			case <-g.release:
			case <-r.Context().Done():
				return
			}
		}
		stub.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		g.open()
		g.srv.Close()
		stub.Close()
	})
	return g
}

// served is a supervisor serving on a state dir, for one test.
type served struct {
	s      *Supervisor
	cancel context.CancelFunc
	done   chan struct{}
}

func serveSupervisor(t *testing.T, dir string) *served {
	t.Helper()
	s, err := New(Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sv := &served{s: s, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(sv.done)
		s.Serve(ctx)
	}()
	t.Cleanup(sv.shutdown)
	return sv
}

func (sv *served) shutdown() {
	sv.cancel()
	<-sv.done
}

func ctl(t *testing.T, socket string, req *agentctl.Request) *agentctl.Response {
	t.Helper()
	c := &agentctl.Client{Socket: socket}
	resp, err := c.Do(context.Background(), req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Operation, req.Action, err)
	}
	return resp
}

func deployReq(t *testing.T, action string, payload any, timeout float64) *agentctl.Request {
	t.Helper()
	b, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return &agentctl.Request{Operation: agentctl.OpDeploy, Action: action, Payload: b, TimeoutSeconds: timeout}
}

func invokeReq(agent, input string) *agentctl.Request {
	return &agentctl.Request{Operation: agentctl.OpInvoke, Agent: agent, TimeoutSeconds: 120,
		Request: &contract.RunRequest{RequestID: input, Input: input}}
}

func drainState(t *testing.T, modelURL string) *desired.State {
	t.Helper()
	cfg := `{"schema_version":"fabric.agent/v1alpha1","metadata":{"name":"drainer"},"runtime":{"timeout_seconds":120},
"harness":{"adapter_id":"fabric.scripted","settings":{"mode":"model"}},
"models":{"default":{"provider":"stub","model":"stub-model","api_key_env":"FABRIC_SUPERVISOR_TEST_KEY","base_url":"` + modelURL + `/v1"}}}`
	return &desired.State{FormatVersion: desired.FormatVersion, Name: "drain", UID: "uid-drain", Digest: "d1",
		Agents: []desired.Agent{{Name: "drainer", Sandbox: "main", Config: json.RawMessage(cfg), BaseDir: t.TempDir(), Source: "test#drainer",
			Restart: contract.RestartPolicy{Policy: contract.RestartOnFailure, Max: 5}, Attachments: []string{}, Generation: "g1"}},
		Services: []desired.Service{}}
}

func agentOf(t *testing.T, raw json.RawMessage) supervisorproto.AgentStatus {
	t.Helper()
	var st supervisorproto.Status
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Agents) != 1 {
		t.Fatalf("status has %d agents", len(st.Agents))
	}
	return st.Agents[0]
}

func revokeResult(t *testing.T, resp *agentctl.Response) supervisorproto.RevokeResult {
	t.Helper()
	if resp.Error != nil {
		t.Fatalf("revoke: %v", resp.Error)
	}
	var rr supervisorproto.RevokeResult
	if err := json.Unmarshal(resp.Output, &rr); err != nil {
		t.Fatal(err)
	}
	return rr
}

func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// A drain with a turn in flight: new turns are refused with
// agent_revoked at once, the turn in flight completes, then the runtime
// stops and is not restarted, also not by a restarted supervisor.
func TestDrainWithATurnInFlight(t *testing.T) {
	setTestKey(t)
	model := newGatedModel(t)
	dir := t.TempDir()
	sv := serveSupervisor(t, dir)
	socket := sv.s.Socket()
	st := drainState(t, model.srv.URL)

	resp := ctl(t, socket, deployReq(t, supervisorproto.ActionApply, supervisorproto.ApplyPayload{State: st}, 60))
	if resp.Error != nil {
		t.Fatalf("apply: %v", resp.Error)
	}
	var ar supervisorproto.ApplyResult
	if err := json.Unmarshal(resp.Output, &ar); err != nil {
		t.Fatal(err)
	}
	before := ar.Status.Agents[0]
	if before.State != supervisorproto.StateRunning || before.HostPid == 0 {
		t.Fatalf("after apply: %+v", before)
	}

	// The turn in flight: its model request is held at the gate.
	turn := startTurn(socket, "drainer", "first")
	<-model.arrived

	// The drain answers "draining" at its (short) timeout: the turn is
	// held, so it cannot have ended.
	rev := supervisorproto.RevokePayload{Agent: "drainer", Policy: supervisorproto.PolicyDrain, CatalogSerial: 4, Entry: "fabric.scripted@1.0.0", Reason: "security"}
	rr := revokeResult(t, ctl(t, socket, deployReq(t, supervisorproto.ActionRevoke, rev, 0.2)))
	if rr.Outcome != supervisorproto.StateDraining || rr.Already || rr.RuntimeID != before.RuntimeID {
		t.Fatalf("drain with a turn in flight: %+v", rr)
	}
	refused := ctl(t, socket, invokeReq("drainer", "second"))
	if refused.Error == nil || refused.Error.Code != supervisorproto.CodeAgentRevoked || !strings.Contains(refused.Error.Message, "fabric.scripted@1.0.0") {
		t.Fatalf("a new turn while draining: %+v", refused.Error)
	}
	status := agentOf(t, ctl(t, socket, deployReq(t, supervisorproto.ActionStatus, struct{}{}, 5)).Output)
	if status.State != supervisorproto.StateDraining || status.RuntimeID != before.RuntimeID || status.Revocation == nil || status.Revocation.CatalogSerial != 4 {
		t.Fatalf("status while draining: %+v", status)
	}
	if processGone(before.HostPid) {
		t.Fatal("the host is gone while its turn is in flight")
	}

	// Asked again, the drain waits for the turn; release the turn.
	again := make(chan supervisorproto.RevokeResult, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := &agentctl.Client{Socket: socket}
		r, err := c.Do(context.Background(), deployReq(t, supervisorproto.ActionRevoke, rev, 60))
		if err != nil || r.Error != nil {
			again <- supervisorproto.RevokeResult{Outcome: "error"}
			return
		}
		var out supervisorproto.RevokeResult
		_ = json.Unmarshal(r.Output, &out)
		again <- out
	}()
	model.open()
	first := <-turn
	if first.Error != nil {
		t.Fatalf("the turn in flight: %v", first.Error)
	}
	var res contract.RunResult
	if err := json.Unmarshal(first.Output, &res); err != nil || res.Status != contract.StatusSucceeded {
		t.Fatalf("the turn in flight did not complete: %s %v", first.Output, err)
	}
	done := <-again
	wg.Wait()
	if done.Outcome != supervisorproto.StateDrained || !done.Already {
		t.Fatalf("the drain after its turn: %+v", done)
	}
	if !processGone(before.HostPid) {
		t.Fatalf("host %d outlived the drain", before.HostPid)
	}
	status = agentOf(t, ctl(t, socket, deployReq(t, supervisorproto.ActionStatus, struct{}{}, 5)).Output)
	if status.State != supervisorproto.StateDrained || status.RuntimeID != "" || status.Reason != supervisorproto.ReasonPackageRevoked ||
		status.Revocation == nil || status.Revocation.CompletedAtMillis == 0 || status.Revocation.Entry != "fabric.scripted@1.0.0" {
		t.Fatalf("status after the drain: %+v", status)
	}
	for _, e := range status.Events {
		if e.Kind == "restarted" || e.Kind == "runtime_started" && e.RuntimeID != before.RuntimeID {
			t.Fatalf("a runtime came back: %+v", status.Events)
		}
	}
	refused = ctl(t, socket, invokeReq("drainer", "third"))
	if refused.Error == nil || refused.Error.Code != supervisorproto.CodeAgentRevoked {
		t.Fatalf("a new turn after the drain: %+v", refused.Error)
	}

	// A restarted supervisor keeps it drained: apply of the same state
	// starts nothing.
	sv.shutdown()
	sv2 := serveSupervisor(t, dir)
	resp = ctl(t, sv2.s.Socket(), deployReq(t, supervisorproto.ActionApply, supervisorproto.ApplyPayload{State: st}, 60))
	if resp.Error != nil {
		t.Fatalf("apply after restart: %v", resp.Error)
	}
	var ar2 supervisorproto.ApplyResult
	if err := json.Unmarshal(resp.Output, &ar2); err != nil {
		t.Fatal(err)
	}
	after := ar2.Status.Agents[0]
	if after.State != supervisorproto.StateDrained || after.RuntimeID != "" || after.Revocation == nil || ar2.Outcome != supervisorproto.OutcomeDegraded {
		t.Fatalf("after a supervisor restart: %+v (outcome %s)", after, ar2.Outcome)
	}
	if _, err := os.Stat(filepath.Join(dir, supervisorproto.RevokedFile)); err != nil {
		t.Fatal(err)
	}
}

// A stop with a turn in flight: the runtime stops now, the turn ends with
// its honest outcome (not succeeded), nothing restarts it.
func TestStopWithATurnInFlight(t *testing.T) {
	setTestKey(t)
	model := newGatedModel(t)
	sv := serveSupervisor(t, t.TempDir())
	socket := sv.s.Socket()
	resp := ctl(t, socket, deployReq(t, supervisorproto.ActionApply, supervisorproto.ApplyPayload{State: drainState(t, model.srv.URL)}, 60))
	if resp.Error != nil {
		t.Fatalf("apply: %v", resp.Error)
	}
	var ar supervisorproto.ApplyResult
	if err := json.Unmarshal(resp.Output, &ar); err != nil {
		t.Fatal(err)
	}
	pid := ar.Status.Agents[0].HostPid
	turn := startTurn(socket, "drainer", "first")
	<-model.arrived
	rev := supervisorproto.RevokePayload{Agent: "drainer", Policy: supervisorproto.PolicyStop, CatalogSerial: 5, Entry: "fabric.scripted@1.0.0", Reason: "key_compromise"}
	rr := revokeResult(t, ctl(t, socket, deployReq(t, supervisorproto.ActionRevoke, rev, 60)))
	if rr.Outcome != supervisorproto.StateStopped || rr.Already {
		t.Fatalf("stop: %+v", rr)
	}
	// The runtime's stop cancels the turn, and the turn says so.
	first := <-turn
	if first.Error != nil {
		t.Fatalf("the turn cut by the stop: %v", first.Error)
	}
	var res contract.RunResult
	if err := json.Unmarshal(first.Output, &res); err != nil {
		t.Fatal(err)
	}
	if res.Status != contract.StatusCancelled {
		t.Fatalf("the turn cut by the stop ends %s, want cancelled: %s", res.Status, first.Output)
	}
	if !processGone(pid) {
		t.Fatalf("host %d outlived the stop", pid)
	}
	again := revokeResult(t, ctl(t, socket, deployReq(t, supervisorproto.ActionRevoke, rev, 60)))
	if again.Outcome != supervisorproto.StateStopped || !again.Already {
		t.Fatalf("the stop again: %+v", again)
	}
	model.open()
}

// setTestKey sets the model key the test's agents name, recorded in the
// suite's token ledger so the scan proves it never appears in any output.
func setTestKey(t *testing.T) {
	const key = "sk-fabric-supervisor-revoke-4e1c"
	harnessui.RecordForAudit(key)
	t.Setenv("FABRIC_SUPERVISOR_TEST_KEY", key)
}

// startTurn invokes agent through fabric-agent-ctl's socket in the
// background; the channel gets its response (a client failure as an error
// response).
func startTurn(socket, agent, input string) <-chan *agentctl.Response {
	turn := make(chan *agentctl.Response, 1)
	go func() {
		c := &agentctl.Client{Socket: socket}
		r, err := c.Do(context.Background(), invokeReq(agent, input))
		if err != nil {
			r = &agentctl.Response{Error: &agentctl.Error{Code: "client", Message: err.Error()}}
		}
		turn <- r
	}()
	return turn
}
