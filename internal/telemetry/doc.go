// Package telemetry is Fabric's OpenTelemetry layer: spans for plan,
// runtime start and stop, each invocation and the tool calls and model
// requests an adapter reports, GenAI semantic-convention attributes,
// metrics for runtimes, invocations, durations, tokens and stream drops,
// and W3C trace context for adapter hosts (TRACEPARENT, TRACESTATE).
//
// Exporters are chosen by the standard OTEL_* environment variables, read
// through the lookup function the caller passes in, and built by the
// Exporters the caller passes (the opt-in package otlp, which alone links
// the exporters, gRPC and protobuf); with nothing configured every method
// is a no-op that allocates nothing. It is the only package of the module
// besides otlp that imports the OpenTelemetry SDK.
//
// It never sets the global OpenTelemetry providers or propagators, never
// reads the process environment behind the caller's back, and never copies
// a value into an attribute unless its key is on an allow-list: free-form
// event metadata, tool arguments and output, environment variables and
// headers stay out of every span and metric.
package telemetry
