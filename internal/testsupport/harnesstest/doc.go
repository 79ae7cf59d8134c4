// Package harnesstest holds what live tests of Fabric's own adapters
// repeat beyond the adaptertest rig: a rig whose client knows the bundled
// adapters, picking events of one kind, cancelling a turn once it is
// under way, checking what reached the model endpoint, running the
// conformance suite with this test binary as the bundled adapters' host.
// Only tests import it; it must never hold harness-specific knowledge.
package harnesstest
