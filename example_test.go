package fabric_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/otlp"
)

// TestMain lets runtimes of bundled adapters re-execute this test binary
// as their host.
func TestMain(m *testing.M) {
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

const exampleConfig = `
schema_version: fabric.agent/v1alpha1
metadata: {name: example}
runtime: {}
harness:
  adapter_id: fabric.scripted
  settings:
    response: "turn {turn}: {input}"
`

func Example() {
	// The scripted adapter is a bundled one: the client opts into them
	// (and TestMain, this program's main, serves their hosts).
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()))
	cfg, err := client.ParseConfig([]byte(exampleConfig), "agent.yaml", fabric.LoadOptions{})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	rt, err := client.StartRuntime(ctx, cfg)
	if err != nil {
		panic(err)
	}
	defer rt.Stop(ctx)
	for _, input := range []string{"hello", "again"} {
		res, err := rt.Invoke(ctx, input)
		if err != nil {
			panic(err)
		}
		fmt.Println(res.Status, res.Output)
	}
	// Output:
	// succeeded turn 1: hello
	// succeeded turn 2: again
}

// A client that exports to the OTLP collector the OTEL_* variables name,
// as Fabric's binaries do; without the option the program links no
// exporter.
func ExampleWithOTLPExporters() {
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithOTLPExporters(otlp.Exporters{}))
	defer client.Shutdown(context.Background()) // flushes what was recorded
}

func TestRunStopsTheRuntime(t *testing.T) {
	dir := t.TempDir()
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(dir))
	cfg, err := client.ParseConfig([]byte(exampleConfig), "agent.yaml", fabric.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Run(context.Background(), cfg, "once")
	if err != nil || res.Status != "succeeded" || res.Output != "turn 1: once" {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("runtime home left: %v", entries)
	}
}

func TestPublicErrorsUsableWithErrorsAs(t *testing.T) {
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()))
	path := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(path, []byte("schema_version: fabric.agent/v1alpha1\nmetadata: {name: x}\nruntime: {max_turns: 2}\nharness: {adapter_id: fabric.scripted.v1, settings: {mode: nope}}\n"), 0o644)
	_, err := client.PlanFile(context.Background(), path, fabric.LoadOptions{})
	var ce *fabric.ConfigError
	if !errors.As(err, &ce) || ce.Code != "invalid_settings" || ce.Path != "harness.settings.mode" {
		t.Fatalf("err = %v", err)
	}
	if info := fabric.ErrorInfo(err); info == nil || info.Stage != "plan" {
		t.Fatalf("info = %+v", info)
	}
}

// TestStartPlanWithoutDescriptor: a plan with no adapter descriptor is an
// invalid_plan *ConfigError, with or without a service (it panicked while
// the SDK built the runtime's handle itself).
func TestStartPlanWithoutDescriptor(t *testing.T) {
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(t.TempDir()))
	for _, p := range []*contract.RunPlan{nil, {}} {
		_, err := client.StartPlan(context.Background(), p)
		var ce *fabric.ConfigError
		if !errors.As(err, &ce) || ce.Code != "invalid_plan" || ce.Stage != "start" {
			t.Fatalf("plan %v: err = %v", p, err)
		}
	}
}
