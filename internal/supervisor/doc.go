// Package supervisor is a deployment's long-lived owner (fabric serve):
// it owns the deployed agents' runtimes through agentctl's serve (so the
// serve lock, runtime journal, unclean-shutdown marker and the
// fabric-agent-ctl protocol are the same), runs the integration services
// attached agents need (shared MCP server processes, the brokered model
// proxy), applies restart policies, journals the desired state it was
// given (references only) and brings it back after its own restart.
//
// Credentials arrive over the 0600 control socket with each apply and
// live in memory only; {file} references are read by the supervisor
// itself. It never writes a credential value anywhere and never names a
// harness.
package supervisor
