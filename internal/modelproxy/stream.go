package modelproxy

import (
	"bytes"
	"io"
	"slices"

	"github.com/fabric-runtime/fabric/modelstub"
)

// maxUsageBytes bounds what the usage reader holds: one SSE event, or a
// body that is not streamed. A larger one is passed through uncounted.
const maxUsageBytes = 8 << 20

// minSecretLen is the shortest credential that is masked in responses;
// shorter ones would mangle ordinary text.
const minSecretLen = 8

// masker replaces every occurrence of its secrets in a byte stream with as
// many '*', so that lengths (and a Content-Length) stay right. It holds back
// only a tail that could start a secret.
type masker struct {
	secrets [][]byte // longest first
}

func newMasker(secrets ...string) *masker {
	m := &masker{}
	for _, s := range secrets {
		if len(s) >= minSecretLen {
			m.secrets = append(m.secrets, []byte(s))
		}
	}
	// Longest first, so that a secret holding another is masked whole.
	for i := 1; i < len(m.secrets); i++ {
		for j := i; j > 0 && len(m.secrets[j]) > len(m.secrets[j-1]); j-- {
			m.secrets[j], m.secrets[j-1] = m.secrets[j-1], m.secrets[j]
		}
	}
	return m
}

// mask masks buf in place and returns how many bytes at its end must wait
// for more input: those from the first place where the rest of buf could
// begin a secret. Only occurrences that begin before them are masked (an
// occurrence of a shorter secret could be the start of a longer one). With
// final set, buf is the end of the stream and nothing waits.
func (m *masker) mask(buf []byte, final bool) (hold int) {
	if !final {
		for _, s := range m.secrets {
			for n := min(len(s)-1, len(buf)); n > hold; n-- {
				if bytes.Equal(buf[len(buf)-n:], s[:n]) {
					hold = n
					break
				}
			}
		}
	}
	cut := len(buf) - hold
	for _, s := range m.secrets {
		for from := 0; from < cut; {
			i := bytes.Index(buf[from:], s)
			if i < 0 || from+i >= cut {
				break
			}
			for k := range s {
				buf[from+i+k] = '*'
			}
			from += i + len(s)
		}
	}
	return hold
}

// meter reads the token usage of a response as it passes: event by event
// for an SSE stream, the whole (bounded) body otherwise.
type meter struct {
	api   modelstub.API
	sse   bool
	limit int // 0 means maxUsageBytes
	usage modelstub.Usage
	found bool

	line     []byte // SSE: the current line
	lineOver bool   // the current line exceeded the bound
	afterCR  bool   // the last byte was '\r' (a following '\n' ends nothing)
	data     []byte // SSE: the current event's data
	dataOver bool   // the current event exceeded the bound
	hasData  bool

	body     []byte // not SSE
	bodyOver bool
}

func (m *meter) max() int {
	if m.limit > 0 {
		return m.limit
	}
	return maxUsageBytes
}

func (m *meter) write(b []byte) {
	if !m.sse {
		if !m.bodyOver && len(m.body)+len(b) > m.max() {
			m.bodyOver, m.body = true, nil
		}
		if !m.bodyOver {
			m.body = append(m.body, b...)
		}
		return
	}
	for len(b) > 0 {
		if m.afterCR && b[0] == '\n' {
			b = b[1:]
			m.afterCR = false
			continue
		}
		m.afterCR = false
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			m.addToLine(b)
			return
		}
		m.addToLine(b[:i])
		m.afterCR = b[i] == '\r'
		m.endLine()
		b = b[i+1:]
	}
}

func (m *meter) addToLine(b []byte) {
	if m.lineOver || len(m.line)+len(b) > m.max() {
		m.lineOver, m.line = true, m.line[:0]
		return
	}
	m.line = append(m.line, b...)
}

// endLine handles one complete SSE line: a data field, or the blank line
// that dispatches an event. Other fields do not carry usage.
func (m *meter) endLine() {
	line, over := m.line, m.lineOver
	m.line, m.lineOver = m.line[:0], false
	if len(line) == 0 && !over {
		m.dispatch()
		return
	}
	if over {
		m.dataOver = true
		return
	}
	v, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return
	}
	v, _ = bytes.CutPrefix(v, []byte(" "))
	if m.hasData {
		m.data = append(m.data, '\n')
	}
	m.hasData = true
	if len(m.data)+len(v) > m.max() {
		m.dataOver = true
		return
	}
	m.data = append(m.data, v...)
}

func (m *meter) dispatch() {
	if m.hasData && !m.dataOver {
		if u, ok := modelstub.EventUsage(m.api, m.data); ok {
			m.usage.Update(u)
			m.found = true
		}
	}
	m.data, m.hasData, m.dataOver = m.data[:0], false, false
}

// end reads what the response held once it is complete.
func (m *meter) end() {
	if m.sse {
		if len(m.line) > 0 {
			m.endLine()
		}
		m.dispatch()
		return
	}
	if !m.bodyOver {
		if u, ok := modelstub.BodyUsage(m.api, m.body); ok {
			m.usage, m.found = u, true
		}
	}
	m.body = nil
}

// responseBody is an upstream response body on its way to the client: the
// meter sees the bytes as they come, the client gets them masked.
type responseBody struct {
	src   io.ReadCloser
	mask  *masker
	meter *meter
	ended func() // called at io.EOF, before the last bytes are returned
	// buf holds what was read from src and not yet returned: buf[off:ready]
	// is masked and ready, buf[ready:] is held back.
	buf        []byte
	off, ready int
	eof        bool // src is done (io.EOF)
	err        error
}

func (b *responseBody) Read(p []byte) (int, error) {
	for b.off == b.ready {
		b.buf = b.buf[:copy(b.buf, b.buf[b.ready:])]
		b.off, b.ready = 0, 0
		if b.err != nil {
			return 0, b.err
		}
		b.fill()
	}
	n := copy(p, b.buf[b.off:b.ready])
	b.off += n
	return n, nil
}

// fill reads once from src and masks what is buffered.
func (b *responseBody) fill() {
	const chunk = 32 << 10
	start := len(b.buf)
	b.buf = slices.Grow(b.buf, chunk)
	n, err := b.src.Read(b.buf[start : start+chunk])
	b.buf = b.buf[:start+n]
	if n > 0 {
		b.meter.write(b.buf[start:])
	}
	if err != nil {
		b.err = err
		if err == io.EOF {
			b.eof = true
			b.meter.end()
			if b.ended != nil {
				b.ended()
			}
		}
	}
	b.ready = len(b.buf) - b.mask.mask(b.buf, b.err != nil)
}

func (b *responseBody) Close() error { return b.src.Close() }
