package otlp

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
)

// The metrics SDK's data in OTLP's messages. (The trace exporter gets
// them from go.opentelemetry.io/otel/exporters/otlp/otlptrace; its metric
// counterparts are internal to the upstream exporters, which link gRPC
// through the OTLP collector packages.)

// resourceMetrics converts rm; a metric of an unknown aggregation or
// temporality is left out and named in the error.
func resourceMetrics(rm *metricdata.ResourceMetrics) (*metricspb.ResourceMetrics, error) {
	out := &metricspb.ResourceMetrics{}
	if rm.Resource != nil {
		out.Resource = &resourcepb.Resource{Attributes: keyValues(rm.Resource.Attributes())}
		out.SchemaUrl = rm.Resource.SchemaURL()
	}
	var errs []error
	for _, sm := range rm.ScopeMetrics {
		ms := make([]*metricspb.Metric, 0, len(sm.Metrics))
		for _, m := range sm.Metrics {
			pm, err := metric(m)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			ms = append(ms, pm)
		}
		out.ScopeMetrics = append(out.ScopeMetrics, &metricspb.ScopeMetrics{
			Scope: &commonpb.InstrumentationScope{
				Name: sm.Scope.Name, Version: sm.Scope.Version, Attributes: keyValues(sm.Scope.Attributes.ToSlice()),
			},
			SchemaUrl: sm.Scope.SchemaURL,
			Metrics:   ms,
		})
	}
	return out, errors.Join(errs...)
}

func metric(m metricdata.Metrics) (*metricspb.Metric, error) {
	out := &metricspb.Metric{Name: m.Name, Description: m.Description, Unit: m.Unit}
	var err error
	switch a := m.Data.(type) {
	case metricdata.Gauge[int64]:
		out.Data = &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: numberPoints(a.DataPoints)}}
	case metricdata.Gauge[float64]:
		out.Data = &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: numberPoints(a.DataPoints)}}
	case metricdata.Sum[int64]:
		out.Data, err = sum(a)
	case metricdata.Sum[float64]:
		out.Data, err = sum(a)
	case metricdata.Histogram[int64]:
		out.Data, err = histogram(a)
	case metricdata.Histogram[float64]:
		out.Data, err = histogram(a)
	case metricdata.ExponentialHistogram[int64]:
		out.Data, err = exponentialHistogram(a)
	case metricdata.ExponentialHistogram[float64]:
		out.Data, err = exponentialHistogram(a)
	case metricdata.Summary:
		out.Data = &metricspb.Metric_Summary{Summary: &metricspb.Summary{DataPoints: summaryPoints(a.DataPoints)}}
	default:
		err = fmt.Errorf("unknown aggregation %T", a)
	}
	if err != nil {
		return nil, fmt.Errorf("otlp: metric %q: %w", m.Name, err)
	}
	return out, nil
}

func temporality(t metricdata.Temporality) (metricspb.AggregationTemporality, error) {
	switch t {
	case metricdata.CumulativeTemporality:
		return metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE, nil
	case metricdata.DeltaTemporality:
		return metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA, nil
	}
	return 0, fmt.Errorf("unknown temporality %v", t)
}

func sum[N int64 | float64](s metricdata.Sum[N]) (*metricspb.Metric_Sum, error) {
	t, err := temporality(s.Temporality)
	if err != nil {
		return nil, err
	}
	return &metricspb.Metric_Sum{Sum: &metricspb.Sum{
		AggregationTemporality: t, IsMonotonic: s.IsMonotonic, DataPoints: numberPoints(s.DataPoints),
	}}, nil
}

func numberPoints[N int64 | float64](dps []metricdata.DataPoint[N]) []*metricspb.NumberDataPoint {
	out := make([]*metricspb.NumberDataPoint, 0, len(dps))
	for _, dp := range dps {
		p := &metricspb.NumberDataPoint{
			Attributes:        keyValues(dp.Attributes.ToSlice()),
			StartTimeUnixNano: unixNano(dp.StartTime),
			TimeUnixNano:      unixNano(dp.Time),
			Exemplars:         exemplars(dp.Exemplars),
		}
		switch v := any(dp.Value).(type) {
		case int64:
			p.Value = &metricspb.NumberDataPoint_AsInt{AsInt: v}
		case float64:
			p.Value = &metricspb.NumberDataPoint_AsDouble{AsDouble: v}
		}
		out = append(out, p)
	}
	return out
}

func histogram[N int64 | float64](h metricdata.Histogram[N]) (*metricspb.Metric_Histogram, error) {
	t, err := temporality(h.Temporality)
	if err != nil {
		return nil, err
	}
	dps := make([]*metricspb.HistogramDataPoint, 0, len(h.DataPoints))
	for _, dp := range h.DataPoints {
		s := float64(dp.Sum)
		dps = append(dps, &metricspb.HistogramDataPoint{
			Attributes:        keyValues(dp.Attributes.ToSlice()),
			StartTimeUnixNano: unixNano(dp.StartTime),
			TimeUnixNano:      unixNano(dp.Time),
			Count:             dp.Count,
			Sum:               &s,
			BucketCounts:      dp.BucketCounts,
			ExplicitBounds:    dp.Bounds,
			Exemplars:         exemplars(dp.Exemplars),
			Min:               extremum(dp.Min),
			Max:               extremum(dp.Max),
		})
	}
	return &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{AggregationTemporality: t, DataPoints: dps}}, nil
}

func exponentialHistogram[N int64 | float64](h metricdata.ExponentialHistogram[N]) (*metricspb.Metric_ExponentialHistogram, error) {
	t, err := temporality(h.Temporality)
	if err != nil {
		return nil, err
	}
	buckets := func(b metricdata.ExponentialBucket) *metricspb.ExponentialHistogramDataPoint_Buckets {
		return &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: b.Offset, BucketCounts: b.Counts}
	}
	dps := make([]*metricspb.ExponentialHistogramDataPoint, 0, len(h.DataPoints))
	for _, dp := range h.DataPoints {
		s := float64(dp.Sum)
		dps = append(dps, &metricspb.ExponentialHistogramDataPoint{
			Attributes:        keyValues(dp.Attributes.ToSlice()),
			StartTimeUnixNano: unixNano(dp.StartTime),
			TimeUnixNano:      unixNano(dp.Time),
			Count:             dp.Count,
			Sum:               &s,
			Scale:             dp.Scale,
			ZeroCount:         dp.ZeroCount,
			Positive:          buckets(dp.PositiveBucket),
			Negative:          buckets(dp.NegativeBucket),
			Exemplars:         exemplars(dp.Exemplars),
			Min:               extremum(dp.Min),
			Max:               extremum(dp.Max),
			ZeroThreshold:     dp.ZeroThreshold,
		})
	}
	return &metricspb.Metric_ExponentialHistogram{ExponentialHistogram: &metricspb.ExponentialHistogram{AggregationTemporality: t, DataPoints: dps}}, nil
}

func summaryPoints(dps []metricdata.SummaryDataPoint) []*metricspb.SummaryDataPoint {
	out := make([]*metricspb.SummaryDataPoint, 0, len(dps))
	for _, dp := range dps {
		qs := make([]*metricspb.SummaryDataPoint_ValueAtQuantile, 0, len(dp.QuantileValues))
		for _, q := range dp.QuantileValues {
			qs = append(qs, &metricspb.SummaryDataPoint_ValueAtQuantile{Quantile: q.Quantile, Value: q.Value})
		}
		out = append(out, &metricspb.SummaryDataPoint{
			Attributes:        keyValues(dp.Attributes.ToSlice()),
			StartTimeUnixNano: unixNano(dp.StartTime),
			TimeUnixNano:      unixNano(dp.Time),
			Count:             dp.Count,
			Sum:               dp.Sum,
			QuantileValues:    qs,
		})
	}
	return out
}

func exemplars[N int64 | float64](es []metricdata.Exemplar[N]) []*metricspb.Exemplar {
	if len(es) == 0 {
		return nil
	}
	out := make([]*metricspb.Exemplar, 0, len(es))
	for _, e := range es {
		p := &metricspb.Exemplar{
			FilteredAttributes: keyValues(e.FilteredAttributes),
			TimeUnixNano:       unixNano(e.Time),
			SpanId:             e.SpanID,
			TraceId:            e.TraceID,
		}
		switch v := any(e.Value).(type) {
		case int64:
			p.Value = &metricspb.Exemplar_AsInt{AsInt: v}
		case float64:
			p.Value = &metricspb.Exemplar_AsDouble{AsDouble: v}
		}
		out = append(out, p)
	}
	return out
}

func extremum[N int64 | float64](e metricdata.Extrema[N]) *float64 {
	v, ok := e.Value()
	if !ok {
		return nil
	}
	f := float64(v)
	return &f
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

func keyValues(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

func anyValue(v attribute.Value) *commonpb.AnyValue {
	array := func(n int, at func(int) *commonpb.AnyValue) *commonpb.AnyValue {
		vs := make([]*commonpb.AnyValue, n)
		for i := range vs {
			vs[i] = at(i)
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
	}
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	switch v.Type() {
	case attribute.EMPTY:
		return &commonpb.AnyValue{}
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING:
		return str(v.AsString())
	case attribute.BYTESLICE:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}}
	case attribute.BOOLSLICE:
		s := v.AsBoolSlice()
		return array(len(s), func(i int) *commonpb.AnyValue { return anyValue(attribute.BoolValue(s[i])) })
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		return array(len(s), func(i int) *commonpb.AnyValue { return anyValue(attribute.Int64Value(s[i])) })
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		return array(len(s), func(i int) *commonpb.AnyValue { return anyValue(attribute.Float64Value(s[i])) })
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		return array(len(s), func(i int) *commonpb.AnyValue { return str(s[i]) })
	case attribute.SLICE:
		s := v.AsSlice()
		return array(len(s), func(i int) *commonpb.AnyValue { return anyValue(s[i]) })
	case attribute.MAP:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: keyValues(v.AsMap())}}}
	}
	return str(v.Emit())
}
