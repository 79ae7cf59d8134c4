// Package hostfault is fault injection into a Go adapter host's protocol
// channel, for the scripted adapter and the conformance tests it serves.
// It is internal so that no real adapter can reach it.
package hostfault

import (
	"context"
	"io"
)

// Key is the context key under which adapterkit keeps the host serving
// the context's calls.
type Key struct{}

// Writer returns the raw protocol channel of the host that made ctx (the
// context adapterkit passes to Adapter.Start and to Session methods): the
// private stdout descriptor on v1, the fd 3 socket on v2, or the writer
// given to adapterkit.WithStreams. It returns nil for any other context.
//
// Whatever is written goes to the core as is, outside the protocol's
// framing, and a write that is not a whole valid frame makes the core drop
// the host (the point of the scripted adapter's malformed_output mode).
// Write whole lines.
func Writer(ctx context.Context) io.Writer {
	if h, ok := ctx.Value(Key{}).(interface{ ProtocolWriter() io.Writer }); ok {
		return h.ProtocolWriter()
	}
	return nil
}
