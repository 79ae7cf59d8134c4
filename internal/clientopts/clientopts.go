// Package clientopts is the one home of the options Fabric's binaries
// (fabric, fabric-agent-ctl, the deployment supervisor) give their SDK
// clients beyond what an SDK user gets by default: harnesses found in
// installed runtime packages, and harness.package selection against the
// support catalog.
package clientopts

import (
	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/internal/pkgselect"
)

// Binary returns the options, reading settings through getenv
// (os.Getenv in a binary).
func Binary(getenv func(string) string) []fabric.Option {
	return []fabric.Option{
		fabric.WithInstalledPackages(""),
		fabric.WithPackageSelector(pkgselect.FromEnv(getenv)),
	}
}

// With is Binary(getenv) followed by more.
func With(getenv func(string) string, more ...fabric.Option) []fabric.Option {
	return append(Binary(getenv), more...)
}
