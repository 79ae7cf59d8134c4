package batch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/batch"
)

// BenchmarkTrial compares one trial of a batch (workspace, run, grade,
// records) with a bare Client.Run of the same config, one at a time: the
// difference is the batch's overhead per trial (budget 5 ms).
func BenchmarkTrial(b *testing.B) {
	dir := b.TempDir()
	cfg := scriptedConfig("answer: {input}", "")
	if err := os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
	opts := []fabric.Option{fabric.WithStateDir(b.TempDir())}
	if h := os.Getenv("FABRIC_TEST_HOST"); h != "" {
		opts = append(opts, fabric.WithHostBinary(h)) // bench/run.sh: bin/fabric-host
	}
	client := fabric.New(opts...)
	b.Run("bare", func(b *testing.B) {
		l, err := client.LoadConfig(filepath.Join(dir, "agent.yaml"), fabric.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			lc := *l
			lc.Config.Environment = nil
			res, err := client.Run(context.Background(), &lc, "hello")
			if err != nil || res.Status != "succeeded" {
				b.Fatalf("%v %+v", err, res)
			}
		}
	})
	b.Run("batch", func(b *testing.B) {
		var sb strings.Builder
		sb.WriteString("schema_version: fabric.batch/v1alpha1\nmetadata: {name: bench}\ntasks:\n  items:\n")
		for i := range b.N {
			fmt.Fprintf(&sb, "    - {id: t%06d, input: {text: hello}}\n", i)
		}
		sb.WriteString("configs: [{id: a, config: agent.yaml}]\ngrader: {kind: output_match, match: {contains: hello}}\nlimits: {concurrency: 1}\n")
		run := b.TempDir()
		spec := filepath.Join(run, "batch.yaml")
		if err := os.WriteFile(spec, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(dir, "agent.yaml"), filepath.Join(run, "agent.yaml")); err != nil {
			b.Fatal(err)
		}
		s, err := batch.Load(spec)
		if err != nil {
			b.Fatal(err)
		}
		r, err := batch.Open(context.Background(), s, filepath.Join(run, "out"), batch.Options{Client: client})
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		b.ResetTimer()
		st, err := r.Run(context.Background(), batch.RunOptions{})
		b.StopTimer()
		if err != nil || st.Outcomes["passed"] != b.N {
			b.Fatalf("%v %+v", err, st)
		}
	})
}
