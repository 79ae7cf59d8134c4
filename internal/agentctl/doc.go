// Package agentctl is the control protocol of fabric-agent-ctl: the request
// and response envelopes exchanged over serve's Unix socket (one JSON line
// each way per connection), their strict decoder, the stable error codes,
// the documents only this protocol carries (status, the fabric.unclean
// marker) and the typed client the CLI uses.
//
// The server lives in agentctl/server and the cobra commands in
// agentctl/cli; docs/agent-ctl.md is the reference for operators. This
// package never starts runtimes and never names a harness.
package agentctl
