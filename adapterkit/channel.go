package adapterkit

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/fabric-runtime/fabric/internal/hostfault"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// openChannel opens the v2 channel the core passed as fd 3 (or as the
// descriptor named by FABRIC_HOST_CHANNEL_FD). The descriptor is duplicated
// close-on-exec (channelFile) and the original is closed, so the harness
// processes the adapter starts do not inherit the channel.
func openChannel() (io.Reader, io.Writer, error) {
	fd := hostproto.ChannelFD
	if s := os.Getenv(hostproto.EnvChannelFD); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 3 {
			return nil, nil, fmt.Errorf("adapterkit: %s=%q is not a descriptor number above 2", hostproto.EnvChannelFD, s)
		}
		fd = n
	}
	c, err := channelFile(fd)
	if err != nil {
		return nil, nil, fmt.Errorf("adapterkit: no v2 channel on fd %d (the core passes a socket there): %w", fd, err)
	}
	return c, c, nil
}

// hostKey is the context key of the host serving a call: the scripted
// adapter's fault injection finds the raw channel through it (hostfault).
type hostKey = hostfault.Key

// ProtocolWriter returns the raw protocol channel, for hostfault.Writer.
func (h *host) ProtocolWriter() io.Writer { return h.raw }
