// Package fabric is the Go SDK of Fabric, the runtime layer for AI agent
// harnesses: one typed config (contract.FabricConfig) is planned against the
// selected adapter's descriptor, diagnosed, started as a runtime, driven with
// ordered invocations and stopped, with one normalized result per
// invocation.
//
// The package is a thin facade over the internal packages; it holds no
// global state. Importing it links no adapter and no telemetry exporter:
// a client opts into Fabric's bundled adapters with
// WithBundledAdapters(bundled.Adapters()) (package adapters/bundled) and
// into OTLP export configured by OTEL_* with WithOTLPExporters (package
// otlp); Fabric's binaries do both.
package fabric
