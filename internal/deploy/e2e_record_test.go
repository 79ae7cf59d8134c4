//go:build linux

package deploy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/fabric-runtime/fabric/internal/deploy"
	"github.com/fabric-runtime/fabric/internal/procfs"
)

// Apply records the supervisor it starts by pid and start time, and
// destroy stops the process that record names. fabric serve replaces
// itself with fabric-serve, and during that exec /proc shows the process
// as a zombie for an instant: a start time read then was 0, the record
// never matched the supervisor again and destroy left it running
// (TestDeployCrashes failed so once). Each cycle checks the record
// against the live process, then that destroy ends it.
func TestApplyRecordsTheSupervisor(t *testing.T) {
	w := newWorld(t)
	file := w.write("deploy.yaml", `schema_version: fabric.deployment/v1alpha1
metadata: {name: record, uid: 3b8e0f52-1c7d-4e9a-b6f4-0d2c5a7e9b13}
spec:
  supervisor: {kind: process}
  sandboxes:
    - name: main
      agents:
        - name: one
          fabric:
            schema_version: fabric.agent/v1alpha1
            metadata: {name: one}
            runtime: {}
            harness: {adapter_id: fabric.scripted, settings: {response: ok}}
`)
	for cycle := range 3 {
		var ar applyResult
		w.deploy(0, &ar, "apply", file)
		if ar.Outcome != "succeeded" {
			t.Fatalf("cycle %d: apply %+v", cycle, ar)
		}
		b, err := os.ReadFile(filepath.Join(w.dir, ".fabric", "record", deploy.IntentFile))
		if err != nil {
			t.Fatal(err)
		}
		var in deploy.Intent
		if err := json.Unmarshal(b, &in); err != nil || in.Supervisor == nil {
			t.Fatalf("cycle %d: intent %s (%v)", cycle, b, err)
		}
		st, err := procfs.Default.Stat(in.Supervisor.Pid)
		if err != nil || in.Supervisor.Pid != ar.Supervisor.Pid || in.Supervisor.StartTicks == 0 || in.Supervisor.StartTicks != st.StartTime {
			t.Fatalf("cycle %d: recorded supervisor %+v, the process (pid %d) started at %d (%v)", cycle, in.Supervisor, ar.Supervisor.Pid, st.StartTime, err)
		}
		var dr struct{ Outcome string }
		w.deploy(0, &dr, "destroy", file)
		waitGone(t, in.Supervisor.Pid)
	}
}
