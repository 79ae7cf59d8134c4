package fabric

import (
	"context"
	"testing"
)

// BenchmarkPlan is the planning every StartRuntime does: descriptor
// discovery (the bundled descriptors included) and resolution.
func BenchmarkPlan(b *testing.B) {
	c := New(WithStateDir(b.TempDir()))
	l, err := c.ParseConfig([]byte("schema_version: fabric.agent/v1alpha1\nmetadata: {name: bench}\nruntime: {}\nharness: {adapter_id: fabric.scripted, settings: {response: ok}}\n"), "bench.yaml", LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	l.BaseDir = b.TempDir()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Plan(ctx, l); err != nil {
			b.Fatal(err)
		}
	}
}
