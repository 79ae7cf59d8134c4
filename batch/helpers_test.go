package batch_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/batch"
	"github.com/fabric-runtime/fabric/contract"
)

// files writes name -> content under dir (parents made).
func files(t *testing.T, dir string, fs map[string]string) {
	t.Helper()
	for name, content := range fs {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// scriptedConfig is a fabric.scripted agent config answering response.
func scriptedConfig(response string, extra string) string {
	return `schema_version: fabric.agent/v1alpha1
metadata: {name: scripted-batch}
runtime: {timeout_seconds: 60}
harness:
  adapter_id: fabric.scripted
  settings:
    response: "` + response + `"
` + extra
}

// open loads spec and opens dir with a fresh client.
func open(t *testing.T, spec, dir string, opts batch.Options) *batch.Runner {
	t.Helper()
	s, err := batch.Load(spec)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if opts.Client == nil {
		opts.Client = fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(t.TempDir()))
	}
	r, err := batch.Open(context.Background(), s, dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// outcomes counts records by outcome.
func outcomes(t *testing.T, r *batch.Runner) map[string]int {
	t.Helper()
	recs, err := r.Records()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, rec := range recs {
		out[rec.Outcome]++
	}
	return out
}

var _ = contract.TrialPassed

// batchOptions are the options of a test runner.
func batchOptions() batch.Options { return batch.Options{} }
