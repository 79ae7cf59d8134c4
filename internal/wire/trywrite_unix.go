//go:build unix

package wire

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// rawTryWriter writes with one non-blocking write(2) on the descriptor of a
// syscall.Conn, under the descriptor's own write lock. It is not safe for
// concurrent use (a Conn calls it under its write lock).
type rawTryWriter struct {
	rc    syscall.RawConn
	write func(fd uintptr) bool // w.writeFD, bound once

	p   []byte
	n   int
	err error
}

// nonblockingWriter returns a tryWriter for w when w is a socket or a pipe
// whose descriptor is in non-blocking mode, and nil otherwise. It writes
// the same stream as w, so the two must not be used at once for different
// frames, and it is not safe for concurrent use.
func nonblockingWriter(w io.Writer) tryWriter {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	nonblock := false
	if err := rc.Control(func(fd uintptr) {
		flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nonblock = err == nil && flags&unix.O_NONBLOCK != 0
	}); err != nil || !nonblock {
		// A blocking descriptor would block the caller: no fast path.
		return nil
	}
	tw := &rawTryWriter{rc: rc}
	tw.write = tw.writeFD
	return tw
}

func (w *rawTryWriter) writeFD(fd uintptr) bool {
	for {
		w.n, w.err = unix.Write(int(fd), w.p)
		if w.err != unix.EINTR {
			return true // never wait for the descriptor to become writable
		}
	}
}

func (w *rawTryWriter) TryWrite(p []byte) (int, error) {
	w.p, w.n, w.err = p, 0, nil
	rerr := w.rc.Write(w.write)
	n, err := max(w.n, 0), w.err
	w.p, w.err = nil, nil
	switch {
	case rerr != nil: // closed
		return 0, rerr
	case err == unix.EAGAIN:
		return 0, nil
	case err != nil:
		return n, err
	}
	return n, nil
}
