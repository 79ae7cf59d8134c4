// Package testsupport is the one folder for test support: its
// subpackages are imported only by tests, test binaries and CI tools
// (cmd/fabric-testlog), never by the SDK, adapterkit or a shipped binary
// (internal/testsupport/deptest enforces it). This package itself holds
// nothing.
package testsupport
