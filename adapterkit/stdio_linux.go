package adapterkit

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// protectStdio moves the v1 protocol off fds 0 and 1 before anything is
// served: the protocol streams become private close-on-exec duplicates,
// fd 1 is pointed at stderr (so fmt.Println and any other stray write to
// stdout lands in the host's diagnostics, never in the protocol) and fd 0
// at /dev/null (so nothing but the host reads requests, and harness
// children do not inherit them). Pipes and sockets are switched to
// non-blocking mode so that closing them interrupts a blocked read when
// the host shuts down; terminals are left alone.
//
// The redirection stays in place after Serve returns: the process is
// expected to exit then.
func protectStdio() (io.Reader, io.Writer, error) {
	inFD, err := unix.FcntlInt(0, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, nil, fmt.Errorf("adapterkit: v1: duplicate stdin: %w", err)
	}
	outFD, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		unix.Close(inFD)
		return nil, nil, fmt.Errorf("adapterkit: v1: duplicate stdout: %w", err)
	}
	fail := func(what string, err error) (io.Reader, io.Writer, error) {
		// Put the protocol back where it was; the host cannot serve.
		_ = unix.Dup3(outFD, 1, 0)
		_ = unix.Dup3(inFD, 0, 0)
		unix.Close(inFD)
		unix.Close(outFD)
		return nil, nil, fmt.Errorf("adapterkit: v1: %s: %w", what, err)
	}
	if err := unix.Dup3(2, 1, 0); err != nil {
		// No stderr: send stray output nowhere rather than to the core.
		if err := redirectToDevNull(1, unix.O_WRONLY); err != nil {
			return fail("redirect stdout", err)
		}
	}
	if err := redirectToDevNull(0, unix.O_RDONLY); err != nil {
		return fail("redirect stdin", err)
	}
	makePollable(inFD)
	makePollable(outFD)
	return os.NewFile(uintptr(inFD), "fabric-protocol-in"), os.NewFile(uintptr(outFD), "fabric-protocol-out"), nil
}

func redirectToDevNull(fd, mode int) error {
	null, err := unix.Open("/dev/null", mode|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(null)
	return unix.Dup3(null, fd, 0)
}

// makePollable puts a pipe or socket in non-blocking mode, which makes
// os.NewFile register it with the runtime poller.
func makePollable(fd int) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO, unix.S_IFSOCK:
		_ = unix.SetNonblock(fd, true)
	}
}
