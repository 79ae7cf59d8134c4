// Package scripted is the bundled deterministic adapter (id
// fabric.scripted): responses come from its settings, with modes for every
// failure the conformance suite needs (start failure, invoke failure,
// malformed output, hang, crash mid-invoke, slow stream of N events).
//
// It is a test and benchmark instrument, never a stand-in for a harness.
package scripted
