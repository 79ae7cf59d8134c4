package telemetry_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/telemetry"
	"github.com/fabric-runtime/fabric/otlp"
	"github.com/fabric-runtime/fabric/otlp/otlpgrpc"
	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP/HTTP collector on loopback: it decodes the
// protobuf export requests and keeps them.
type receiver struct {
	mu      sync.Mutex
	traces  []*colltrace.ExportTraceServiceRequest
	metrics []*collmetrics.ExportMetricsServiceRequest
	headers []http.Header
	bodies  [][]byte // decoded request bodies, to search for secrets
	errs    []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err == nil && r.Header.Get("Content-Encoding") == "gzip" {
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(body)); err == nil {
			body, err = io.ReadAll(zr)
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf" {
		rc.errs = append(rc.errs, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	rc.headers = append(rc.headers, r.Header.Clone())
	rc.bodies = append(rc.bodies, body)
	var resp proto.Message
	switch r.URL.Path {
	case "/otlp/v1/traces":
		req := &colltrace.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(body, req); err != nil {
			rc.errs = append(rc.errs, "traces: "+err.Error())
			http.Error(w, "bad protobuf", http.StatusBadRequest)
			return
		}
		rc.traces = append(rc.traces, req)
		resp = &colltrace.ExportTraceServiceResponse{}
	case "/otlp/v1/metrics":
		req := &collmetrics.ExportMetricsServiceRequest{}
		if err := proto.Unmarshal(body, req); err != nil {
			rc.errs = append(rc.errs, "metrics: "+err.Error())
			http.Error(w, "bad protobuf", http.StatusBadRequest)
			return
		}
		rc.metrics = append(rc.metrics, req)
		resp = &collmetrics.ExportMetricsServiceResponse{}
	default:
		rc.errs = append(rc.errs, "path "+r.URL.Path)
		http.NotFound(w, r)
		return
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (rc *receiver) spans() map[string]*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]*tracepb.Span{}
	for _, req := range rc.traces {
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					out[s.Name] = s
				}
			}
		}
	}
	return out
}

func protoAttr(kvs []*commonpb.KeyValue, key string) *commonpb.AnyValue {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

func resourceOf(t *testing.T, rs []*resourcepb.Resource) *resourcepb.Resource {
	t.Helper()
	if len(rs) == 0 {
		t.Fatal("no resource")
	}
	return rs[0]
}

// runScenario records one planned, started, invoked and stopped runtime.
func runScenario(t *testing.T, tel *telemetry.Telemetry) {
	t.Helper()
	ctx := context.Background()
	pctx, endPlan := tel.Plan(ctx, "demo")
	rctx, endStart := tel.RuntimeStart(pctx, telemetry.Handle)
	endStart(nil)
	_, inv := tel.Invocation(rctx, telemetry.Info())
	for _, ev := range telemetry.CodexTurn() {
		inv.Event(ev)
	}
	inv.End(&contract.RunResult{Status: contract.StatusSucceeded,
		Usage: &contract.RunUsage{InputTokens: telemetry.U64(250), OutputTokens: telemetry.U64(50)}}, nil)
	_, endStop := tel.RuntimeStop(rctx, telemetry.Handle)
	endStop(nil)
	endPlan(nil)
	tel.RecordDrops(2)
}

// A real OTLP/HTTP receiver on loopback, configured only through OTEL_*
// variables, gets the spans and metrics, the headers, the resource.
func TestOTLPHTTPExport(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()

	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":            srv.URL + "/otlp",
		"OTEL_EXPORTER_OTLP_HEADERS":             "authorization=Bearer%20" + telemetry.FakeSecret,
		"OTEL_EXPORTER_OTLP_METRICS_COMPRESSION": "gzip",
		"OTEL_SERVICE_NAME":                      "fabric-test",
		"OTEL_RESOURCE_ATTRIBUTES":               "deployment.environment=ci",
		"OTEL_BSP_SCHEDULE_DELAY":                "60000", // only Shutdown exports
		"OTEL_METRIC_EXPORT_INTERVAL":            "60000",
	}
	ctx := context.Background()
	tel, err := telemetry.New(ctx, telemetry.Options{LookupEnv: telemetry.EnvOf(env), ServiceVersion: "1.2.3", Exporters: otlp.Exporters{}})
	if err != nil {
		t.Fatal(err)
	}
	if !tel.TracingEnabled() {
		t.Fatal("tracing is off")
	}
	runScenario(t, tel)
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := tel.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if err := tel.Shutdown(sctx); err != nil {
		t.Fatal("second Shutdown:", err)
	}

	rc.mu.Lock()
	errs, nTraces, nMetrics := rc.errs, len(rc.traces), len(rc.metrics)
	rc.mu.Unlock()
	if len(errs) > 0 {
		t.Fatalf("receiver errors: %v", errs)
	}
	if nTraces == 0 || nMetrics == 0 {
		t.Fatalf("received %d trace and %d metric exports", nTraces, nMetrics)
	}

	spans := rc.spans()
	var names []string
	for n := range spans {
		names = append(names, n)
	}
	slices.Sort(names)
	if want := []string{"chat gpt-test", "execute_tool shell", "fabric.plan", "fabric.runtime.start", "fabric.runtime.stop", "invoke_agent demo"}; !slices.Equal(names, want) {
		t.Fatalf("span names = %v, want %v", names, want)
	}
	inv := spans["invoke_agent demo"]
	if v := protoAttr(inv.Attributes, "gen_ai.usage.input_tokens"); v.GetIntValue() != 250 {
		t.Errorf("input tokens = %v", v)
	}
	if v := protoAttr(inv.Attributes, "fabric.invocation_id"); v.GetStringValue() != "invocation-1" {
		t.Errorf("invocation id = %v", v)
	}
	if !bytes.Equal(spans["execute_tool shell"].ParentSpanId, inv.SpanId) {
		t.Error("the tool span is not the invocation's child")
	}
	if !bytes.Equal(inv.ParentSpanId, spans["fabric.runtime.start"].SpanId) {
		t.Error("the invocation is not the runtime start's child")
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	res := resourceOf(t, []*resourcepb.Resource{rc.traces[0].ResourceSpans[0].Resource})
	for key, want := range map[string]string{"service.name": "fabric-test", "service.version": "1.2.3", "deployment.environment": "ci", "telemetry.sdk.language": "go"} {
		if got := protoAttr(res.Attributes, key).GetStringValue(); got != want {
			t.Errorf("resource %s = %q, want %q", key, got, want)
		}
	}
	metricNames := map[string]bool{}
	for _, req := range rc.metrics {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					metricNames[m.Name] = true
				}
			}
		}
	}
	for _, want := range []string{telemetry.MetricRuntimeStarts, telemetry.MetricRuntimeStops, telemetry.MetricInvocations, telemetry.MetricInvocationDuration, telemetry.MetricTokenUsage, telemetry.MetricStreamDrops} {
		if !metricNames[want] {
			t.Errorf("metric %s not exported (got %v)", want, metricNames)
		}
	}
	gzipped := false
	for _, h := range rc.headers {
		if got := h.Get("Authorization"); got != "Bearer "+telemetry.FakeSecret {
			t.Errorf("Authorization header = %q", got)
		}
		gzipped = gzipped || h.Get("Content-Encoding") == "gzip"
	}
	if !gzipped {
		t.Error("no export was gzip-compressed")
	}
	// The header is a credential: it goes to the collector, never into data.
	for _, b := range rc.bodies {
		if bytes.Contains(b, []byte("SECRET")) {
			t.Fatal("an export body carries the planted secret")
		}
	}
}

// An unreachable collector does not fail the caller: the failure is
// logged once and Shutdown still returns.
func TestOTLPUnreachableCollector(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var logs syncBuilder
	tel, err := telemetry.New(context.Background(), telemetry.Options{Exporters: otlp.Exporters{},
		LookupEnv: telemetry.EnvOf(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://" + addr + "/v1/traces", "OTEL_EXPORTER_OTLP_TIMEOUT": "2000"}),
		Logger:    newTextLogger(&logs),
	})
	if err != nil {
		t.Fatal(err)
	}
	runScenario(t, tel)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = tel.Shutdown(ctx)
	if !strings.Contains(logs.String(), "export failed") {
		t.Errorf("the failure was not logged: %q", logs.String())
	}
}

// traceService is an OTLP/gRPC trace collector.
type traceService struct {
	colltrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (s *traceService) Export(_ context.Context, req *colltrace.ExportTraceServiceRequest) (*colltrace.ExportTraceServiceResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				s.names = append(s.names, sp.Name)
			}
		}
	}
	return &colltrace.ExportTraceServiceResponse{}, nil
}

func TestOTLPGRPCExport(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	svc := &traceService{}
	gs := grpc.NewServer()
	colltrace.RegisterTraceServiceServer(gs, svc)
	served := make(chan error, 1)
	go func() { served <- gs.Serve(ln) }()
	defer func() {
		gs.Stop()
		<-served
	}()

	tel, err := telemetry.New(context.Background(), telemetry.Options{Exporters: otlp.Exporters{GRPC: otlpgrpc.Exporters{}}, LookupEnv: telemetry.EnvOf(map[string]string{
		"OTEL_TRACES_EXPORTER":        "otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
		"OTEL_EXPORTER_OTLP_ENDPOINT": ln.Addr().String(),
		"OTEL_EXPORTER_OTLP_INSECURE": "true",
	})})
	if err != nil {
		t.Fatal(err)
	}
	runScenario(t, tel)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if !slices.Contains(svc.names, "invoke_agent demo") || !slices.Contains(svc.names, "execute_tool shell") {
		t.Errorf("gRPC collector got %v", svc.names)
	}
}

// OTLP over gRPC is a package of its own: without it the grpc protocol is
// an error that names the ways out, for traces and for metrics.
func TestOTLPGRPCNotLinked(t *testing.T) {
	for _, signal := range []string{"traces", "metrics"} {
		env := map[string]string{
			"OTEL_TRACES_EXPORTER":        "none",
			"OTEL_METRICS_EXPORTER":       "none",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4317",
		}
		env["OTEL_"+strings.ToUpper(signal)+"_EXPORTER"] = "otlp"
		_, err := telemetry.New(context.Background(), telemetry.Options{Exporters: otlp.Exporters{}, LookupEnv: telemetry.EnvOf(env)})
		if err == nil || !strings.Contains(err.Error(), "http/protobuf") || !strings.Contains(err.Error(), "otlpgrpc") || !strings.Contains(err.Error(), signal) {
			t.Errorf("%s over grpc without otlpgrpc: err = %v, want one naming http/protobuf and otlpgrpc", signal, err)
		}
	}
}

// syncBuilder is a strings.Builder safe for the exporter's goroutine.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// Without the otlp package, OTEL_* variables that turn export on leave
// each signal off (no exporter is dialled) and say why, once per signal.
func TestNoExportersLeavesSignalsOff(t *testing.T) {
	var logs syncBuilder
	tel, err := telemetry.New(context.Background(), telemetry.Options{
		LookupEnv: telemetry.EnvOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}),
		Logger:    newTextLogger(&logs),
	})
	if err != nil {
		t.Fatal(err)
	}
	if tel.Enabled() {
		t.Fatal("telemetry is on without exporters")
	}
	for _, sig := range []string{"signal=traces", "signal=metrics"} {
		if n := strings.Count(logs.String(), "links no OTLP exporter"); n != 2 || !strings.Contains(logs.String(), sig) {
			t.Errorf("want one warning per signal (%s), got %d: %q", sig, n, logs.String())
		}
	}
}
