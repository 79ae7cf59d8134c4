// Package harnesstest holds what live tests of real harnesses repeat: start
// a runtime from a config document through a Fabric client, invoke with a
// deadline, pick events of one kind, cancel a turn once it is under way,
// check what reached the model endpoint, run the conformance suite.
// Only tests import it; it must never hold harness-specific knowledge.
package harnesstest
