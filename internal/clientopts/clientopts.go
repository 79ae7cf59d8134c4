// Package clientopts is the one home of the options the fabric binary
// (its commands, deployments and the supervisor) gives its SDK
// clients beyond what an SDK user gets by default: the bundled adapters
// and the OTLP exporters (opt-in packages of the SDK; OTLP over HTTP, and
// over gRPC only in a build with -tags otlpgrpc), harnesses found in
// installed runtime packages, and harness.package selection against the
// support catalog. fabric-agent-ctl takes the same: receipts are verified
// by internal/receipt, which does not link the conformance suite that
// writes them.
package clientopts

import (
	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/pkgselect"
	"github.com/fabric-runtime/fabric/otlp"
)

// Binary returns the options, reading settings through getenv
// (os.Getenv in a binary).
func Binary(getenv func(string) string) []fabric.Option {
	return []fabric.Option{
		fabric.WithBundledAdapters(bundled.Adapters()),
		fabric.WithOTLPExporters(OTLP()),
		fabric.WithInstalledPackages(""),
		fabric.WithPackageSelector(pkgselect.FromEnv(getenv)),
	}
}

// With is Binary(getenv) followed by more.
func With(getenv func(string) string, more ...fabric.Option) []fabric.Option {
	return append(Binary(getenv), more...)
}

// OTLP is the OTLP exporters of Fabric's binaries: over HTTP, and over
// gRPC when the binary is built with -tags otlpgrpc. gRPC is left out by
// default because every process that links it pays for its package
// initialization (about 1,000 allocations, a third of a command's), and
// the default protocol, http/protobuf, needs none of it.
func OTLP() otlp.Exporters { return otlp.Exporters{GRPC: grpcExporters()} }
