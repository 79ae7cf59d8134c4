//go:build otlpgrpc

package clientopts

import (
	"github.com/fabric-runtime/fabric/internal/telemetry"
	"github.com/fabric-runtime/fabric/otlp/otlpgrpc"
)

func grpcExporters() telemetry.Exporters { return otlpgrpc.Exporters{} }
