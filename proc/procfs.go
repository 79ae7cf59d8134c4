package proc

import "github.com/fabric-runtime/fabric/internal/procfs"

// DefaultRoot is the procfs root used when a root argument is empty.
const DefaultRoot = string(procfs.Default)

// Listener is a TCP socket in the LISTEN state, as procfs reports it: Addr
// is the local address and port (an unspecified address listens on every
// address), Inode identifies the socket.
type Listener = procfs.Listener

// ListeningTCP returns the TCP sockets in the LISTEN state listed in
// <root>/net/tcp and <root>/net/tcp6 (root "" means DefaultRoot), IPv4 first.
// A missing tcp6 (IPv6 disabled) is not an error. For the real procfs these
// are the sockets of the caller's network namespace.
func ListeningTCP(root string) ([]Listener, error) { return procfs.FS(root).ListeningTCP() }

// PortInUse reports whether any TCP socket listens on port, on any address,
// according to <root>/net/tcp and tcp6.
func PortInUse(root string, port uint16) (bool, error) { return procfs.FS(root).PortInUse(port) }

// SocketOwners returns, in ascending order, the pids whose open file
// descriptors (<root>/<pid>/fd/*) include the socket with the given inode.
// With pids empty every process under root is scanned and processes that
// cannot be read (gone, or not ours) are skipped. With pids given, only those
// are scanned; a pid that has exited is skipped, and other read errors are
// returned when no owner was found.
func SocketOwners(root string, inode uint64, pids []int) ([]int, error) {
	return procfs.FS(root).SocketOwners(inode, pids)
}

// PortHolders returns, in ascending order, the pids of the processes under
// root that hold a TCP socket listening on port (any address); empty when
// nobody listens there. A listener whose holders cannot be seen (another
// user's process) is reported as pid 0.
func PortHolders(root string, port uint16) ([]int, error) { return procfs.FS(root).PortHolders(port) }
