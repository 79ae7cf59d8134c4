// Package wire is the byte-level layer between Fabric's core and its adapter
// host processes: newline-delimited frames with a hard size limit
// (FrameReader, FrameWriter), the envelopes of the upstream local-host
// protocol v1 (V1Request, V1Response), and a symmetric JSON-RPC 2.0 peer
// (Conn) that carries protocol v2 (fabric.host/v2). PROTOCOL.md, next to
// this file, is the normative description of both protocols.
//
// The package knows frames, envelopes, ids and error codes; it does not know
// what start, invoke or stop mean. Those live in internal/host.
//
// What wire must never do:
//   - allocate without bound: a frame larger than the limit is rejected with
//     ErrFrameTooLarge after reading at most the limit plus one read buffer,
//     and every queue has a fixed capacity;
//   - block forever without a context: every blocking method takes a
//     context.Context, and Conn.Close or cancelling Run's context unblocks
//     everything a Conn started;
//   - leave a goroutine behind: Conn.Run joins every goroutine it starts
//     before it returns;
//   - interpret payloads beyond the envelope, or log them (they may carry
//     secrets).
package wire
