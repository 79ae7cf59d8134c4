package telemetry

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/google/go-cmp/cmp"
)

// With nothing configured telemetry is off, and every call is a no-op
// that allocates nothing.
func TestDisabledIsANoOp(t *testing.T) {
	ctx := context.Background()
	for name, env := range map[string]map[string]string{
		"unset":        nil,
		"unrelated":    {"PATH": "/bin", "OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_HEADERS": "a=b"},
		"sdk disabled": {"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"},
		"none":         {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"},
		"unsupported":  {"OTEL_TRACES_EXPORTER": "zipkin", "OTEL_METRICS_EXPORTER": "prometheus"},
	} {
		t.Run(name, func(t *testing.T) {
			var lookup func(string) (string, bool)
			if env != nil {
				lookup = envOf(env)
			}
			tel, err := New(ctx, Options{LookupEnv: lookup})
			if err != nil {
				t.Fatal(err)
			}
			if tel.Enabled() || tel.TracingEnabled() {
				t.Fatal("telemetry is enabled")
			}
			checkNoOp(t, tel)
			if err := tel.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("nil", func(t *testing.T) {
		var tel *Telemetry
		checkNoOp(t, tel)
		if tel.Enabled() || tel.Shutdown(ctx) != nil || tel.ForceFlush(ctx) != nil {
			t.Fatal("nil Telemetry misbehaves")
		}
		checkNoOp(t, Disabled())
	})
}

func checkNoOp(t *testing.T, tel *Telemetry) {
	t.Helper()
	ctx := context.Background()
	ev := contract.FabricEvent{Kind: "tool_call", Metadata: map[string]any{"item_id": "x"}}
	res := &contract.RunResult{Status: contract.StatusSucceeded}
	allocs := testing.AllocsPerRun(100, func() {
		c, end := tel.Plan(ctx, "a")
		end(nil)
		c, end = tel.RuntimeStart(c, handle)
		end(nil)
		c, inv := tel.Invocation(c, info())
		inv.Event(ev)
		inv.End(res, nil)
		_, end = tel.RuntimeStop(c, handle)
		end(nil)
		tel.RecordDrops(5)
		if c != ctx {
			t.Fatal("a disabled Telemetry changed the context")
		}
	})
	if allocs != 0 {
		t.Errorf("disabled telemetry allocates %v times per invocation", allocs)
	}
	if _, inv := tel.Invocation(ctx, info()); inv != nil {
		t.Error("disabled Invocation returned a span")
	}
}

func TestReadSettings(t *testing.T) {
	tests := []struct {
		name            string
		env             map[string]string
		traces, metrics exporterSettings
		warn            string
		resource        map[string]string
		checkBSP        *bspSettings
		temporality     string
		interval        time.Duration
	}{
		{
			name:    "generic endpoint gets signal paths",
			env:     map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/base/"},
			traces:  exporterSettings{enabled: true, protocol: protoHTTPProtobuf, endpoint: "http://collector:4318/base/v1/traces", headers: map[string]string{}, timeout: 10 * time.Second},
			metrics: exporterSettings{enabled: true, protocol: protoHTTPProtobuf, endpoint: "http://collector:4318/base/v1/metrics", headers: map[string]string{}, timeout: 10 * time.Second},
		},
		{
			name: "per-signal endpoint is used as is; only that signal is on",
			env: map[string]string{
				"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://traces.example/custom",
				"OTEL_EXPORTER_OTLP_HEADERS":         "authorization=Bearer%20abc, x-tenant = t1",
				"OTEL_EXPORTER_OTLP_TRACES_HEADERS":  "x-tenant=t2",
				"OTEL_EXPORTER_OTLP_TIMEOUT":         "2500",
				"OTEL_EXPORTER_OTLP_COMPRESSION":     "gzip",
			},
			traces: exporterSettings{enabled: true, protocol: protoHTTPProtobuf, endpoint: "https://traces.example/custom",
				headers: map[string]string{"authorization": "Bearer abc", "x-tenant": "t2"}, timeout: 2500 * time.Millisecond, gzip: true},
		},
		{
			name:    "explicit exporter with no endpoint uses the default",
			env:     map[string]string{"OTEL_TRACES_EXPORTER": "otlp"},
			traces:  exporterSettings{enabled: true, protocol: protoHTTPProtobuf, endpoint: "http://localhost:4318/v1/traces", headers: map[string]string{}, timeout: 10 * time.Second},
			metrics: exporterSettings{},
		},
		{
			name: "grpc",
			env: map[string]string{
				"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_INSECURE": "true",
				"OTEL_METRICS_EXPORTER": "none",
			},
			traces: exporterSettings{enabled: true, protocol: protoGRPC, endpoint: "http://collector:4317", headers: map[string]string{}, timeout: 10 * time.Second},
		},
		{
			name: "json metrics fall back to protobuf; unknown names warn",
			env: map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
				"OTEL_TRACES_EXPORTER": "otlp,console", "OTEL_BSP_MAX_QUEUE_SIZE": "lots",
			},
			traces:  exporterSettings{enabled: true, protocol: protoHTTPJSON, endpoint: "http://c:4318/v1/traces", headers: map[string]string{}, timeout: 10 * time.Second},
			metrics: exporterSettings{enabled: true, protocol: protoHTTPProtobuf, endpoint: "http://c:4318/v1/metrics", headers: map[string]string{}, timeout: 10 * time.Second},
			warn:    `exporter "console" is not supported`,
		},
		{
			name: "resource, batching and metric settings",
			env: map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SERVICE_NAME": "svc",
				"OTEL_RESOURCE_ATTRIBUTES": "service.name=ignored,deployment.environment=prod%2Deu",
				"OTEL_BSP_SCHEDULE_DELAY":  "100", "OTEL_BSP_MAX_QUEUE_SIZE": "10", "OTEL_METRIC_EXPORT_INTERVAL": "1000",
				"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "Delta",
			},
			traces:      exporterSettings{enabled: true, protocol: protoHTTPProtobuf, endpoint: "http://c:4318/v1/traces", headers: map[string]string{}, timeout: 10 * time.Second},
			metrics:     exporterSettings{enabled: true, protocol: protoHTTPProtobuf, endpoint: "http://c:4318/v1/metrics", headers: map[string]string{}, timeout: 10 * time.Second},
			resource:    map[string]string{"service.name": "svc", "deployment.environment": "prod-eu"},
			checkBSP:    &bspSettings{scheduleDelay: 100 * time.Millisecond, exportTimeout: 30 * time.Second, maxQueue: 10, maxBatch: 10},
			temporality: tempDelta,
			interval:    time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := readSettings(envOf(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			opt := cmp.AllowUnexported(exporterSettings{})
			if d := cmp.Diff(tt.traces, s.traces, opt); d != "" {
				t.Errorf("traces (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.metrics, s.metrics, opt); d != "" {
				t.Errorf("metrics (-want +got):\n%s", d)
			}
			if tt.warn != "" && !strings.Contains(strings.Join(s.warnings, "\n"), tt.warn) {
				t.Errorf("warnings %q lack %q", s.warnings, tt.warn)
			}
			if tt.resource != nil {
				if d := cmp.Diff(tt.resource, s.resource); d != "" {
					t.Errorf("resource (-want +got):\n%s", d)
				}
			}
			if tt.checkBSP != nil {
				if d := cmp.Diff(*tt.checkBSP, s.bsp, cmp.AllowUnexported(bspSettings{})); d != "" {
					t.Errorf("bsp (-want +got):\n%s", d)
				}
			}
			if tt.temporality != "" && s.temporality != tt.temporality {
				t.Errorf("temporality = %q, want %q", s.temporality, tt.temporality)
			}
			if tt.interval != 0 && s.metricInterval != tt.interval {
				t.Errorf("interval = %v, want %v", s.metricInterval, tt.interval)
			}
		})
	}
}

// Configuration errors name the variable and never echo a value, which
// may be a credential.
func TestSettingErrorsDoNotEchoValues(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"bad header list":     {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "authorization " + fakeSecret},
		"bad header encoding": {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "authorization=%zz" + fakeSecret},
		"credentials in URL":  {"OTEL_EXPORTER_OTLP_ENDPOINT": "https://user:" + fakeSecret + "@c:4318"},
		"not a URL":           {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "ftp://" + fakeSecret},
		"half a client pair":  {"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4318", "OTEL_EXPORTER_OTLP_CLIENT_KEY": "/k" + fakeSecret},
	} {
		t.Run(name, func(t *testing.T) {
			var logs strings.Builder
			_, err := New(context.Background(), Options{LookupEnv: envOf(env), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), "SECRET") || strings.Contains(logs.String(), "SECRET") {
				t.Fatalf("the error or log echoes the value: %v %s", err, logs.String())
			}
			if !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_") {
				t.Errorf("the error does not name the variable: %v", err)
			}
		})
	}
}

func TestWarningsAreLogged(t *testing.T) {
	var logs strings.Builder
	tel, err := New(context.Background(), Options{
		LookupEnv: envOf(map[string]string{"OTEL_TRACES_EXPORTER": "jaeger", "OTEL_LOGS_EXPORTER": "otlp"}),
		Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if tel.Enabled() {
		t.Fatal("enabled")
	}
	for _, want := range []string{`exporter \"jaeger\" is not supported`, "OTEL_LOGS_EXPORTER"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

func TestSampler(t *testing.T) {
	for env, want := range map[string]string{
		"":                         "ParentBased{root:AlwaysOnSampler",
		"always_off":               "AlwaysOffSampler",
		"traceidratio":             "TraceIDRatioBased{1}",
		"parentbased_traceidratio": "ParentBased{root:TraceIDRatioBased{0.25}",
	} {
		r := &envReader{lookup: envOf(map[string]string{"OTEL_TRACES_SAMPLER": env, "OTEL_TRACES_SAMPLER_ARG": map[bool]string{true: "0.25"}[strings.HasPrefix(env, "parentbased")]})}
		if got := r.sampler().Description(); !strings.HasPrefix(got, want) {
			t.Errorf("OTEL_TRACES_SAMPLER=%q: %s, want prefix %s", env, got, want)
		}
	}
}
