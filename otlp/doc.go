// Package otlp is the opt-in OTLP export of Fabric's telemetry. A client
// created with
//
//	fabric.New(fabric.WithOTLPExporters(otlp.Exporters{}))
//
// exports traces and metrics over HTTP to the collector the standard
// OTEL_* variables name, as Fabric's binaries do (docs/telemetry.md).
// Without it a program links no exporter or protobuf: it traces only
// through the providers it passes to fabric.WithTelemetryProviders.
// The grpc protocol needs package otlp/otlpgrpc as well (Exporters.GRPC),
// so that a program that exports over HTTP links no gRPC.
// It never sets the global providers and never reads the process
// environment but through the client's lookup.
package otlp
