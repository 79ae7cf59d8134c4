package testlog

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// tokenLen is the length of an interface token: 256 bits in lower-case hex
// (adapterkit/harnessui).
const tokenLen = 64

// Ledger is the set of token values a run generated.
type Ledger struct {
	index map[string]int // token -> 1-based position in the ledger
}

// ReadLedger reads the tokens recorded at path, one per line. Lines that are
// not a token are ignored.
func ReadLedger(path string) (*Ledger, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read token ledger: %w", err)
	}
	l := &Ledger{index: map[string]int{}}
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == tokenLen && isHex(line) {
			if _, dup := l.index[string(line)]; !dup {
				l.index[string(line)] = len(l.index) + 1
			}
		}
	}
	return l, nil
}

// Len is the number of distinct tokens in the ledger.
func (l *Ledger) Len() int { return len(l.index) }

// Hit is one occurrence of a ledger token: where, and which token by its
// position in the ledger (never its value).
type Hit struct {
	Path  string
	Line  int
	Token int
}

func (h Hit) String() string {
	return fmt.Sprintf("%s:%d: token #%d of the ledger", h.Path, h.Line, h.Token)
}

// ScanReport says what a scan covered and found.
type ScanReport struct {
	Files int
	Bytes int64
	Hits  []Hit
}

// Scan looks for every ledger token in the files at paths (directories are
// walked). Every run of hex digits is checked at each offset, so a token
// is found inside longer hex text too.
func (l *Ledger) Scan(paths ...string) (ScanReport, error) {
	var rep ScanReport
	for _, root := range paths {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			return l.scanFile(path, &rep)
		})
		if err != nil {
			return rep, fmt.Errorf("scan %s: %w", root, err)
		}
	}
	return rep, nil
}

func (l *Ledger) scanFile(path string, rep *ScanReport) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rep.Files++
	r := bufio.NewReaderSize(f, 1<<20)
	line := 0
	for {
		b, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull { // a very long line: keep it whole
			long := append([]byte(nil), b...)
			for err == bufio.ErrBufferFull {
				b, err = r.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		if len(b) > 0 {
			line++
			rep.Bytes += int64(len(b))
			for _, n := range l.find(b) {
				rep.Hits = append(rep.Hits, Hit{Path: path, Line: line, Token: n})
			}
		}
		if err != nil {
			return nil // io.EOF, or a read error: what was read was scanned
		}
	}
}

// find returns the ledger positions of the tokens in b.
func (l *Ledger) find(b []byte) []int {
	var out []int
	for i := 0; i < len(b); {
		if !hexDigit(b[i]) {
			i++
			continue
		}
		j := i
		for j < len(b) && hexDigit(b[j]) {
			j++
		}
		for k := i; k+tokenLen <= j; k++ {
			if n, ok := l.index[string(b[k:k+tokenLen])]; ok {
				out = append(out, n)
			}
		}
		i = j
	}
	return out
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !hexDigit(c) {
			return false
		}
	}
	return true
}

func hexDigit(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }
