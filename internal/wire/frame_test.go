package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// readAll reads frames until an error and returns copies of them and the
// error.
func readAll(fr *FrameReader) ([]string, error) {
	var frames []string
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return frames, err
		}
		frames = append(frames, string(f))
	}
}

func TestFrameReader(t *testing.T) {
	big := strings.Repeat("x", 10_000)
	tests := []struct {
		name    string
		in      string
		max     int
		want    []string
		wantErr error
	}{
		{name: "empty stream", in: "", want: nil, wantErr: io.EOF},
		{name: "one frame", in: "{}\n", want: []string{"{}"}, wantErr: io.EOF},
		{name: "several frames", in: "a\nb\nc\n", want: []string{"a", "b", "c"}, wantErr: io.EOF},
		{name: "crlf stripped", in: "a\r\nb\r\n", want: []string{"a", "b"}, wantErr: io.EOF},
		{name: "only one cr stripped", in: "a\r\r\n", want: []string{"a\r"}, wantErr: io.EOF},
		{name: "inner cr kept", in: "a\rb\n", want: []string{"a\rb"}, wantErr: io.EOF},
		{name: "empty lines skipped", in: "\n\na\n\n\r\nb\n\n", want: []string{"a", "b"}, wantErr: io.EOF},
		{name: "blank lines skipped", in: "  \t\r\na\n \n", want: []string{"a"}, wantErr: io.EOF},
		{name: "leading space kept", in: " {}\n", want: []string{" {}"}, wantErr: io.EOF},
		{name: "final frame without newline", in: "a\nb", want: []string{"a", "b"}, wantErr: io.EOF},
		{name: "final cr without newline", in: "a\r", want: []string{"a"}, wantErr: io.EOF},
		{name: "exactly at limit", in: "12345\n", max: 5, want: []string{"12345"}, wantErr: io.EOF},
		{name: "at limit with crlf", in: "12345\r\n", max: 5, want: []string{"12345"}, wantErr: io.EOF},
		{name: "at limit unterminated", in: "12345", max: 5, want: []string{"12345"}, wantErr: io.EOF},
		{name: "one over limit", in: "123456\n", max: 5, wantErr: ErrFrameTooLarge},
		{name: "one over limit with cr", in: "123456\r\n", max: 5, wantErr: ErrFrameTooLarge},
		{name: "over limit unterminated", in: "123456", max: 5, wantErr: ErrFrameTooLarge},
		{name: "limit plus cr not at end", in: "12345\rx\n", max: 5, wantErr: ErrFrameTooLarge},
		{name: "good then too large", in: "ok\n1234567890\nok\n", max: 5, want: []string{"ok"}, wantErr: ErrFrameTooLarge},
		{name: "large frame grows buffer", in: big + "\n" + "b\n", want: []string{big, "b"}, wantErr: io.EOF},
		{name: "large frame at limit", in: big + "\n", max: len(big), want: []string{big}, wantErr: io.EOF},
		{name: "large frame over limit", in: big + "x\n", max: len(big), wantErr: ErrFrameTooLarge},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"onebyte":  iotest.OneByteReader,
		"halfread": iotest.HalfReader,
		"dataerr":  iotest.DataErrReader,
	}
	for _, tt := range tests {
		for rname, wrap := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				fr := NewFrameReader(wrap(strings.NewReader(tt.in)), tt.max)
				got, err := readAll(fr)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("frames (-want +got):\n%s", diff)
				}
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want %v", err, tt.wantErr)
				}
				// Errors are sticky.
				if _, err2 := fr.ReadFrame(); !errors.Is(err2, tt.wantErr) {
					t.Errorf("second err = %v, want %v", err2, tt.wantErr)
				}
			})
		}
	}
}

func TestFrameReaderDefaultMax(t *testing.T) {
	if got := NewFrameReader(strings.NewReader(""), 0).MaxFrame(); got != DefaultMaxFrame {
		t.Fatalf("MaxFrame() = %d, want %d", got, DefaultMaxFrame)
	}
}

func TestFrameReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	fr := NewFrameReader(io.MultiReader(strings.NewReader("a\npartial"), iotest.ErrReader(boom)), 0)
	got, err := readAll(fr)
	if diff := cmp.Diff([]string{"a"}, got); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestFrameReaderNoProgress(t *testing.T) {
	_, err := NewFrameReader(zeroReader{}, 0).ReadFrame()
	if !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}

// endless yields an unbounded line of 'x'.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestFrameReaderOversizedBoundedMemory feeds a line far larger than the
// limit and checks that memory and bytes consumed stay near the limit.
func TestFrameReaderOversizedBoundedMemory(t *testing.T) {
	const limit = 1 << 20
	src := &endless{}
	fr := NewFrameReader(src, limit)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := fr.ReadFrame()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want ErrFrameTooLarge", err)
	}
	if src.n > 2*limit {
		t.Errorf("read %d bytes for a %d byte limit", src.n, limit)
	}
	// Doubling growth allocates at most ~2x the final buffer in total.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 5*limit/2 {
		t.Errorf("allocated %d bytes for a %d byte limit", alloc, limit)
	}
	if len(fr.buf) > limit+2 {
		t.Errorf("buffer grew to %d, limit %d", len(fr.buf), limit)
	}
}

func TestFrameReaderShrinksAfterLargeFrame(t *testing.T) {
	big := strings.Repeat("y", 200_000)
	fr := NewFrameReader(strings.NewReader(big+"\nsmall\n"), 0)
	f, err := fr.ReadFrame()
	if err != nil || len(f) != len(big) {
		t.Fatalf("ReadFrame = %d bytes, %v", len(f), err)
	}
	f, err = fr.ReadFrame()
	if err != nil || string(f) != "small" {
		t.Fatalf("ReadFrame = %q, %v", f, err)
	}
	if len(fr.buf) > retainBuf {
		t.Errorf("buffer kept %d bytes after the large frame", len(fr.buf))
	}
}

// writeRecorder records every Write call separately.
type writeRecorder struct {
	mu     sync.Mutex
	writes []string
}

func (w *writeRecorder) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestFrameWriterConcurrent(t *testing.T) {
	rec := &writeRecorder{}
	fw := NewFrameWriter(rec, 0)
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				frame := fmt.Sprintf(`{"g":%d,"i":%d,"pad":%q}`, g, i, strings.Repeat("p", i*7))
				if err := fw.WriteFrame([]byte(frame)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(rec.writes) != writers*each {
		t.Fatalf("%d writes, want %d", len(rec.writes), writers*each)
	}
	next := make([]int, writers)
	for _, w := range rec.writes {
		if !strings.HasSuffix(w, "\n") || strings.Count(w, "\n") != 1 {
			t.Fatalf("write is not exactly one frame: %q", w)
		}
		var g, i int
		if _, err := fmt.Sscanf(w, `{"g":%d,"i":%d,`, &g, &i); err != nil {
			t.Fatalf("garbled frame %q: %v", w, err)
		}
		if want := fmt.Sprintf(`{"g":%d,"i":%d,"pad":%q}`+"\n", g, i, strings.Repeat("p", i*7)); w != want {
			t.Fatalf("frame %q, want %q", w, want)
		}
		if i != next[g] {
			t.Fatalf("writer %d: frame %d out of order, want %d", g, i, next[g])
		}
		next[g]++
	}
}

func TestFrameWriterRejects(t *testing.T) {
	tests := []struct {
		name    string
		frame   string
		wantErr error // nil: any error
	}{
		{name: "empty", frame: ""},
		{name: "newline", frame: "a\nb"},
		{name: "trailing newline", frame: "a\n"},
		{name: "trailing cr", frame: "a\r"},
		{name: "too large", frame: "123456", wantErr: ErrFrameTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := NewFrameWriter(&buf, 5).WriteFrame([]byte(tt.frame))
			if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if buf.Len() != 0 {
				t.Fatalf("wrote %q", buf.String())
			}
		})
	}
	var buf bytes.Buffer
	if err := NewFrameWriter(&buf, 5).WriteFrame([]byte("12345")); err != nil || buf.String() != "12345\n" {
		t.Fatalf("at limit: %q, %v", buf.String(), err)
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return len(p) / 2, errors.New("disk on fire")
}

func TestFrameWriterStickyError(t *testing.T) {
	w := &failWriter{}
	fw := NewFrameWriter(w, 0)
	if err := fw.WriteFrame([]byte("abc")); err == nil {
		t.Fatal("want error")
	}
	if err := fw.WriteFrame([]byte("abc")); err == nil {
		t.Fatal("want sticky error")
	}
	if w.n != 1 {
		t.Fatalf("%d writes after failure, want 1", w.n)
	}
}

func TestFrameRoundTrip(t *testing.T) {
	pr, pw := io.Pipe()
	fw := NewFrameWriter(pw, 64)
	want := []string{"a", `{"x":1}`, strings.Repeat("z", 64)}
	go func() {
		for _, f := range want {
			if err := fw.WriteFrame([]byte(f)); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.Close()
	}()
	got, err := readAll(NewFrameReader(pr, 64))
	if err != io.EOF {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
