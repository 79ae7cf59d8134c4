//go:build linux

package deploy_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
)

// gatewayDoc is a deployment of agents (YAML list items) attached to one
// access gateway with client app.
func gatewayDoc(name, uid, agents string) string {
	return `schema_version: fabric.deployment/v1alpha1
metadata: {name: ` + name + `, uid: ` + uid + `}
spec:
  supervisor: {kind: process}
  integrations:
    gateway: {kind: access, clients: [app]}
  sandboxes:
    - name: main
      agents:
` + agents
}

// onDemandDoc: an on_demand agent that stops after a second idle, and an
// on_demand agent whose start fails.
var onDemandDoc = gatewayDoc("lazy", "9c8b7a69-5d4e-4f3a-8b2c-1d0e9f8a7b6c", `        - name: sleepy
          start: on_demand
          idle_stop_seconds: 1
          integrationRefs: [gateway]
          fabric: {schema_version: fabric.agent/v1alpha1, metadata: {name: s}, runtime: {}, harness: {adapter_id: fabric.scripted, settings: {response: "turn {turn}: {input}", delay_ms: 300}}}
        - name: broken
          start: on_demand
          restart: {policy: never}
          integrationRefs: [gateway]
          fabric: {schema_version: fabric.agent/v1alpha1, metadata: {name: b}, runtime: {}, harness: {adapter_id: fabric.scripted, settings: {mode: start_failure}}}
`)

type grantOut struct {
	KeyID string `json:"key_id"`
	Token string `json:"token"`
	URL   string `json:"url"`
}

func (w *world) grant(file, agent, client string) grantOut {
	w.t.Helper()
	var g grantOut
	o, e, code := w.run(time.Minute, "fabric", "deploy", "access", "grant", file, "--integration", "gateway", "--agent", agent, "--client", client)
	if code != 0 || json.Unmarshal(o, &g) != nil || g.Token == "" {
		w.t.Fatalf("grant: exit %d\n%s\n%s", code, o, e)
	}
	harnessui.RecordForAudit(g.Token)
	return g
}

// postResponse posts one response request (extra headers as name, value
// pairs) and returns the status code and the decoded body.
func postResponse(t testing.TB, g grantOut, body string, headers ...string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", g.URL+"/responses", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+g.Token)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

// respond posts one non-streaming turn.
func respond(t testing.TB, g grantOut, model, input string) (int, map[string]any) {
	return postResponse(t, g, `{"model":"`+model+`","input":"`+input+`"}`)
}

func outputText(m map[string]any) string {
	var b strings.Builder
	out, _ := m["output"].([]any)
	for _, it := range out {
		content, _ := it.(map[string]any)["content"].([]any)
		for _, c := range content {
			if s, ok := c.(map[string]any)["text"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

// TestDeployOnDemand: an on_demand agent has no runtime after apply; the
// first gateway request starts one (concurrent requests never start two),
// it stops when idle and the next request starts a new one; a start that
// fails ends the request failed with the start error.
func TestDeployOnDemand(t *testing.T) {
	w := newWorld(t)
	file := w.write("deploy.yaml", onDemandDoc)
	var ar applyResult
	w.deploy(0, &ar, "apply", file)
	if ar.Outcome != "succeeded" {
		t.Fatalf("apply: %+v", ar)
	}
	var st status
	w.deploy(0, &st, "status", file)
	if state, id, _, _ := st.agent("sleepy"); state != "on_demand" || id != "" {
		t.Fatalf("sleepy after apply: %s %s, want on_demand without a runtime", state, id)
	}
	g := w.grant(file, "sleepy", "app")

	// Two requests at once: one runtime starts; one turn runs, the other
	// request is refused as busy (never a second runtime or turn).
	var wg sync.WaitGroup
	codes := make([]int, 2)
	texts := make([]string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, m := respond(t, g, "sleepy", "hello")
			codes[i], texts[i] = code, outputText(m)
		}()
	}
	wg.Wait()
	ok := 0
	for i := range 2 {
		if codes[i] == 200 && texts[i] == "turn 1: hello" {
			ok++
		}
	}
	if ok < 1 {
		t.Fatalf("the on_demand start answered no request: codes %v texts %q", codes, texts)
	}
	w.deploy(0, &st, "status", file)
	state, first, _, _ := st.agent("sleepy")
	if state != "running" || first == "" {
		t.Fatalf("sleepy after its first request: %s %q", state, first)
	}
	// One runtime was started for both requests. Counted from the agent's
	// events, which outlive the runtime: its idle stop (1 s) may already
	// have come on a loaded machine.
	var evs struct {
		Status struct {
			Agents []struct {
				Name   string `json:"name"`
				Events []struct {
					Kind string `json:"kind"`
				} `json:"events"`
			} `json:"agents"`
		} `json:"status"`
	}
	w.deploy(0, &evs, "status", file)
	starts := 0
	for _, a := range evs.Status.Agents {
		for _, e := range a.Events {
			if a.Name == "sleepy" && e.Kind == "runtime_started" {
				starts++
			}
		}
	}
	if starts != 1 {
		t.Fatalf("sleepy's runtime was started %d times for two concurrent requests, want 1", starts)
	}

	// Idle for its second: stopped; the next request starts a new runtime.
	deadline := time.Now().Add(15 * time.Second)
	for {
		w.deploy(0, &st, "status", file)
		if s, id, _, _ := st.agent("sleepy"); s == "on_demand" && id == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sleepy was not stopped when idle: %s", w.deploy(0, nil, "status", file))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A background request while the runtime starts is queued, then runs.
	_, queued := postResponse(t, g, `{"model":"sleepy","input":"back","background":true}`)
	if queued["status"] != "queued" {
		t.Fatalf("a request starting the runtime answered %v, want status queued", queued)
	}
	id, _ := queued["id"].(string)
	var m map[string]any
	for deadline := time.Now().Add(20 * time.Second); ; {
		m = get(t, g, id)
		if m["status"] == "completed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if outputText(m) != "turn 1: back" {
		t.Fatalf("after the idle stop: %v", m)
	}
	w.deploy(0, &st, "status", file)
	if _, id, _, _ := st.agent("sleepy"); id == "" || id == first {
		t.Fatalf("the request after the idle stop ran on runtime %q (first was %q)", id, first)
	}

	// A start that fails: the response is failed with the start error.
	gb := w.grant(file, "broken", "app")
	code, m := respond(t, gb, "broken", "x")
	errObj, _ := m["error"].(map[string]any)
	if m["status"] != "failed" || errObj["code"] != "agent_start_failed" {
		t.Fatalf("a failed on-demand start answered %d %v", code, m)
	}
	w.deploy(0, nil, "destroy", file)
}
