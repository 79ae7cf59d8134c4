//go:build linux

package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/modelproxy"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

// crashDoc is a deployment of three scripted agents: one restarted on
// failure, one never restarted, and one that holds a direct (unbrokered)
// model credential from the environment, which a restarted supervisor
// cannot recover.
func crashDoc(credEnv string) string {
	agent := func(name, restart, extra, settings string) string {
		return fmt.Sprintf(`        - name: %s
          restart: %s%s
          fabric:
            schema_version: fabric.agent/v1alpha1
            metadata: {name: x}
            runtime: {}
            harness: {adapter_id: fabric.scripted, settings: {response: "%s turn {turn}: {input}"%s}}
`, name, restart, extra, name, settings)
	}
	return `schema_version: fabric.deployment/v1alpha1
metadata: {name: crash, uid: 7d2f9c10-5b4e-4a61-8c3d-2e1f0a9b8c7d}
spec:
  supervisor: {kind: process}
  integrations:
    upstream: {kind: inference, api: openai-chat-completions, base_url: "http://127.0.0.1:9/v1", model: m, credential: {env: ` + credEnv + `}}
  sandboxes:
    - name: main
      agents:
` + agent("steady", "{policy: on-failure, max: 3, backoff_seconds: [0.05, 0.2]}", "", ", delay_ms: 60000") +
		agent("fragile", "{policy: never}", "", "") +
		agent("keyed", "{policy: on-failure}", "\n          integrationRefs: [upstream]", "")
}

// TestDeployCrashes is acceptance 3 and 4: a killed agent host is
// restarted per policy (a new runtime id, counted, the running turn not
// replayed), a never-restarted one shows as drift until apply repairs it,
// and a killed supervisor is reported and brought back by apply, with an
// agent whose env credential was lost blocked until apply hands it over.
func TestDeployCrashes(t *testing.T) {
	const credEnv = "FABRIC_E2E_DIRECT_KEY"
	cred := fmt.Sprintf("sk-e2e-direct-%d", time.Now().UnixNano())
	modelproxy.RecordForAudit(cred)
	w := newWorld(t, credEnv+"="+cred)
	file := w.write("deploy.yaml", crashDoc(credEnv))
	var ar applyResult
	w.deploy(0, &ar, "apply", file)
	socket := ar.Connection.Socket
	var st status
	w.deploy(0, &st, "status", file)
	_, steadyID, steadyPid, _ := st.agent("steady")
	_, _, fragilePid, _ := st.agent("fragile")

	// A turn is running on steady (its turns take a minute) when its host
	// is killed: the client gets a failure, and the turn is not replayed
	// on the new runtime.
	cmd := exec.Command(filepath.Join(bins, "fabric-agent-ctl"), "--socket", socket, "invoke", "--agent", "steady", "--input", "in flight")
	cmd.Env = w.env
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitBusy(t, w, socket, "steady")
	if err := syscall.Kill(steadyPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(out.String(), `"failed"`) {
		t.Fatalf("the turn in flight when its host died: %v\n%s", err, out.String())
	}
	if err := syscall.Kill(fragilePid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// steady comes back with a new runtime id and one restart counted.
	deadline := time.Now().Add(20 * time.Second)
	for {
		w.deploy(0, &st, "status", file)
		state, id, _, restarts := st.agent("steady")
		if state == "running" && id != steadyID && restarts == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("steady was not restarted: state %s id %s restarts %d", state, id, restarts)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var ctlStatus struct {
		Runtimes []struct {
			AgentName   string `json:"agent_name"`
			Invocations int    `json:"invocations"`
		} `json:"runtimes"`
	}
	w.ctl(socket, &ctlStatus, "status", "--agent", "steady")
	if len(ctlStatus.Runtimes) != 1 || ctlStatus.Runtimes[0].Invocations != 0 {
		t.Fatalf("the restarted runtime took invocations %+v: the turn in flight was replayed", ctlStatus.Runtimes)
	}
	// fragile (policy never) stays failed: status shows the drift; apply
	// repairs only it.
	w.deploy(0, &st, "status", file)
	if state, _, _, _ := st.agent("fragile"); state != "failed" {
		t.Fatalf("fragile = %s, want failed", state)
	}
	if !hasDrift(&st, "agent/fragile") || hasDrift(&st, "agent/steady") {
		t.Fatalf("drift = %+v, want agent/fragile only", st.Drift)
	}
	w.deploy(0, &ar, "apply", file)
	if ar.action("agent/fragile") != "replace" || ar.action("agent/steady") != "noop" || ar.action("agent/keyed") != "noop" {
		t.Fatalf("repairing apply: %+v", ar.Changes)
	}

	// kill -9 of the supervisor: status says so; its agents' hosts go with
	// it (parent-death signal).
	supPid := ar.Supervisor.Pid
	w.deploy(0, &st, "status", file)
	var hosts []int
	for _, a := range st.Status.Agents {
		hosts = append(hosts, a.HostPid)
	}
	if err := syscall.Kill(supPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, supPid)
	for _, h := range hosts {
		waitGone(t, h)
	}
	w.deploy(0, &st, "status", file)
	if st.Supervisor.State != "not_running" || len(st.Drift) != 3 {
		t.Fatalf("status after the supervisor was killed: %+v", st)
	}
	// A supervisor started without apply's credentials (as after a crash
	// and a restart by an operator, or systemd) brings back what it can
	// and blocks the agent whose env credential is gone.
	stateDir := filepath.Join(w.dir, ".fabric", "crash")
	serve := exec.Command(filepath.Join(bins, "fabric"), "serve", "--state-dir", stateDir)
	serve.Env = withoutEnv(w.env, credEnv)
	serve.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	logf, err := os.Create(filepath.Join(w.dir, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	serve.Stdout, serve.Stderr = logf, logf
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Kill() })
	deadline = time.Now().Add(20 * time.Second)
	for {
		w.deploy(0, &st, "status", file)
		keyed, _, _, _ := st.agent("keyed")
		steady, _, _, _ := st.agent("steady")
		if keyed == "blocked" && steady == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a restart without credentials: %+v", st.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, a := range st.Status.Agents {
		if a.Name == "keyed" && (a.Reason != "credential_required" || !strings.Contains(a.Action, "apply")) {
			t.Fatalf("keyed = %+v, want blocked: credential_required with apply as the recovery", a)
		}
	}
	if len(st.Status.Lost) != 3 {
		t.Fatalf("lost = %v, want one line per agent", st.Status.Lost)
	}
	// The next apply hands the credential over: keyed runs, the others are
	// kept.
	w.deploy(0, &ar, "apply", file)
	if ar.action("agent/keyed") != "replace" || ar.action("agent/steady") != "noop" || ar.Outcome != "succeeded" {
		t.Fatalf("apply after the restart: %+v", ar)
	}
	// The supervisor the test started now owns the deployment (apply
	// recorded it): destroy stops it and leaves nothing.
	if ar.Supervisor.Pid != serve.Process.Pid {
		t.Fatalf("apply recorded supervisor %d, want the running one %d", ar.Supervisor.Pid, serve.Process.Pid)
	}
	// kill -9 again: this time an unchanged apply itself starts a new
	// supervisor and every agent comes back (keyed too: apply hands its
	// credential over).
	if err := serve.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = serve.Wait()
	w.deploy(0, &ar, "apply", file)
	if ar.Outcome != "succeeded" || ar.Supervisor.Pid == serve.Process.Pid {
		t.Fatalf("apply after the second kill: %+v", ar)
	}
	w.deploy(0, &st, "status", file)
	for _, name := range []string{"steady", "fragile", "keyed"} {
		if state, _, _, _ := st.agent(name); state != "running" {
			t.Fatalf("%s after apply restarted the supervisor: %s", name, state)
		}
	}
	newSup := ar.Supervisor.Pid
	var dr struct{ Outcome string }
	w.deploy(0, &dr, "destroy", file)
	waitGone(t, newSup)
	if left := testproc.Mentioning(stateDir); len(left) > 0 {
		t.Fatalf("processes of the deployment left after destroy: %v", left)
	}
	b, _ := json.Marshal(st)
	if strings.Contains(string(b), cred) {
		t.Fatal("status holds the credential")
	}
}

// waitBusy waits until the agent's runtime is running a turn.
func waitBusy(t testing.TB, w *world, socket, agent string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var st struct {
			Runtimes []struct {
				Activity string `json:"activity"`
			} `json:"runtimes"`
		}
		w.ctl(socket, &st, "status", "--agent", agent)
		if len(st.Runtimes) == 1 && st.Runtimes[0].Activity == "busy" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("agent %s never became busy", agent)
}

func hasDrift(st *status, resource string) bool {
	for _, d := range st.Drift {
		if d.Resource == resource {
			return true
		}
	}
	return false
}

func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
