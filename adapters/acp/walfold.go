package acp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// foldWAL does what an SQLite checkpoint does to a database whose last
// writer was killed, so that a seed holds one compact file per database
// instead of the file and its write-ahead log (the log of codex-acp's
// migrations is six times its database, and every agent that opens a
// copy would read it all back): the pages of db's WAL up to its last
// committed transaction are written into db, db is cut to that
// transaction's size, and the WAL is removed. Frames are taken only while
// their salts and cumulative checksums hold (the WAL format of
// sqlite.org/fileformat2.html); an uncommitted tail is dropped, as SQLite
// drops it. db is replaced by rename; on any error nothing is changed. A
// WAL with no committed frame is removed with nothing written.
func foldWAL(db, wal string) error {
	w, err := os.ReadFile(wal)
	if err != nil {
		return err
	}
	d, err := os.ReadFile(db)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(d, []byte("SQLite format 3\x00")) {
		return fmt.Errorf("%s is not an SQLite database", db)
	}
	pages, size, err := walCommitted(w)
	if err != nil {
		return fmt.Errorf("%s: %w", wal, err)
	}
	if size > 0 {
		pageSize := int64(binary.BigEndian.Uint32(w[8:12]))
		// Every page of the committed database is in db or in the log (a
		// page the database grows by is written to the log): a larger
		// size is a damaged log, refused before it is allocated.
		most := uint32(min(int64(len(d))/pageSize, int64(^uint32(0))))
		for pgno := range pages {
			most = max(most, pgno)
		}
		if size > most {
			return fmt.Errorf("%s: its last commit makes the database %d pages, but only %d exist", wal, size, most)
		}
		out := make([]byte, int64(size)*pageSize)
		copy(out, d)
		for pgno, data := range pages {
			if pgno <= size {
				copy(out[int64(pgno-1)*pageSize:], data)
			}
		}
		tmp := db + ".fold"
		if err := os.WriteFile(tmp, out, 0o600); err != nil {
			_ = os.Remove(tmp)
			return err
		}
		if err := os.Rename(tmp, db); err != nil {
			_ = os.Remove(tmp)
			return err
		}
	}
	return os.Remove(wal)
}

// walCommitted reads an SQLite WAL: the last version of each page written
// by committed transactions (page number -> content, sharing w) and the
// database's size in pages after the last commit (0: none committed).
func walCommitted(w []byte) (pages map[uint32][]byte, size uint32, err error) {
	const hdr, frameHdr = 32, 24
	if len(w) < hdr {
		return nil, 0, nil // an empty WAL: nothing was written
	}
	var order binary.ByteOrder
	switch binary.BigEndian.Uint32(w[0:4]) {
	case 0x377f0682:
		order = binary.LittleEndian
	case 0x377f0683:
		order = binary.BigEndian
	default:
		return nil, 0, errors.New("not a write-ahead log")
	}
	pageSize := binary.BigEndian.Uint32(w[8:12])
	if pageSize < 512 || pageSize > 65536 || pageSize&(pageSize-1) != 0 {
		return nil, 0, fmt.Errorf("page size %d", pageSize)
	}
	s0, s1 := walChecksum(order, 0, 0, w[:24])
	if s0 != binary.BigEndian.Uint32(w[24:28]) || s1 != binary.BigEndian.Uint32(w[28:32]) {
		return nil, 0, errors.New("header checksum")
	}
	salt := w[16:24]
	pages, pending := map[uint32][]byte{}, map[uint32][]byte{}
	for off := hdr; off+frameHdr+int(pageSize) <= len(w); off += frameHdr + int(pageSize) {
		f := w[off : off+frameHdr]
		data := w[off+frameHdr : off+frameHdr+int(pageSize)]
		if !bytes.Equal(f[8:16], salt) {
			break
		}
		s0, s1 = walChecksum(order, s0, s1, f[:8])
		s0, s1 = walChecksum(order, s0, s1, data)
		if s0 != binary.BigEndian.Uint32(f[16:20]) || s1 != binary.BigEndian.Uint32(f[20:24]) {
			break
		}
		pgno := binary.BigEndian.Uint32(f[0:4])
		if pgno == 0 {
			break
		}
		pending[pgno] = data
		if commit := binary.BigEndian.Uint32(f[4:8]); commit != 0 {
			for p, d := range pending {
				pages[p] = d
			}
			clear(pending)
			size = commit
		}
	}
	return pages, size, nil
}

// walChecksum continues SQLite's WAL checksum (s0, s1) over b, read as
// 32-bit words in order (len(b) is a multiple of 8).
func walChecksum(order binary.ByteOrder, s0, s1 uint32, b []byte) (uint32, uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}
