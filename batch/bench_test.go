package batch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/batch"
)

// BenchmarkTrialOverhead pairs, in every iteration, a bare Client.Run of a
// config with one batch trial of the same config (Attempt: workspace, run,
// records, grade; then Commit), so that both see the same machine load. It
// reports the medians of each and of their difference, the batch's
// overhead per trial (budget 5 ms).
func BenchmarkTrialOverhead(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(scriptedConfig("answer: {input}", "")), 0o644); err != nil {
		b.Fatal(err)
	}
	opts := []fabric.Option{fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(b.TempDir())}
	if h := os.Getenv("FABRIC_TEST_HOST"); h != "" {
		opts = append(opts, fabric.WithHostBinary(h)) // bench/batch/run.sh: bin/fabric-host
	}
	client := fabric.New(opts...)
	l, err := client.LoadConfig(filepath.Join(dir, "agent.yaml"), fabric.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	const trials = 1000
	var sb strings.Builder
	sb.WriteString("schema_version: fabric.batch/v1alpha1\nmetadata: {name: bench}\ntasks:\n  items:\n")
	for i := range trials {
		fmt.Fprintf(&sb, "    - {id: t%06d, input: {text: hello}}\n", i)
	}
	sb.WriteString("configs: [{id: a, config: agent.yaml}]\ngrader: {kind: output_match, match: {contains: hello}}\n")
	if err := os.WriteFile(filepath.Join(dir, "batch.yaml"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	s, err := batch.Load(filepath.Join(dir, "batch.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	r, err := batch.Open(context.Background(), s, filepath.Join(dir, "out"), batch.Options{Client: client})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	all := r.Trials()
	var bare, trial, diff []float64
	i := 0
	for b.Loop() {
		t0 := time.Now()
		res, err := client.Run(context.Background(), l, "hello")
		if err != nil || res.Status != "succeeded" {
			b.Fatalf("%v %+v", err, res)
		}
		t1 := time.Now()
		rec := r.Attempt(context.Background(), all[i%trials], 1+i/trials, nil)
		if rec.Outcome != "passed" {
			b.Fatalf("trial: %+v", rec)
		}
		if err := r.Commit(rec); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		i++
		bare, trial = append(bare, ms(t1.Sub(t0))), append(trial, ms(t2.Sub(t1)))
		diff = append(diff, ms(t2.Sub(t1))-ms(t1.Sub(t0)))
	}
	b.ReportMetric(median(bare), "bare-ms")
	b.ReportMetric(median(trial), "trial-ms")
	b.ReportMetric(median(diff), "overhead-ms")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
