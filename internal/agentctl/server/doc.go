// Package server is fabric-agent-ctl serve: the long-lived owner of a
// sandbox's runtimes. It answers the agentctl control protocol on a 0600
// Unix socket (one request and one response per connection, served
// concurrently: check, status and stop never wait behind an invocation),
// keeps a journal of the runtimes it owns, and on shutdown stops them all
// and records in fabric.unclean whatever it could not confirm, which the
// next serve reports and clears once it has confirmed the cleanup.
//
// It must never signal a process it cannot prove is one of its own hosts
// (pid plus start time, same user), and never names a harness.
package server
