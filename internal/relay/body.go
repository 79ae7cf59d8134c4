package relay

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// ErrRecordTooLarge is returned by LineReader.Next for a record longer than
// the limit. The record has been skipped; the next call continues with the
// record after it.
var ErrRecordTooLarge = errors.New("relay: ATOF record exceeds the size limit")

// readBuffer is a LineReader's read buffer. It stays small because an
// idle upload keeps its LineReader for as long as Relay keeps the upload
// open (a session), one per streaming runtime; longer records are
// assembled in the line buffer.
const readBuffer = 4 << 10

// keepLine is the largest line buffer kept between records; a larger one
// (left by a large record) is released.
const keepLine = 64 << 10

// LineReader splits an NDJSON body into records of at most max bytes
// without ever holding more than max bytes plus one read buffer. Lines are
// separated by '\n'; surrounding whitespace (including '\r') is removed and
// blank lines are skipped. A final line without '\n' is a record too.
type LineReader struct {
	br   *bufio.Reader
	max  int
	line []byte
}

// NewLineReader returns a LineReader over r for records of at most limit
// bytes (limit < 1 means 1).
func NewLineReader(r io.Reader, limit int) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, readBuffer), max: max(limit, 1)}
}

// Next returns the next non-blank record, valid until the following call.
// At the end of the body it returns io.EOF. ErrRecordTooLarge reports a
// skipped record: a line longer than the limit, counted without its '\n'
// (the rest of it was discarded without being buffered). Any other error
// comes from the underlying reader; an incomplete last line before such an
// error is not a record.
func (lr *LineReader) Next() ([]byte, error) {
	for {
		if cap(lr.line) > keepLine {
			lr.line = nil
		}
		lr.line = lr.line[:0]
		tooLarge := false
		var err error
		for {
			var chunk []byte
			chunk, err = lr.br.ReadSlice('\n')
			if !tooLarge {
				if len(lr.line)+len(bytes.TrimSuffix(chunk, []byte{'\n'})) > lr.max {
					tooLarge = true
					lr.line = lr.line[:0]
				} else {
					lr.grow(len(chunk))
					lr.line = append(lr.line, chunk...)
				}
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if tooLarge {
			return nil, ErrRecordTooLarge
		}
		if rec := bytes.TrimSpace(lr.line); len(rec) > 0 {
			return rec, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// grow makes room for n more bytes without letting the buffer exceed a
// record plus its '\n'.
func (lr *LineReader) grow(n int) {
	need := len(lr.line) + n
	if need <= cap(lr.line) {
		return
	}
	size := min(max(2*cap(lr.line), need, 512), lr.max+1)
	buf := make([]byte, len(lr.line), size)
	copy(buf, lr.line)
	lr.line = buf
}
