package fabric_test

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/spanrecorder"
)

// TestTelemetrySpans: one runtime's start, invocations (plain and
// streamed) and stop as a span tree, the trace context in the host's
// environment and in the adapter's runtime context.
func TestTelemetrySpans(t *testing.T) {
	rec := spanrecorder.New()
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(t.TempDir()), fabric.WithTelemetryProviders(rec.TracerProvider(), nil))
	cfg, err := client.ParseConfig([]byte(`
schema_version: fabric.agent/v1alpha1
metadata: {name: traced}
runtime: {}
harness:
  adapter_id: fabric.scripted
  settings: {response: "tp={traceparent}", events: 2}
`), "agent.yaml", fabric.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt, err := client.StartRuntime(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	environ, _ := os.ReadFile("/proc/" + strconv.Itoa(rt.HostPid()) + "/environ")
	res, err := rt.Invoke(ctx, "hi")
	if err != nil || res.Status != "succeeded" {
		t.Fatalf("invoke: %+v %v", res, err)
	}
	s, err := rt.InvokeStream(ctx, contract.RunRequest{Input: "again"})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range s.Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
	}
	res2, _ := s.Result(ctx)
	if _, err := rt.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	spans := rec.Spans()
	byName := map[string][]spanrecorder.Span{}
	for _, sp := range spans {
		byName[sp.Name] = append(byName[sp.Name], sp)
	}
	start := byName["fabric.runtime.start"]
	if len(start) != 1 || len(byName["fabric.runtime.stop"]) != 1 || len(byName["fabric.plan"]) != 1 {
		t.Fatalf("spans %v", names(spans))
	}
	var invs []spanrecorder.Span
	for _, sp := range spans {
		if strings.HasPrefix(sp.Name, "invoke_agent") {
			invs = append(invs, sp)
		}
	}
	if len(invs) != 2 {
		t.Fatalf("invocation spans: %v", names(spans))
	}
	for i, want := range []*contract.RunResult{res, res2} {
		sp := invs[i]
		if sp.ParentID != start[0].SpanID || sp.TraceID != start[0].TraceID {
			t.Fatalf("invocation %d is not a child of the runtime start span: %+v", i, sp)
		}
		if sp.Attrs["fabric.invocation_id"] != want.InvocationID || sp.Attrs["fabric.runtime_id"] != rt.ID() {
			t.Fatalf("invocation %d attrs %v", i, sp.Attrs)
		}
		// The adapter saw this invocation's own trace context.
		if out, _ := want.Output.(string); !strings.Contains(out, "tp=00-"+sp.TraceID+"-"+sp.SpanID+"-") {
			t.Fatalf("invocation %d: adapter got %q, span %s/%s", i, out, sp.TraceID, sp.SpanID)
		}
	}
	// The host process was started inside the runtime start span.
	if !strings.Contains(string(environ), "TRACEPARENT=00-"+start[0].TraceID+"-"+start[0].SpanID+"-") {
		t.Fatal("the host's environment has no TRACEPARENT of the runtime start span")
	}
}

func names(spans []spanrecorder.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// TestRelayStreamsIntoInvocations: with telemetry.providers.relay, the
// harness's Relay posts ATOF records to Fabric's listener (the scripted
// adapter plays the Relay plugin); they arrive as events of the turn they
// belong to, in the stream and in the result, and records of no turn are
// counted, not lost silently.
func TestRelayStreamsIntoInvocations(t *testing.T) {
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(t.TempDir()))
	defer client.Shutdown(context.Background())
	cfg, err := client.ParseConfig([]byte(`
schema_version: fabric.agent/v1alpha1
metadata: {name: relayed}
runtime: {}
telemetry:
  providers:
    relay: {}
relay:
  observability:
    atof:
      enabled: true
      sinks: [{type: file, name: keep-me, path: /dev/null}]
harness:
  adapter_id: fabric.scripted
  settings: {response: ok, relay_records: 5, relay_stray: 2}
`), "agent.yaml", fabric.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt, err := client.StartRuntime(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Stop(ctx)
	for turn := 1; turn <= 2; turn++ {
		s, err := rt.InvokeStream(ctx, contract.RunRequest{Input: "x"})
		if err != nil {
			t.Fatal(err)
		}
		var relayed []string
		for rec, err := range s.Records(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(rec.Event.Kind, "relay.") {
				relayed = append(relayed, rec.Event.Kind+":"+rec.Event.Message)
				if rec.Event.Metadata["request_id"] != s.RequestID() {
					t.Fatalf("record of another turn: %v", rec.Event.Metadata)
				}
			}
		}
		res, _ := s.Result(ctx)
		want := []string{"relay.scope_start:turn " + strconv.Itoa(turn)}
		for i := range 5 {
			want = append(want, "relay.mark:step "+strconv.Itoa(i))
		}
		want = append(want, "relay.scope_end:turn "+strconv.Itoa(turn))
		if strings.Join(relayed, "|") != strings.Join(want, "|") {
			t.Fatalf("turn %d relayed %v, want %v", turn, relayed, want)
		}
		stats := mustJSONMap(t, res.Metadata["relay"])
		if stats["correlated"] != float64(7) || stats["uncorrelated"] != float64(2) || stats["dropped"] != float64(0) {
			t.Fatalf("turn %d relay stats %v", turn, stats)
		}
	}
}

func mustJSONMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
