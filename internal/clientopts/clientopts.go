// Package clientopts is the one home of the options the fabric binary
// (its commands, deployments and the supervisor) gives its SDK
// clients beyond what an SDK user gets by default: the bundled adapters
// and the OTLP exporters (opt-in packages of the SDK), harnesses found in
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
		fabric.WithOTLPExporters(otlp.Exporters{}),
		fabric.WithInstalledPackages(""),
		fabric.WithPackageSelector(pkgselect.FromEnv(getenv)),
	}
}

// With is Binary(getenv) followed by more.
func With(getenv func(string) string, more ...fabric.Option) []fabric.Option {
	return append(Binary(getenv), more...)
}
