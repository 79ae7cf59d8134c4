//go:build unix

package testproc

import (
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Socketpair returns the two ends of a Unix stream socket: this process's
// as a net.Conn, and the child's as a file to pass in exec.Cmd.ExtraFiles
// (and to close here once the child has started).
func Socketpair(t testing.TB) (net.Conn, *os.File) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours := os.NewFile(uintptr(fds[0]), "ours")
	defer ours.Close()
	conn, err := net.FileConn(ours)
	if err != nil {
		t.Fatal(err)
	}
	return conn, os.NewFile(uintptr(fds[1]), "child")
}
