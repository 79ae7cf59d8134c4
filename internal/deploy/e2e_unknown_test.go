//go:build linux

package deploy_test

import (
	"encoding/json"
	"net/http"
	"syscall"
	"testing"
	"time"
)

var unknownDoc = gatewayDoc("unsure", "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b", `        - name: slow
          integrationRefs: [gateway]
          fabric: {schema_version: fabric.agent/v1alpha1, metadata: {name: s}, runtime: {}, harness: {adapter_id: fabric.scripted, settings: {response: "turn {turn}: {input}", delay_ms: 60000}}}
`)

func get(t testing.TB, g grantOut, id string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", g.URL+"/responses/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+g.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return m
}

// TestDeployAccessOutcomeUnknown is issue 12's acceptance 3 through a
// deployment: the supervisor (which hosts the gateway) is killed while an
// admitted turn runs; after apply brings it back, the turn is failed with
// outcome_unknown (Fabric's record of it died with the supervisor), it is
// never sent again (the new runtime took no invocation), the same key
// keeps returning that answer, and an operator settles it.
func TestDeployAccessOutcomeUnknown(t *testing.T) {
	w := newWorld(t)
	file := w.write("deploy.yaml", unknownDoc)
	var ar applyResult
	w.deploy(0, &ar, "apply", file)
	g := w.grant(file, "slow", "app")
	code, m := postResponse(t, g, `{"model":"slow","input":"hello","background":true}`, "Idempotency-Key", "turn-one")
	id, _ := m["id"].(string)
	if code != 200 || id == "" || (m["status"] != "queued" && m["status"] != "in_progress") {
		t.Fatalf("background admission: %d %v", code, m)
	}
	waitBusy(t, w, ar.Connection.Socket, "slow")
	if err := syscall.Kill(ar.Supervisor.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ar.Supervisor.Pid)
	w.deploy(0, &ar, "apply", file)

	// The gateway came back on the same address (the store keeps the key).
	var st status
	w.deploy(0, &st, "status", file)
	deadline := time.Now().Add(20 * time.Second)
	var got map[string]any
	for {
		got = get(t, g, id)
		if got["status"] == "failed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	errObj, _ := got["error"].(map[string]any)
	if got["status"] != "failed" || errObj["code"] != "outcome_unknown" {
		t.Fatalf("the turn cut by the supervisor's death: %v", got)
	}
	var ctl struct {
		Runtimes []struct {
			Invocations int `json:"invocations"`
		} `json:"runtimes"`
	}
	w.ctl(ar.Connection.Socket, &ctl, "status", "--agent", "slow")
	if len(ctl.Runtimes) != 1 || ctl.Runtimes[0].Invocations != 0 {
		t.Fatalf("the restarted agent took %+v invocations: the uncertain turn was sent again", ctl.Runtimes)
	}
	// The same key returns the same answer and runs nothing.
	code, again := postResponse(t, g, `{"model":"slow","input":"hello","background":true}`, "Idempotency-Key", "turn-one")
	if code != 200 || again["id"] != id || again["status"] != "failed" {
		t.Fatalf("the same Idempotency-Key after the crash: %d %v", code, again)
	}
	w.ctl(ar.Connection.Socket, &ctl, "status", "--agent", "slow")
	if ctl.Runtimes[0].Invocations != 0 {
		t.Fatal("a repeated key dispatched the uncertain turn")
	}
	// The operator settles it with what was observed.
	o, e, c := w.run(time.Minute, "fabric", "deploy", "access", "reconcile", file, "--integration", "gateway",
		"--response-id", id, "--outcome", "failed", "--evidence", "the harness never answered")
	if c != 0 {
		t.Fatalf("reconcile: exit %d\n%s\n%s", c, o, e)
	}
	settled := get(t, g, id)
	if errObj, _ := settled["error"].(map[string]any); errObj != nil && errObj["code"] == "outcome_unknown" {
		t.Fatalf("after reconcile the turn is still unknown: %v", settled)
	}
	w.deploy(0, nil, "destroy", file)
}
