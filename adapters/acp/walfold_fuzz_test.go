package acp

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// walFrame is one frame of a handmade WAL.
type walFrame struct {
	pgno, commit uint32
	fill         byte
}

// makeWAL writes a big-endian WAL of pageSize pages holding frames, with
// valid salts and checksums.
func makeWAL(pageSize uint32, frames []walFrame) []byte {
	w := make([]byte, 32)
	binary.BigEndian.PutUint32(w[0:], 0x377f0683)
	binary.BigEndian.PutUint32(w[4:], 3007000)
	binary.BigEndian.PutUint32(w[8:], pageSize)
	copy(w[16:24], "saltsalt")
	s0, s1 := walChecksum(binary.BigEndian, 0, 0, w[:24])
	binary.BigEndian.PutUint32(w[24:], s0)
	binary.BigEndian.PutUint32(w[28:], s1)
	for _, fr := range frames {
		h := make([]byte, 24)
		binary.BigEndian.PutUint32(h[0:], fr.pgno)
		binary.BigEndian.PutUint32(h[4:], fr.commit)
		copy(h[8:16], "saltsalt")
		data := []byte(strings.Repeat(string(fr.fill), int(pageSize)))
		s0, s1 = walChecksum(binary.BigEndian, s0, s1, h[:8])
		s0, s1 = walChecksum(binary.BigEndian, s0, s1, data)
		binary.BigEndian.PutUint32(h[16:], s0)
		binary.BigEndian.PutUint32(h[20:], s1)
		w = append(append(w, h...), data...)
	}
	return w
}

// A WAL whose checksums hold but whose commit claims a database far
// larger than the database and the log together is refused, before
// anything is allocated for it (it asked for 2 TiB).
func TestFoldWALRefusesAnImpossibleSize(t *testing.T) {
	dir := t.TempDir()
	db, wal := filepath.Join(dir, "x.sqlite"), filepath.Join(dir, "x.sqlite-wal")
	orig := append([]byte("SQLite format 3\x00"), make([]byte, 512-16)...)
	if err := os.WriteFile(db, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	w := makeWAL(512, []walFrame{{pgno: 1, commit: 1<<32 - 1, fill: 'x'}})
	if err := os.WriteFile(wal, w, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := foldWAL(db, wal); err == nil {
		t.Fatal("foldWAL accepted a commit of 4 billion pages")
	}
	if b, _ := os.ReadFile(db); string(b) != string(orig) {
		t.Error("the database changed")
	}
	if _, err := os.Stat(wal); err != nil {
		t.Errorf("the WAL is gone: %v", err)
	}
}

// FuzzWALCommitted: any bytes read as a WAL never panic, and what is
// committed fits the log it came from.
func FuzzWALCommitted(f *testing.F) {
	f.Add(makeWAL(512, []walFrame{{1, 0, 'a'}, {2, 2, 'b'}, {3, 0, 'c'}}))
	f.Add(makeWAL(1024, []walFrame{{1, 1, 'a'}, {1, 1, 'b'}}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, w []byte) {
		pages, size, err := walCommitted(w)
		if err != nil {
			return
		}
		if size == 0 && len(pages) != 0 {
			t.Fatalf("%d pages with nothing committed", len(pages))
		}
		for pgno, data := range pages {
			if pgno == 0 || len(data) != int(binary.BigEndian.Uint32(w[8:12])) {
				t.Fatalf("page %d of %d bytes", pgno, len(data))
			}
		}
	})
}
