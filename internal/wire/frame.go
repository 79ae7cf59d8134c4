package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// DefaultMaxFrame is the frame size limit used when none is configured:
// 16 MiB, not counting the line terminator.
const DefaultMaxFrame = 16 << 20

const (
	// initialReadBuf is the read buffer a FrameReader starts with. It stays
	// small because an idle connection keeps it for its whole life.
	initialReadBuf = 4 << 10
	// retainBuf is the largest buffer kept after the frame that needed it
	// has been consumed; larger ones are dropped so idle connections do not
	// pin memory.
	retainBuf = 64 << 10
	// maxEmptyReads bounds consecutive (0, nil) reads, as bufio does.
	maxEmptyReads = 100
)

// FrameReader reads newline-delimited frames. A frame is the bytes before a
// '\n', with one trailing '\r' removed. Lines that are empty or contain only
// spaces, tabs and '\r' are skipped. A final frame without a terminating
// newline is returned as a frame before io.EOF.
//
// The buffer grows with the frame being read and never beyond the limit plus
// two bytes, so an oversized frame is detected without being held in memory;
// after ErrFrameTooLarge every further call returns the same error.
//
// A FrameReader is not safe for concurrent use.
type FrameReader struct {
	r          io.Reader
	max        int
	buf        []byte
	start, end int   // unread bytes are buf[start:end]
	scanned    int   // buf[start:start+scanned] is known to hold no '\n'
	err        error // sticky read error of the underlying reader
	tooBig     error // sticky ErrFrameTooLarge error
	timeout    error // a read deadline that passed, returned once
}

// NewFrameReader returns a FrameReader on r with the given frame size limit
// (DefaultMaxFrame if maxFrame <= 0).
func NewFrameReader(r io.Reader, maxFrame int) *FrameReader {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	return &FrameReader{r: r, max: maxFrame}
}

// MaxFrame returns the frame size limit.
func (fr *FrameReader) MaxFrame() int { return fr.max }

// ReadFrame returns the next frame without its line terminator. The returned
// slice is only valid until the next call. At the end of the stream it
// returns io.EOF; a frame over the limit returns an error that wraps
// ErrFrameTooLarge; a read error from the underlying reader is returned as
// is. Errors are sticky, except one wrapping os.ErrDeadlineExceeded (a read
// deadline passed): it is returned once, what was read is kept, and the
// next call goes on reading.
func (fr *FrameReader) ReadFrame() ([]byte, error) {
	if fr.tooBig != nil {
		return nil, fr.tooBig
	}
	fr.shrink()
	for {
		line, err := fr.readLine()
		if err != nil {
			return nil, err
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(line) > fr.max {
			return nil, fr.tooLarge()
		}
		if !blank(line) {
			return line, nil
		}
	}
}

// readLine returns the next line without its '\n'; the line may still end
// in '\r'.
func (fr *FrameReader) readLine() ([]byte, error) {
	empty := 0
	for {
		if i := bytes.IndexByte(fr.buf[fr.start+fr.scanned:fr.end], '\n'); i >= 0 {
			j := fr.start + fr.scanned + i
			line := fr.buf[fr.start:j]
			fr.start, fr.scanned = j+1, 0
			return line, nil
		}
		fr.scanned = fr.end - fr.start
		// Content plus an optional '\r' may be max+1 bytes; one more byte
		// without a newline proves the frame is too large.
		if fr.scanned > fr.max+1 {
			return nil, fr.tooLarge()
		}
		if fr.err != nil {
			if fr.scanned > 0 && fr.err == io.EOF {
				line := fr.buf[fr.start:fr.end]
				fr.start, fr.scanned = fr.end, 0
				return line, nil
			}
			return nil, fr.err
		}
		n := fr.fill()
		if err := fr.timeout; err != nil {
			fr.timeout = nil
			return nil, err
		}
		if n == 0 && fr.err == nil {
			if empty++; empty >= maxEmptyReads {
				fr.err = io.ErrNoProgress
			}
		}
	}
}

// fill reads once into the free space of the buffer, making room first.
func (fr *FrameReader) fill() int {
	if fr.start > 0 {
		n := copy(fr.buf, fr.buf[fr.start:fr.end])
		fr.start, fr.end = 0, n
	}
	if fr.end == len(fr.buf) {
		// Double, but jump straight to the cap (enough to hold max+1 bytes
		// and see one more) rather than stop just short of it.
		limit := max(fr.max+2, initialReadBuf)
		size := max(2*len(fr.buf), initialReadBuf)
		if 2*size > limit {
			size = limit
		}
		if size <= len(fr.buf) { // cannot happen: readLine stops first
			fr.err = fr.tooLarge()
			return 0
		}
		nb := make([]byte, size)
		copy(nb, fr.buf[:fr.end])
		fr.buf = nb
	}
	n, err := fr.r.Read(fr.buf[fr.end:])
	if n < 0 || n > len(fr.buf)-fr.end {
		n, err = 0, errors.New("wire: reader returned invalid count")
	}
	fr.end += n
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded):
		fr.timeout = err
	default:
		fr.err = err
	}
	return n
}

// release drops the buffer when it holds no unread bytes, for a reader that
// may wait long for its next frame (a passive Conn between calls): an idle
// connection then pins no read buffer, and the next read allocates one.
func (fr *FrameReader) release() {
	if fr.start == fr.end {
		fr.buf, fr.start, fr.end, fr.scanned = nil, 0, 0, 0
	}
}

// shrink drops a buffer that grew for a large frame once that frame has been
// consumed, keeping any unread bytes.
func (fr *FrameReader) shrink() {
	if len(fr.buf) <= retainBuf {
		return
	}
	unread := fr.end - fr.start
	if unread > retainBuf {
		return
	}
	var nb []byte
	if unread > 0 {
		nb = make([]byte, max(initialReadBuf, unread))
		copy(nb, fr.buf[fr.start:fr.end])
	}
	fr.buf, fr.start, fr.end, fr.scanned = nb, 0, unread, 0
}

func (fr *FrameReader) tooLarge() error {
	if fr.tooBig == nil {
		fr.tooBig = fmt.Errorf("%w: frame exceeds the %d byte limit", ErrFrameTooLarge, fr.max)
	}
	return fr.tooBig
}

func blank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// FrameWriter writes newline-delimited frames. Each frame, with its '\n',
// goes to the underlying writer in a single Write call, so frames written
// from concurrent goroutines never interleave. After a failed write the
// stream may hold a partial frame, so every later call returns the same
// error.
//
// WriteFrame blocks while the underlying writer blocks and takes no context;
// callers that must be able to give up (Conn does) write from a goroutine
// of their own and close the writer to unblock it.
type FrameWriter struct {
	mu  sync.Mutex
	w   io.Writer
	max int
	buf []byte
	err error
}

// NewFrameWriter returns a FrameWriter on w with the given frame size limit
// (DefaultMaxFrame if maxFrame <= 0).
func NewFrameWriter(w io.Writer, maxFrame int) *FrameWriter {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	return &FrameWriter{w: w, max: maxFrame}
}

// WriteFrame writes frame followed by '\n'. The frame must be non-empty, at
// most the limit long (else the error wraps ErrFrameTooLarge), contain no
// '\n' and not end in '\r'; encoding/json output always qualifies.
func (fw *FrameWriter) WriteFrame(frame []byte) error {
	if err := checkFrame(frame, fw.max); err != nil {
		return err
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.err != nil {
		return fw.err
	}
	fw.buf = append(append(fw.buf[:0], frame...), '\n')
	n, err := fw.w.Write(fw.buf)
	if err == nil && n != len(fw.buf) {
		err = io.ErrShortWrite
	}
	if cap(fw.buf) > retainBuf {
		fw.buf = nil
	}
	if err != nil {
		fw.err = fmt.Errorf("wire: write frame: %w", err)
		return fw.err
	}
	return nil
}

func checkFrame(frame []byte, limit int) error {
	switch {
	case len(frame) == 0:
		return errors.New("wire: empty frame")
	case len(frame) > limit:
		return fmt.Errorf("%w: %d byte frame exceeds the %d byte limit", ErrFrameTooLarge, len(frame), limit)
	case bytes.IndexByte(frame, '\n') >= 0:
		return errors.New("wire: frame contains a newline")
	case frame[len(frame)-1] == '\r':
		return errors.New("wire: frame ends in a carriage return")
	}
	return nil
}
