//go:build !otlpgrpc

package clientopts

import "github.com/fabric-runtime/fabric/internal/telemetry"

func grpcExporters() telemetry.Exporters { return nil }
