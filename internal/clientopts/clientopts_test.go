package clientopts_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/internal/clientopts"
)

const config = `
schema_version: fabric.agent/v1alpha1
metadata: {name: binary}
runtime: {}
harness: {adapter_id: fabric.scripted}
`

// A binary's client plans configs of bundled adapters and exports to the
// OTLP collector the OTEL_* variables name: what the SDK links only by
// opt-in, Fabric's binaries keep.
func TestBinaryClientsHaveBundledAdaptersAndOTLP(t *testing.T) {
	var traces atomic.Int32
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/traces" {
			traces.Add(1)
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	home := t.TempDir()
	env := map[string]string{
		"HOME": home, "XDG_DATA_HOME": home,
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector.URL + "/v1/traces",
	}
	getenv := func(k string) string { return env[k] }
	client := fabric.New(clientopts.With(getenv, fabric.WithEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))...)
	cfg, err := client.ParseConfig([]byte(config), "agent.yaml", fabric.LoadOptions{BaseDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Plan(context.Background(), cfg); err != nil {
		t.Fatalf("plan of a bundled adapter: %v", err)
	}
	if err := client.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if traces.Load() == 0 {
		t.Fatal("the plan span was not exported to the OTEL_* collector")
	}
}
