//go:build linux

package deploy_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestDeployExternalSupervisor: with supervisor.kind external, apply
// reconciles through the operator's supervisor at the declared socket
// and starts none of its own; destroy removes the agents and leaves the
// operator's supervisor running.
func TestDeployExternalSupervisor(t *testing.T) {
	w := newWorld(t)
	supDir := filepath.Join(w.dir, "operator")
	socket := filepath.Join(supDir, "ops.sock")
	file := w.write("deploy.yaml", fmt.Sprintf(`schema_version: fabric.deployment/v1alpha1
metadata: {name: ext, uid: 4d5e6f70-8192-4a3b-9c4d-5e6f708192a3}
spec:
  supervisor: {kind: external, socket: %q}
  sandboxes:
    - name: main
      agents:
        - name: one
          fabric: {schema_version: fabric.agent/v1alpha1, metadata: {name: o}, runtime: {}, harness: {adapter_id: fabric.scripted}}
`, socket))
	// No supervisor yet: apply refuses and starts none.
	w.deploy(1, nil, "apply", file)
	serve := exec.Command(filepath.Join(bins, "fabric"), "serve", "--state-dir", supDir, "--socket", socket)
	serve.Env = w.env
	serve.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := os.MkdirAll(supDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Kill(); _ = serve.Wait() })
	for deadline := time.Now().Add(15 * time.Second); ; {
		if _, err := os.Stat(socket); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the operator's supervisor did not come up")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var ar applyResult
	w.deploy(0, &ar, "apply", file)
	if ar.Outcome != "succeeded" || ar.Supervisor.Pid != 0 || ar.Connection.Socket != socket {
		t.Fatalf("apply through the external supervisor: %+v", ar)
	}
	var st status
	w.deploy(0, &st, "status", file)
	if state, _, _, _ := st.agent("one"); state != "running" || st.Status.Supervisor.Pid != serve.Process.Pid {
		t.Fatalf("status: %+v", st.Status)
	}
	var dr struct{ Outcome string }
	w.deploy(0, &dr, "destroy", file)
	w.deploy(0, &st, "status", file)
	if st.Status == nil || len(st.Status.Agents) != 0 {
		t.Fatalf("after destroy the operator's supervisor still has %+v", st.Status)
	}
	if err := serve.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatal("destroy stopped the operator's supervisor")
	}
}
