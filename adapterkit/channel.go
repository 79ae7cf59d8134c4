package adapterkit

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"

	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// openChannel opens the v2 channel the core passed as fd 3 (or as the
// descriptor named by FABRIC_HOST_CHANNEL_FD). The descriptor is duplicated
// close-on-exec into a net.Conn and the original is closed, so the
// harness processes the adapter starts do not inherit the channel.
func openChannel() (io.Reader, io.Writer, error) {
	fd := hostproto.ChannelFD
	if s := os.Getenv(hostproto.EnvChannelFD); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 3 {
			return nil, nil, fmt.Errorf("adapterkit: %s=%q is not a descriptor number above 2", hostproto.EnvChannelFD, s)
		}
		fd = n
	}
	f := os.NewFile(uintptr(fd), "fabric-channel")
	c, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("adapterkit: no v2 channel on fd %d (the core passes a socket there): %w", fd, err)
	}
	return c, c, nil
}

// ProtocolWriterForTesting returns the raw protocol channel of the host
// that made ctx (the context Serve passes to Adapter.Start and to Session
// methods): the private stdout descriptor on v1, the fd 3 socket on v2, or
// the writer given to WithStreams. It returns nil for any other context.
//
// It is a fault-injection hook for conformance tests only: whatever is
// written goes to the core as is, outside the protocol's framing, and a
// write that is not a whole valid frame makes the core drop the host (that
// is the point, e.g. the scripted adapter's malformed_output mode). Write
// whole lines; never use it in a real adapter.
func ProtocolWriterForTesting(ctx context.Context) io.Writer {
	if h, ok := ctx.Value(hostKey{}).(*host); ok {
		return h.raw
	}
	return nil
}
