package wire

import "io"

// TryWriter is a writer that can also write without blocking. A Conn whose
// writer is a TryWriter, or one NonblockingWriter can wrap (sockets and
// pipes in non-blocking mode), writes a frame directly from the goroutine
// that produced it when nothing else is queued or being written, instead of
// handing it to its writer goroutine. That saves a goroutine switch per
// frame; the order of frames and their atomicity are kept, and nothing
// that may block is done outside the writer goroutine.
type TryWriter interface {
	// TryWrite writes a prefix of p without blocking and returns its
	// length. A short count with a nil error means that the rest would
	// block (0 included: nothing could be written, or the writer declines
	// for now); the caller then writes the rest with an ordinary Write
	// before anything else. An error means the stream is broken.
	TryWrite(p []byte) (n int, err error)
}

// NonblockingWriter returns a TryWriter for w when w can be written without
// blocking: a socket or a pipe (net.Conn, *os.File) whose descriptor is in
// non-blocking mode. It returns nil otherwise. The TryWriter writes the same
// stream as w, so the two must not be used at once for different frames,
// and it is not safe for concurrent use.
func NonblockingWriter(w io.Writer) TryWriter {
	if w == nil {
		return nil
	}
	return nonblockingWriter(w)
}
