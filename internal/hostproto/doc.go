// Package hostproto holds the message types of the local-host protocol
// shared by the core (internal/host) and the Go host side (adapterkit):
// the v1 operation payloads, which upstream NeMo Fabric hosts understand,
// and the v2 JSON-RPC methods and notifications (see
// internal/wire/PROTOCOL.md).
//
// Types, constants and the rules a run result must meet (result.go): no
// I/O, no processes.
package hostproto
