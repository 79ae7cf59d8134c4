package fabric_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	fabric "github.com/fabric-runtime/fabric"
)

// TestMain lets runtimes of bundled adapters re-execute this test binary
// as their host.
func TestMain(m *testing.M) {
	if served, code := fabric.ServeBuiltinHost(); served {
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
	client := fabric.New()
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

func TestRunStopsTheRuntime(t *testing.T) {
	dir := t.TempDir()
	client := fabric.New(fabric.WithStateDir(dir))
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
	client := fabric.New()
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
