//go:build linux

package deploy_test

import (
	"fmt"
	"strings"
	"testing"
)

// Benchmarks of DESIGN.md section 5 (issue 11 acceptance 8), driving the
// built binaries as the end-to-end tests do. bench/deploy/run.sh prints
// them with medians beside fabric-agent-ctl serve driving the same runtimes.

// scriptedDeployment is a document of n scripted agents with inline configs.
func scriptedDeployment(name string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version: fabric.deployment/v1alpha1\nmetadata: {name: %s, uid: 3c9a7e21-5d4b-4f6a-8b1c-%012d}\n", name, n)
	b.WriteString("spec:\n  supervisor: {kind: process}\n  sandboxes:\n    - name: main\n      agents:\n")
	for i := range n {
		fmt.Fprintf(&b, `        - name: a%[1]d
          fabric:
            schema_version: fabric.agent/v1alpha1
            metadata: {name: a%[1]d}
            runtime: {}
            harness: {adapter_id: fabric.scripted, settings: {response: ok}}
`, i+1)
	}
	return b.String()
}

// applyAll applies file and fails unless every change has action want.
func applyAll(b *testing.B, w *world, file, want string, n int) {
	var ar applyResult
	w.deploy(0, &ar, "apply", file)
	if ar.Outcome != "succeeded" || len(ar.Changes) != n {
		b.Fatalf("apply: outcome %s with %d changes, want succeeded with %d", ar.Outcome, len(ar.Changes), n)
	}
	for _, c := range ar.Changes {
		if c.Action != want {
			b.Fatalf("apply: %s %s (%s), want %s", c.Resource, c.Action, c.Reason, want)
		}
	}
}

// destroyAll destroys the deployment and checks its supervisor is gone.
func destroyAll(b *testing.B, w *world, file string) {
	var dr struct{ Outcome string }
	w.deploy(0, &dr, "destroy", file)
	if dr.Outcome != "destroyed" {
		b.Fatalf("destroy: %s", dr.Outcome)
	}
}

// BenchmarkApplyUnchanged10 is an unchanged `fabric deploy apply` of 10
// scripted agents, a whole process each (target <= 200 ms).
func BenchmarkApplyUnchanged10(b *testing.B) {
	const n = 10
	w := newWorld(b)
	file := w.write("deploy.yaml", scriptedDeployment("unchanged", n))
	applyAll(b, w, file, "create", n)
	b.Cleanup(func() { destroyAll(b, w, file) })
	for b.Loop() {
		applyAll(b, w, file, "noop", n)
	}
}

// BenchmarkApplyFromEmpty100 is `fabric deploy apply` of 100 scripted
// agents from empty (the supervisor's start included; target <= 10 s on 2
// cores); each iteration destroys what it made, untimed.
func BenchmarkApplyFromEmpty100(b *testing.B) {
	const n = 100
	w := newWorld(b)
	file := w.write("deploy.yaml", scriptedDeployment("empty", n))
	for b.Loop() {
		applyAll(b, w, file, "create", n)
		b.StopTimer()
		destroyAll(b, w, file)
		b.StartTimer()
	}
}
