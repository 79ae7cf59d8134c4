package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/fabric-runtime/fabric/internal/telemetry"
)

// capture is a collector that keeps each request's body (gunzipped) and
// content type, and answers with the statuses queued in answers (then 200).
type capture struct {
	mu      sync.Mutex
	bodies  [][]byte
	types   []string
	answers []int
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err == nil {
			body, _ = io.ReadAll(zr)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bodies = append(c.bodies, body)
	c.types = append(c.types, r.Header.Get("Content-Type"))
	if len(c.answers) > 0 {
		code := c.answers[0]
		c.answers = c.answers[1:]
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(code)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (c *capture) last(t *testing.T) ([]byte, string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bodies) == 0 {
		t.Fatal("the collector got no request")
	}
	return c.bodies[len(c.bodies)-1], c.types[len(c.types)-1]
}

func export(srv *httptest.Server, protocol string, gzip bool) telemetry.Export {
	return telemetry.Export{Protocol: protocol, Endpoint: srv.URL + "/v1/x", Timeout: 10 * time.Second, Gzip: gzip,
		Headers: map[string]string{"x-test": "1"}}
}

var res = resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0",
	attribute.String("service.name", "fabric-test"), attribute.StringSlice("list", []string{"a", "b"}),
	attribute.Int64Slice("ints", []int64{1, 2}), attribute.Float64Slice("floats", []float64{0.5}),
	attribute.BoolSlice("bools", []bool{true}), attribute.Bool("b", true), attribute.Float64("f", 1.5))

func spans() []sdktrace.ReadOnlySpan {
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{9, 9, 9, 9, 9, 9, 9, 9}, TraceFlags: trace.FlagsSampled})
	t0 := time.Unix(1700000000, 123)
	stubs := tracetest.SpanStubs{
		{
			Name:        "invoke_agent demo",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1, 1, 1, 1, 1, 1, 1, 1}, TraceFlags: trace.FlagsSampled}),
			Parent:      parent, SpanKind: trace.SpanKindClient, StartTime: t0, EndTime: t0.Add(time.Second),
			Attributes:           []attribute.KeyValue{attribute.Int64("gen_ai.usage.input_tokens", 250), attribute.String("k", "v")},
			Events:               []sdktrace.Event{{Name: "e", Time: t0, Attributes: []attribute.KeyValue{attribute.Bool("x", true)}}},
			Links:                []sdktrace.Link{{SpanContext: parent, Attributes: []attribute.KeyValue{attribute.String("l", "1")}}},
			Status:               sdktrace.Status{Code: codes.Error, Description: "boom"},
			Resource:             res,
			InstrumentationScope: instrumentation.Scope{Name: "fabric", Version: "1"},
			DroppedAttributes:    1,
			ChildSpanCount:       2,
		},
		{Name: "child", SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{2, 2, 2, 2, 2, 2, 2, 2}}),
			Parent: parent, StartTime: t0, EndTime: t0, Resource: res, InstrumentationScope: instrumentation.Scope{Name: "other"}},
	}
	return stubs.Snapshots()
}

// The trace exporter writes what the upstream OTLP/HTTP exporter writes,
// request for request, in protobuf (gzipped or not) and in JSON.
func TestSpansAsUpstream(t *testing.T) {
	for _, c := range []struct {
		protocol string
		gzip     bool
	}{{telemetry.ProtocolHTTPProtobuf, false}, {telemetry.ProtocolHTTPProtobuf, true}, {telemetry.ProtocolHTTPJSON, false}} {
		t.Run(c.protocol, func(t *testing.T) {
			ctx := context.Background()
			ours, theirs := &capture{}, &capture{}
			so, st := httptest.NewServer(ours), httptest.NewServer(theirs)
			defer so.Close()
			defer st.Close()

			exp, err := Exporters{}.SpanExporter(ctx, export(so, c.protocol, c.gzip))
			if err != nil {
				t.Fatal(err)
			}
			enc := otlptracehttp.EncodingProtobuf
			if c.protocol == telemetry.ProtocolHTTPJSON {
				enc = otlptracehttp.EncodingJSON
			}
			up, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(st.URL+"/v1/x"), otlptracehttp.WithInsecure(), otlptracehttp.WithEncoding(enc))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range []sdktrace.SpanExporter{exp, up} {
				if err := e.ExportSpans(ctx, spans()); err != nil {
					t.Fatal(err)
				}
				if err := e.Shutdown(ctx); err != nil {
					t.Fatal(err)
				}
			}
			got, gotType := ours.last(t)
			want, wantType := theirs.last(t)
			if gotType != wantType {
				t.Errorf("content type %q, upstream %q", gotType, wantType)
			}
			if c.protocol == telemetry.ProtocolHTTPJSON {
				var g, w any
				if err := json.Unmarshal(got, &g); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(want, &w); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(w, g); diff != "" {
					t.Errorf("JSON request differs from upstream's (-upstream +ours):\n%s", diff)
				}
				return
			}
			var g, w colltrace.ExportTraceServiceRequest
			if err := proto.Unmarshal(got, &g); err != nil {
				t.Fatal(err)
			}
			if err := proto.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if len(g.ResourceSpans) == 0 || !proto.Equal(&g, &w) {
				t.Errorf("request differs from upstream's:\nours:     %v\nupstream: %v", &g, &w)
			}
		})
	}
}

func metrics() *metricdata.ResourceMetrics {
	t0, t1 := time.Unix(1700000000, 0), time.Unix(1700000060, 5)
	attrs := attribute.NewSet(attribute.String("k", "v"), attribute.Int("n", 1))
	ex := []metricdata.Exemplar[float64]{{FilteredAttributes: []attribute.KeyValue{attribute.String("f", "1")}, Time: t1, Value: 2.5,
		SpanID: []byte{1, 2, 3, 4, 5, 6, 7, 8}, TraceID: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}}
	exInt := []metricdata.Exemplar[int64]{{Time: t1, Value: 3}}
	return &metricdata.ResourceMetrics{Resource: res, ScopeMetrics: []metricdata.ScopeMetrics{{
		Scope: instrumentation.Scope{Name: "fabric", Version: "1", SchemaURL: "https://x", Attributes: attribute.NewSet(attribute.String("s", "1"))},
		Metrics: []metricdata.Metrics{
			{Name: "gi", Unit: "1", Data: metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{{Attributes: attrs, Time: t1, Value: 4, Exemplars: exInt}}}},
			{Name: "gf", Data: metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{{Attributes: attrs, StartTime: t0, Time: t1, Value: 4.5}}}},
			{Name: "si", Description: "d", Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
				DataPoints: []metricdata.DataPoint[int64]{{Attributes: attrs, StartTime: t0, Time: t1, Value: 7}}}},
			{Name: "sf", Data: metricdata.Sum[float64]{Temporality: metricdata.DeltaTemporality,
				DataPoints: []metricdata.DataPoint[float64]{{StartTime: t0, Time: t1, Value: 1.25, Exemplars: ex}}}},
			{Name: "hf", Unit: "s", Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality,
				DataPoints: []metricdata.HistogramDataPoint[float64]{{Attributes: attrs, StartTime: t0, Time: t1, Count: 3, Bounds: []float64{1, 5},
					BucketCounts: []uint64{1, 1, 1}, Min: metricdata.NewExtrema(0.5), Max: metricdata.NewExtrema(9.0), Sum: 12, Exemplars: ex}}}},
			{Name: "hi", Data: metricdata.Histogram[int64]{Temporality: metricdata.DeltaTemporality,
				DataPoints: []metricdata.HistogramDataPoint[int64]{{StartTime: t0, Time: t1, Count: 1, Bounds: []float64{1}, BucketCounts: []uint64{0, 1}, Sum: 2}}}},
			{Name: "ef", Data: metricdata.ExponentialHistogram[float64]{Temporality: metricdata.CumulativeTemporality,
				DataPoints: []metricdata.ExponentialHistogramDataPoint[float64]{{Attributes: attrs, StartTime: t0, Time: t1, Count: 4, Sum: 3.5, Scale: 2,
					ZeroCount: 1, ZeroThreshold: 0.001, Min: metricdata.NewExtrema(0.0), Max: metricdata.NewExtrema(2.0),
					PositiveBucket: metricdata.ExponentialBucket{Offset: -1, Counts: []uint64{1, 2}}, NegativeBucket: metricdata.ExponentialBucket{Counts: []uint64{}}}}}},
			{Name: "ei", Data: metricdata.ExponentialHistogram[int64]{Temporality: metricdata.DeltaTemporality,
				DataPoints: []metricdata.ExponentialHistogramDataPoint[int64]{{StartTime: t0, Time: t1, Count: 1, Sum: 1, PositiveBucket: metricdata.ExponentialBucket{Counts: []uint64{1}}}}}},
			{Name: "sum", Data: metricdata.Summary{DataPoints: []metricdata.SummaryDataPoint{{Attributes: attrs, StartTime: t0, Time: t1, Count: 2, Sum: 3,
				QuantileValues: []metricdata.QuantileValue{{Quantile: 0.5, Value: 1}, {Quantile: 1, Value: 2}}}}}},
		},
	}}}
}

// The metric exporter writes what the upstream OTLP/HTTP exporter writes,
// for every aggregation the SDK has.
func TestMetricsAsUpstream(t *testing.T) {
	ctx := context.Background()
	ours, theirs := &capture{}, &capture{}
	so, st := httptest.NewServer(ours), httptest.NewServer(theirs)
	defer so.Close()
	defer st.Close()
	exp, err := Exporters{}.MetricExporter(ctx, export(so, telemetry.ProtocolHTTPProtobuf, true))
	if err != nil {
		t.Fatal(err)
	}
	up, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(st.URL+"/v1/x"), otlpmetrichttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Export(ctx, metrics()); err != nil {
		t.Fatal(err)
	}
	if err := up.Export(ctx, metrics()); err != nil {
		t.Fatal(err)
	}
	got, gotType := ours.last(t)
	want, wantType := theirs.last(t)
	if gotType != wantType {
		t.Errorf("content type %q, upstream %q", gotType, wantType)
	}
	var g, w collmetrics.ExportMetricsServiceRequest
	if err := proto.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if n := len(g.GetResourceMetrics()[0].GetScopeMetrics()[0].GetMetrics()); n != len(metrics().ScopeMetrics[0].Metrics) {
		t.Fatalf("%d metrics exported", n)
	}
	if !proto.Equal(&g, &w) {
		t.Errorf("request differs from upstream's:\nours:     %v\nupstream: %v", &g, &w)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := exp.Export(ctx, metrics()); err == nil {
		t.Error("Export after Shutdown succeeded")
	}
}

// 429, 502, 503 and 504 are retried (after Retry-After); another failure
// is not, and its error names the status.
func TestRetries(t *testing.T) {
	for _, c := range []struct {
		answers  []int
		requests int
		fails    string
	}{
		{[]int{http.StatusServiceUnavailable, http.StatusTooManyRequests}, 3, ""},
		{[]int{http.StatusBadGateway, http.StatusGatewayTimeout}, 3, ""},
		{[]int{http.StatusBadRequest}, 1, "400 Bad Request"},
	} {
		col := &capture{answers: c.answers}
		srv := httptest.NewServer(col)
		exp, err := Exporters{}.MetricExporter(context.Background(), export(srv, telemetry.ProtocolHTTPProtobuf, false))
		if err != nil {
			t.Fatal(err)
		}
		err = exp.Export(context.Background(), metrics())
		srv.Close()
		if c.fails == "" && err != nil || c.fails != "" && (err == nil || !strings.Contains(err.Error(), c.fails)) {
			t.Errorf("answers %v: err = %v, want %q", c.answers, err, c.fails)
		}
		if len(col.bodies) != c.requests {
			t.Errorf("answers %v: %d requests, want %d", c.answers, len(col.bodies), c.requests)
		}
	}
}

func TestBadEndpoint(t *testing.T) {
	for _, ep := range []string{"localhost:4318", "ftp://x/v1/traces", "http://"} {
		if _, err := (Exporters{}).SpanExporter(context.Background(), telemetry.Export{Endpoint: ep, Protocol: telemetry.ProtocolHTTPProtobuf}); err == nil {
			t.Errorf("endpoint %q accepted", ep)
		}
	}
}
