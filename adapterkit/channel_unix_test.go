//go:build unix

package adapterkit

import (
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// channelFile takes over a socket: the original descriptor is closed, the
// file is a close-on-exec duplicate in non-blocking mode, and it supports
// read deadlines (the v2 host's stopReading relies on them). A descriptor
// that is not a socket is refused, and closed too.
func TestChannelFile(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	c, err := channelFile(fds[1])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := unix.FcntlInt(uintptr(fds[1]), unix.F_GETFD, 0); err == nil {
		t.Errorf("the original descriptor %d is still open", fds[1])
	}
	f := c.(*os.File)
	if flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("the duplicate is not close-on-exec (flags %#x, %v)", flags, err)
	}
	if err := f.SetReadDeadline(time.Now()); err != nil {
		t.Fatalf("SetReadDeadline: %v", err)
	}
	if _, err := f.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read past the deadline = %v, want os.ErrDeadlineExceeded", err)
	}

	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	if c, err := channelFile(p[0]); err == nil {
		c.Close()
		t.Fatal("a pipe was taken for the channel socket")
	}
	if _, err := unix.FcntlInt(uintptr(p[0]), unix.F_GETFD, 0); err == nil {
		t.Errorf("the refused descriptor %d is still open", p[0])
	}
}
