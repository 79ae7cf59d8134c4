//go:build linux

package deploy_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDeployServices: a supervised integration service (here fabric's own
// scripted endpoint stands in for an HTTP MCP server: the supervisor only
// needs its port) is restarted per its policy when killed, keeping the
// agents; a service that cannot start leaves the healthy agents running,
// apply says degraded and names the recovery action, and a retry after
// the fix reuses what exists.
func TestDeployServices(t *testing.T) {
	w := newWorld(t)
	port, badPort := freePort(t), freePort(t)
	doc := func(badCommand string) string {
		return fmt.Sprintf(`schema_version: fabric.deployment/v1alpha1
metadata: {name: svc, uid: 2b3c4d5e-6f70-4182-9a3b-4c5d6e7f8091}
spec:
  supervisor: {kind: process}
  integrations:
    tools: {kind: mcpServer, transport: http, run: {command: [fabric, model, serve, --addr, "127.0.0.1:%d", --quiet], port: %d, restart: {policy: on-failure, max: 2, backoff_seconds: [0.05, 0.1]}}}
    broken: {kind: mcpServer, transport: http, run: {command: [%s, model, serve, --addr, "127.0.0.1:%d", --quiet], port: %d}}
  sandboxes:
    - name: main
      agents:
        - name: user
          integrationRefs: [tools, broken]
          fabric: {schema_version: fabric.agent/v1alpha1, metadata: {name: u}, runtime: {}, harness: {adapter_id: fabric.scripted}}
`, port, port, badCommand, badPort, badPort)
	}
	file := w.write("deploy.yaml", doc("fabric-no-such-command"))
	var ar applyResult
	w.deploy(1, &ar, "apply", file)
	if ar.Outcome != "degraded" || !strings.Contains(strings.Join(ar.Recovery, "\n"), "integration/broken") {
		t.Fatalf("apply with a service that cannot start: %+v", ar)
	}
	var st status
	w.deploy(0, &st, "status", file)
	state, userID, _, _ := st.agent("user")
	if state != "running" {
		t.Fatalf("the agent beside a failed service is %s, want running", state)
	}
	svcPid := 0
	for _, s := range st.Status.Services {
		if s.ID == "integration/tools" {
			svcPid = s.Pid
		}
	}
	if svcPid == 0 {
		t.Fatalf("no pid for the healthy service: %+v", st.Status.Services)
	}
	// kill -9 of the service: restarted (new pid), the agent untouched.
	if err := syscall.Kill(svcPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		w.deploy(0, &st, "status", file)
		pid, state := 0, ""
		for _, s := range st.Status.Services {
			if s.ID == "integration/tools" {
				pid, state = s.Pid, s.State
			}
		}
		if state == "running" && pid != 0 && pid != svcPid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed service was not restarted: %+v", st.Status.Services)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, id, _, _ := st.agent("user"); id != userID {
		t.Fatal("restarting a service replaced the agent")
	}
	// Fix the broken command: the retry starts it and reuses the rest.
	w.write("deploy.yaml", doc("fabric"))
	w.deploy(0, &ar, "apply", file)
	if ar.Outcome != "succeeded" || ar.action("integration/tools") != "noop" || ar.action("integration/broken") == "noop" {
		t.Fatalf("the retry after the fix: %+v", ar)
	}
	w.deploy(0, nil, "destroy", file)
}
