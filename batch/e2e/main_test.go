// Package e2e drives fabric batch as a user does: the built fabric binary,
// one process a command, killed and interrupted for real.
package e2e

import (
	"testing"

	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

// bins holds the binaries TestMain built.
var bins string

func TestMain(m *testing.M) {
	testproc.MainWithBinaries(m, &bins, "./cmd/fabric", "./cmd/fabric-core", "./cmd/fabric-host")
}
