package clientopts_test

import (
	"context"
	"testing"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/internal/clientopts"
)

// BenchmarkPlanPackage is the plan of a config naming harness.package
// (the built-in catalog's default for the scripted package) against the
// same config without it, in a long-lived client of Fabric's binaries:
// the difference is what package selection adds to a plan once the
// catalog is loaded (budget: 2 ms).
func BenchmarkPlanPackage(b *testing.B) {
	for _, bc := range []struct{ name, harness string }{
		{"without", "{adapter_id: fabric.scripted, settings: {response: ok}}"},
		{"selected", "{adapter_id: fabric.scripted, package: fabric.scripted, settings: {response: ok}}"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.Setenv("XDG_STATE_HOME", b.TempDir())
			b.Setenv("FABRIC_DATA_HOME", b.TempDir())
			c := fabric.New(clientopts.With(func(k string) string { return "" }, fabric.WithStateDir(b.TempDir()))...)
			l, err := c.ParseConfig([]byte("schema_version: fabric.agent/v1alpha1\nmetadata: {name: bench}\nruntime: {}\nharness: "+bc.harness+"\n"), "bench.yaml", fabric.LoadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			l.BaseDir = b.TempDir()
			ctx := context.Background()
			p, err := c.Plan(ctx, l) // loads the catalog once
			if err != nil {
				b.Fatal(err)
			}
			if (p.Package != nil) != (bc.name == "selected") {
				b.Fatalf("plan package %+v", p.Package)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Plan(ctx, l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
