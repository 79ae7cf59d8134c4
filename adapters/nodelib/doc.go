// Package nodelib holds the bundled descriptors of the library harnesses
// whose adapter host is a small Node program of ours: LangChain Deep Agents
// JS (nvidia.fabric.deepagents, host fabric-deepagents-host) and Strands
// Agents TS (nvidia.fabric.strands, host fabric-strands-host). The hosts
// live in harnesses/deepagents/host and harnesses/strands/host, on the
// shared kit harnesses/hostkit (fabric-node-host), and speak fabric.host/v2
// themselves: the core starts them like any third-party host, so there is
// no Go code of these adapters at run time, only their descriptors,
// conformance profiles and tests.
//
// The package must never hold harness behaviour that the core would have
// to know about: everything harness-specific is in the descriptors, the
// profiles and the Node hosts.
package nodelib
