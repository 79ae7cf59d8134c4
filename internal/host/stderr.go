package host

import (
	"io"
	"os"
	"strings"
	"sync"

	"github.com/fabric-runtime/fabric/contract"
)

// TailBytes is how much of the host's stderr is attached to errors.
const TailBytes = 16 << 10

// stderrLog is the host's stderr file; it hands out scrubbed tails.
type stderrLog struct {
	mu      sync.Mutex
	f       *os.File
	secrets []string
}

func openStderrLog(path string, secrets []string) (*stderrLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	var keep []string
	for _, s := range secrets {
		if len(s) >= 4 { // shorter values would redact ordinary text
			keep = append(keep, s)
		}
	}
	return &stderrLog{f: f, secrets: keep}, nil
}

// tail returns the last TailBytes of the log with secrets scrubbed. It reads
// a little more than the tail so that a secret cut at the window's start is
// still found.
func (l *stderrLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, err := os.Open(l.f.Name())
	if err != nil {
		return ""
	}
	defer r.Close()
	st, err := r.Stat()
	if err != nil {
		return ""
	}
	longest := 0
	for _, s := range l.secrets {
		longest = max(longest, len(s))
	}
	window := int64(TailBytes + longest)
	off := max(st.Size()-window, 0)
	buf, err := io.ReadAll(io.NewSectionReader(r, off, st.Size()-off))
	if err != nil {
		return ""
	}
	text := Scrub(string(buf), l.secrets)
	if len(text) > TailBytes {
		text = text[len(text)-TailBytes:]
	}
	return text
}

func (l *stderrLog) close() error { return l.f.Close() }

// Scrub replaces every occurrence of each secret in text.
func Scrub(text string, secrets []string) string {
	for _, s := range secrets {
		if s != "" {
			text = strings.ReplaceAll(text, s, contract.Redacted)
		}
	}
	return text
}
