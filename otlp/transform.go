package otlp

import (
	"errors"
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The SDK's spans and metrics as OTLP messages (opentelemetry-proto v1),
// converted as the upstream exporters convert them (the tests compare).

// traceRequest is the ExportTraceServiceRequest of spans, grouped by
// resource and then by instrumentation scope in the order first seen;
// ok is false when there is no span to send.
func traceRequest(json bool, spans []sdktrace.ReadOnlySpan) (body []byte, ok bool) {
	type scopeKey struct {
		r  attribute.Distinct
		is instrumentation.Scope
	}
	type group struct {
		res    *resource.Resource
		scopes []instrumentation.Scope
		spans  map[instrumentation.Scope][]sdktrace.ReadOnlySpan
	}
	var groups []*group
	byRes := map[attribute.Distinct]*group{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		k := scopeKey{s.Resource().Equivalent(), s.InstrumentationScope()}
		g := byRes[k.r]
		if g == nil {
			g = &group{res: s.Resource(), spans: map[instrumentation.Scope][]sdktrace.ReadOnlySpan{}}
			byRes[k.r] = g
			groups = append(groups, g)
		}
		if _, seen := g.spans[k.is]; !seen {
			g.scopes = append(g.scopes, k.is)
		}
		g.spans[k.is] = append(g.spans[k.is], s)
	}
	if len(groups) == 0 {
		return nil, false
	}
	return exportRequest(json, "resourceSpans", len(groups), func(i int, e *enc) {
		g := groups[i]
		if g.res != nil {
			e.message(1, "resource", func(e *enc) { keyValues(e, 1, "attributes", g.res.Attributes()) })
		}
		e.messages(2, "scopeSpans", len(g.scopes), func(i int, e *enc) {
			scope := g.scopes[i]
			if scope != (instrumentation.Scope{}) {
				e.message(1, "scope", func(e *enc) { instrumentationScope(e, scope) })
			}
			ss := g.spans[scope]
			e.messages(2, "spans", len(ss), func(i int, e *enc) { span(e, ss[i]) })
			e.string(3, "schemaUrl", scope.SchemaURL)
		})
		e.string(3, "schemaUrl", g.res.SchemaURL())
	}), true
}

func instrumentationScope(e *enc, s instrumentation.Scope) {
	e.string(1, "name", s.Name)
	e.string(2, "version", s.Version)
	keyValues(e, 3, "attributes", s.Attributes.ToSlice())
}

// OTLP's span flags: the lower 8 bits are the W3C trace flags.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

func span(e *enc, s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	e.id(1, "traceId", tid[:])
	e.id(2, "spanId", sid[:])
	e.string(3, "traceState", sc.TraceState().String())
	if psid := s.Parent().SpanID(); psid.IsValid() {
		e.id(4, "parentSpanId", psid[:])
	}
	e.string(5, "name", s.Name())
	kind := s.SpanKind() // OTLP's numbers are trace.SpanKind's
	if kind > trace.SpanKindConsumer {
		kind = trace.SpanKindUnspecified
	}
	e.uint32(6, "kind", uint32(kind))
	e.fixed64(7, "startTimeUnixNano", uint64(max(0, s.StartTime().UnixNano())))
	e.fixed64(8, "endTimeUnixNano", uint64(max(0, s.EndTime().UnixNano())))
	keyValues(e, 9, "attributes", s.Attributes())
	e.uint32(10, "droppedAttributesCount", clampUint32(s.DroppedAttributes()))
	events := s.Events()
	e.messages(11, "events", len(events), func(i int, e *enc) {
		ev := events[i]
		e.fixed64(1, "timeUnixNano", uint64(max(0, ev.Time.UnixNano())))
		e.string(2, "name", ev.Name)
		keyValues(e, 3, "attributes", ev.Attributes)
		e.uint32(4, "droppedAttributesCount", clampUint32(ev.DroppedAttributeCount))
	})
	e.uint32(12, "droppedEventsCount", clampUint32(s.DroppedEvents()))
	links := s.Links()
	e.messages(13, "links", len(links), func(i int, e *enc) {
		l := links[i]
		tid, sid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		e.id(1, "traceId", tid[:])
		e.id(2, "spanId", sid[:])
		keyValues(e, 4, "attributes", l.Attributes)
		e.uint32(5, "droppedAttributesCount", clampUint32(l.DroppedAttributeCount))
		e.fixed32(6, "flags", spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
	})
	e.uint32(14, "droppedLinksCount", clampUint32(s.DroppedLinks()))
	st := s.Status()
	e.message(15, "status", func(e *enc) {
		e.string(2, "message", st.Description)
		switch st.Code { // OTLP: unset 0, ok 1, error 2
		case codes.Ok:
			e.uint32(3, "code", 1)
		case codes.Error:
			e.uint32(3, "code", 2)
		}
	})
	e.fixed32(16, "flags", spanFlags(sc.TraceFlags(), s.Parent()))
}

func clampUint32(v int) uint32 {
	return uint32(min(max(v, 0), math.MaxUint32))
}

// metricsRequest is the ExportMetricsServiceRequest of rm; a metric of an
// unknown aggregation or temporality is left out and named in the error.
func metricsRequest(rm *metricdata.ResourceMetrics) ([]byte, error) {
	var errs []error
	body := exportRequest(false, "resourceMetrics", 1, func(_ int, e *enc) {
		if rm.Resource != nil {
			e.message(1, "resource", func(e *enc) { keyValues(e, 1, "attributes", rm.Resource.Attributes()) })
		}
		e.messages(2, "scopeMetrics", len(rm.ScopeMetrics), func(i int, e *enc) {
			sm := rm.ScopeMetrics[i]
			e.message(1, "scope", func(e *enc) { instrumentationScope(e, sm.Scope) })
			var ms [][]byte
			for _, m := range sm.Metrics {
				var err error
				b := e.sub(func(e *enc) { err = metric(e, m) })
				if err != nil {
					errs = append(errs, fmt.Errorf("otlp: metric %q: %w", m.Name, err))
					continue
				}
				ms = append(ms, b)
			}
			e.raws(2, "metrics", ms)
			e.string(3, "schemaUrl", sm.Scope.SchemaURL)
		})
		if rm.Resource != nil {
			e.string(3, "schemaUrl", rm.Resource.SchemaURL())
		}
	})
	return body, errors.Join(errs...)
}

func metric(e *enc, m metricdata.Metrics) error {
	e.string(1, "name", m.Name)
	e.string(2, "description", m.Description)
	e.string(3, "unit", m.Unit)
	var err error
	switch a := m.Data.(type) {
	case metricdata.Gauge[int64]:
		e.message(5, "gauge", func(e *enc) { numberPoints(e, a.DataPoints) })
	case metricdata.Gauge[float64]:
		e.message(5, "gauge", func(e *enc) { numberPoints(e, a.DataPoints) })
	case metricdata.Sum[int64]:
		err = sum(e, a)
	case metricdata.Sum[float64]:
		err = sum(e, a)
	case metricdata.Histogram[int64]:
		err = histogram(e, a)
	case metricdata.Histogram[float64]:
		err = histogram(e, a)
	case metricdata.ExponentialHistogram[int64]:
		err = exponentialHistogram(e, a)
	case metricdata.ExponentialHistogram[float64]:
		err = exponentialHistogram(e, a)
	case metricdata.Summary:
		e.message(11, "summary", func(e *enc) { summaryPoints(e, a.DataPoints) })
	default:
		err = fmt.Errorf("unknown aggregation %T", a)
	}
	return err
}

// temporality is OTLP's AggregationTemporality of t.
func temporality(t metricdata.Temporality) (uint32, error) {
	switch t {
	case metricdata.DeltaTemporality:
		return 1, nil
	case metricdata.CumulativeTemporality:
		return 2, nil
	}
	return 0, fmt.Errorf("unknown temporality %v", t)
}

// aggregation writes a Sum, Histogram or ExponentialHistogram as field
// num: n data points (each(i) writes the i-th), the temporality, and
// more fields if any.
func aggregation(e *enc, num int, name string, t metricdata.Temporality, n int, each func(int, *enc), more func(*enc)) error {
	tv, err := temporality(t)
	if err != nil {
		return err
	}
	e.message(num, name, func(e *enc) {
		e.messages(1, "dataPoints", n, each)
		e.uint32(2, "aggregationTemporality", tv)
		if more != nil {
			more(e)
		}
	})
	return nil
}

// pointTimes writes a data point's start and time (fields 2 and 3 of all).
func pointTimes(e *enc, start, t time.Time) {
	e.fixed64(2, "startTimeUnixNano", unixNano(start))
	e.fixed64(3, "timeUnixNano", unixNano(t))
}

func sum[N int64 | float64](e *enc, s metricdata.Sum[N]) error {
	return aggregation(e, 7, "sum", s.Temporality, len(s.DataPoints), numberPoint(s.DataPoints),
		func(e *enc) { e.bool(3, "isMonotonic", s.IsMonotonic) })
}

func numberPoints[N int64 | float64](e *enc, dps []metricdata.DataPoint[N]) {
	e.messages(1, "dataPoints", len(dps), numberPoint(dps))
}

func numberPoint[N int64 | float64](dps []metricdata.DataPoint[N]) func(int, *enc) {
	return func(i int, e *enc) {
		dp := dps[i]
		pointTimes(e, dp.StartTime, dp.Time)
		switch v := any(dp.Value).(type) {
		case int64:
			e.sfixed64Always(6, "asInt", v)
		case float64:
			e.doubleAlways(4, "asDouble", v)
		}
		exemplars(e, 5, dp.Exemplars)
		keyValues(e, 7, "attributes", dp.Attributes.ToSlice())
	}
}

func histogram[N int64 | float64](e *enc, h metricdata.Histogram[N]) error {
	return aggregation(e, 9, "histogram", h.Temporality, len(h.DataPoints), func(i int, e *enc) {
		dp := h.DataPoints[i]
		pointTimes(e, dp.StartTime, dp.Time)
		e.fixed64(4, "count", dp.Count)
		e.doubleAlways(5, "sum", float64(dp.Sum))
		e.packedFixed64(6, "bucketCounts", dp.BucketCounts)
		e.packedDouble(7, "explicitBounds", dp.Bounds)
		exemplars(e, 8, dp.Exemplars)
		keyValues(e, 9, "attributes", dp.Attributes.ToSlice())
		extremum(e, 11, "min", dp.Min)
		extremum(e, 12, "max", dp.Max)
	}, nil)
}

func exponentialHistogram[N int64 | float64](e *enc, h metricdata.ExponentialHistogram[N]) error {
	buckets := func(b metricdata.ExponentialBucket) func(*enc) {
		return func(e *enc) {
			e.sint32(1, "offset", b.Offset)
			e.packedUint64(2, "bucketCounts", b.Counts)
		}
	}
	return aggregation(e, 10, "exponentialHistogram", h.Temporality, len(h.DataPoints), func(i int, e *enc) {
		dp := h.DataPoints[i]
		keyValues(e, 1, "attributes", dp.Attributes.ToSlice())
		pointTimes(e, dp.StartTime, dp.Time)
		e.fixed64(4, "count", dp.Count)
		e.doubleAlways(5, "sum", float64(dp.Sum))
		e.sint32(6, "scale", dp.Scale)
		e.fixed64(7, "zeroCount", dp.ZeroCount)
		e.message(8, "positive", buckets(dp.PositiveBucket))
		e.message(9, "negative", buckets(dp.NegativeBucket))
		exemplars(e, 11, dp.Exemplars)
		extremum(e, 12, "min", dp.Min)
		extremum(e, 13, "max", dp.Max)
		e.double(14, "zeroThreshold", dp.ZeroThreshold)
	}, nil)
}

func summaryPoints(e *enc, dps []metricdata.SummaryDataPoint) {
	e.messages(1, "dataPoints", len(dps), func(i int, e *enc) {
		dp := dps[i]
		pointTimes(e, dp.StartTime, dp.Time)
		e.fixed64(4, "count", dp.Count)
		e.double(5, "sum", dp.Sum)
		e.messages(6, "quantileValues", len(dp.QuantileValues), func(i int, e *enc) {
			e.double(1, "quantile", dp.QuantileValues[i].Quantile)
			e.double(2, "value", dp.QuantileValues[i].Value)
		})
		keyValues(e, 7, "attributes", dp.Attributes.ToSlice())
	})
}

func exemplars[N int64 | float64](e *enc, num int, es []metricdata.Exemplar[N]) {
	e.messages(num, "exemplars", len(es), func(i int, e *enc) {
		x := es[i]
		e.fixed64(2, "timeUnixNano", unixNano(x.Time))
		switch v := any(x.Value).(type) {
		case int64:
			e.sfixed64Always(6, "asInt", v)
		case float64:
			e.doubleAlways(3, "asDouble", v)
		}
		e.id(4, "spanId", x.SpanID)
		e.id(5, "traceId", x.TraceID)
		keyValues(e, 7, "filteredAttributes", x.FilteredAttributes)
	})
}

func extremum[N int64 | float64](e *enc, num int, name string, x metricdata.Extrema[N]) {
	if v, ok := x.Value(); ok {
		e.doubleAlways(num, name, float64(v))
	}
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

// keyValues writes kvs as the repeated KeyValue field num.
func keyValues(e *enc, num int, name string, kvs []attribute.KeyValue) {
	e.messages(num, name, len(kvs), func(i int, e *enc) {
		e.string(1, "key", string(kvs[i].Key))
		e.message(2, "value", func(e *enc) { anyValue(e, kvs[i].Value) })
	})
}

// anyValue writes v's AnyValue fields; an attribute of no known type is
// the string "INVALID", as upstream writes it.
func anyValue(e *enc, v attribute.Value) {
	array := func(n int, at func(int) attribute.Value) {
		e.message(5, "arrayValue", func(e *enc) {
			e.messages(1, "values", n, func(i int, e *enc) { anyValue(e, at(i)) })
		})
	}
	switch v.Type() {
	case attribute.EMPTY:
	case attribute.BOOL:
		e.boolAlways(2, "boolValue", v.AsBool())
	case attribute.INT64:
		e.int64Always(3, "intValue", v.AsInt64())
	case attribute.FLOAT64:
		e.doubleAlways(4, "doubleValue", v.AsFloat64())
	case attribute.STRING:
		e.stringAlways(1, "stringValue", v.AsString())
	case attribute.BYTESLICE:
		e.bytesAlways(7, "bytesValue", v.AsByteSlice())
	case attribute.BOOLSLICE:
		s := v.AsBoolSlice()
		array(len(s), func(i int) attribute.Value { return attribute.BoolValue(s[i]) })
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		array(len(s), func(i int) attribute.Value { return attribute.Int64Value(s[i]) })
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		array(len(s), func(i int) attribute.Value { return attribute.Float64Value(s[i]) })
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		array(len(s), func(i int) attribute.Value { return attribute.StringValue(s[i]) })
	case attribute.SLICE:
		s := v.AsSlice()
		array(len(s), func(i int) attribute.Value { return s[i] })
	case attribute.MAP:
		m := v.AsMap()
		e.message(6, "kvlistValue", func(e *enc) { keyValues(e, 1, "values", m) })
	default:
		e.stringAlways(1, "stringValue", "INVALID")
	}
}
