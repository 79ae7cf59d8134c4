package wire

// tryWriter is a writer that can also write without blocking. A Conn whose
// writer nonblockingWriter can wrap (a socket or a pipe in non-blocking
// mode: net.Conn, *os.File) writes a frame directly from the goroutine that
// produced it when nothing else is queued or being written, instead of
// handing it to its writer goroutine. That saves a goroutine switch per
// frame; the order of frames and their atomicity are kept, and nothing
// that may block is done outside the writer goroutine.
type tryWriter interface {
	// TryWrite writes a prefix of p without blocking and returns its
	// length. A short count with a nil error means that the rest would
	// block (0 included); the caller then writes the rest with an ordinary
	// Write before anything else. An error means the stream is broken.
	TryWrite(p []byte) (n int, err error)
}
