// Package otlp is the opt-in OTLP export of Fabric's telemetry. A client
// created with
//
//	fabric.New(fabric.WithOTLPExporters(otlp.Exporters{}))
//
// exports traces and metrics over HTTP to the collector the standard
// OTEL_* variables name, as Fabric's binaries do (docs/telemetry.md).
// Without it a program links no exporter: it traces only through the
// providers it passes to fabric.WithTelemetryProviders. With it, it links
// no protobuf either: the export requests are written by hand
// (encode.go), because OTLP's generated types register their descriptors
// at package initialization in every process that links them, which cost
// each run of a CLI command about 1 ms of CPU (bench/cli).
// The grpc protocol needs package otlp/otlpgrpc as well (Exporters.GRPC),
// so that a program that exports over HTTP links no gRPC.
// It never sets the global providers and never reads the process
// environment but through the client's lookup.
package otlp
