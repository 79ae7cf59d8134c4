// Package conformancetest runs Fabric's adapter conformance suite against
// the OpenClaw adapter with the real OpenClaw from harnesses/ and a
// scripted model endpoint (../packages/nvidia.fabric.openclaw/conformance.profile.yaml). It is a package
// of its own so that its many Gateway starts get their own test binary
// and time limit, apart from the adapter's unit and live tests. It has no
// non-test code.
package conformancetest
