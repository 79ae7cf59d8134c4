package adaptertest

import (
	"net"
	"testing"

	"github.com/fabric-runtime/fabric/proc"
)

// FreePort returns a loopback port p that is free, with p+o free for each
// of offsets and p+span within 65535: for a harness that derives further
// ports from the one it is given (say, a browser-control port p+2 and a
// footprint of 111 ports). It fails the test when 50 tries find none.
func FreePort(t testing.TB, span int, offsets ...int) int {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if p+span > 65535 {
			continue
		}
		busy := false
		for _, o := range append([]int{0}, offsets...) {
			if in, _ := proc.PortInUse("", uint16(p+o)); in {
				busy = true
			}
		}
		if !busy {
			return p
		}
	}
	t.Fatal("no free port")
	return 0
}

// CheckListener checks that something listens on port, that every socket
// on it is held by one of pids (a harness's process group) and that each
// is bound to loopback only (S2). It returns the addresses, for the log.
func CheckListener(t testing.TB, port int, pids []int) []string {
	t.Helper()
	ls, err := proc.ListeningTCP("")
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, x := range ls {
		if int(x.Addr.Port()) != port {
			continue
		}
		if owners, _ := proc.SocketOwners("", x.Inode, pids); len(owners) == 0 {
			t.Errorf("port %d (%s) is not held by the harness's processes %v", port, x.Addr, pids)
		}
		if !x.Addr.Addr().Unmap().IsLoopback() {
			t.Errorf("the harness listens on %s, not loopback", x.Addr)
		}
		addrs = append(addrs, x.Addr.String())
	}
	if len(addrs) == 0 {
		t.Fatalf("nothing listens on port %d", port)
	}
	return addrs
}
