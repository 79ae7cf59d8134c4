package harnessui

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"

	"github.com/fabric-runtime/fabric/proc"
)

// portFree reports, as an error, that something listens on port, on any
// address (S2). It reads procfs; where procfs has no socket table it tries
// to bind the loopback port instead.
func portFree(port int) error {
	inUse, err := proc.PortInUse("", uint16(port))
	if err != nil {
		if runtime.GOOS == "linux" {
			return err
		}
		l, lerr := net.Listen("tcp", net.JoinHostPort(Loopback, strconv.Itoa(port)))
		if lerr != nil {
			return lerr
		}
		l.Close()
		return nil
	}
	if inUse {
		return errors.New("a socket listens on it")
	}
	return nil
}

// portState is who holds an HTTP interface's port.
type portState int

const (
	portOwned       portState = iota // every listening socket on the port is the child's group's, on loopback
	portExited                       // the child has exited
	portUnbound                      // nothing listens on the port
	portForeign                      // a socket on the port belongs to another process
	portNotLoopback                  // the child listens on the port on a non-loopback address (A1)
)

// portState checks S2's condition after health from procfs: the child runs,
// and every socket listening on its port belongs to a process of its group.
// Outside Linux, where the ownership check does not apply (S2), a running
// child counts as owning its port.
func (c *child) portState() (portState, error) {
	if _, done := c.p.ExitState(); done {
		return portExited, nil
	}
	if runtime.GOOS != "linux" {
		return portOwned, nil
	}
	ls, err := proc.ListeningTCP("")
	if err != nil {
		return 0, err
	}
	pids, err := c.p.GroupPids()
	if err != nil {
		return 0, err
	}
	if len(pids) == 0 {
		return portExited, nil
	}
	st := portUnbound
	for _, l := range ls {
		if int(l.Addr.Port()) != c.Port {
			continue
		}
		owners, err := proc.SocketOwners("", l.Inode, pids)
		if err != nil {
			return 0, fmt.Errorf("owner of %s: %w", l.Addr, err)
		}
		if len(owners) == 0 {
			return portForeign, nil
		}
		if !l.Addr.Addr().Unmap().IsLoopback() {
			st = portNotLoopback
		} else if st == portUnbound {
			st = portOwned
		}
	}
	return st, nil
}
