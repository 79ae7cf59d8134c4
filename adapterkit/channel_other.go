//go:build !unix

package adapterkit

import (
	"io"
	"net"
	"os"
)

// channelFile makes the socket at fd a net.Conn on a duplicate and closes
// fd (see channel_unix.go).
func channelFile(fd int) (io.ReadWriteCloser, error) {
	f := os.NewFile(uintptr(fd), "fabric-channel")
	c, err := net.FileConn(f)
	_ = f.Close()
	return c, err
}
