// Package host launches one adapter host process per runtime and speaks the
// local-host protocol to it: v1 (upstream-compatible newline-delimited JSON
// on the host's stdin/stdout, strictly ordered) or v2 (JSON-RPC 2.0 on a
// dedicated socket at fd 3, with events, cancel and health while a turn
// runs).
//
// Every host runs in its own process group; nothing it started survives
// Terminate. A host that exits, closes its channel, answers garbage or
// misses a deadline is reported with a stable code (host_crashed,
// host_timeout, protocol_error, host_io) and must not be used again.
// Diagnostics attached to errors are the last 16 KiB of the host's stderr
// with every secret value scrubbed. The package never retries, respawns or
// replays anything.
package host
